"""Where session bindings live: this process's memory, or Redis shared by every worker and instance.

A binding maps the digest of a history to the conol session that holds it. Keys are hashes (of the
account's scope and the canonical history), values the binding as JSON (``Binding.to_json``: the
session id and its settings): neither the token nor any conversation text is stored.

Reading is in two steps, so a binding is consumed only by the request that continues it: ``peek``
reads it, the request decides (the model may have changed: then it starts a new session and the
binding stays for the history's next request), and only to continue does it ``take`` it, which
removes the binding only if it is still the one peeked (atomic in Redis: a Lua script). Two
concurrent requests for the same history never both continue one session: the second's take fails
and it starts its own. Redis settings are LiteLLM's router's (``core/config/reuse_options.py``);
storage and its fallback to memory: ``shared_state``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Protocol

from ..client.assets import asset_cache
from ..core.config.reuse_options import ReuseOptions
from .fingerprint import BINDING_FORMAT, Binding
from .shared_state import MemoryState, RedisState, SharedState, clear_shared_state, shared_state

# The binding format's version in every key (``reuse.fingerprint.BINDING_FORMAT``, which a change to what
# Binding's JSON means changes): during a rolling upgrade old and new workers read different keys.
BINDING_KIND = f"reuse:v{BINDING_FORMAT}"
KEY_PREFIX = f"litellm-conol:{BINDING_KIND}:"


class BindingStore(Protocol):
    async def peek(self, key: str) -> Binding | None:
        """The binding stored under ``key``, left in place."""
        ...

    async def take(self, key: str, expected: Binding) -> Binding | None:
        """Remove and return the binding under ``key`` if it is still ``expected`` (what ``peek``
        returned); ``None`` when another request took or replaced it meanwhile."""
        ...

    async def put(self, key: str, binding: Binding, ttl: float) -> None: ...


class StateBindings:
    """Bindings in a :class:`SharedState`, as JSON."""

    def __init__(self, state: SharedState) -> None:
        self.state = state

    async def peek(self, key: str) -> Binding | None:
        raw = await self.state.get(key)
        return Binding.from_json(raw) if raw is not None else None  # unreadable: no binding

    async def take(self, key: str, expected: Binding) -> Binding | None:
        stored = expected.raw or expected.to_json()  # the value peeked, as it was stored
        return expected if await self.state.take(key, stored) else None

    async def put(self, key: str, binding: Binding, ttl: float) -> None:
        await self.state.put(key, binding.to_json(), ttl)


class MemoryBindings(StateBindings):
    """Bindings in this process: at most ``cap`` (least recently stored dropped first), each until
    its TTL passes."""

    def __init__(self, cap: int) -> None:
        self.memory = MemoryState(cap)
        super().__init__(self.memory)

    def __len__(self) -> int:
        return len(self.memory)


class RedisBindings(StateBindings):
    """Bindings in Redis, with ``fallback`` (memory) while Redis is unreachable."""

    def __init__(self, url: str, fallback: MemoryBindings) -> None:
        super().__init__(RedisState(url, KEY_PREFIX, fallback.memory))


_stores: dict[tuple[str | None, int], BindingStore] = {}


def binding_store(options: ReuseOptions) -> BindingStore:
    """The store for these options: one per Redis URL (or memory) and cap, shared by the process."""
    url = options.redis_url
    key = (url, options.cap)
    store = _stores.get(key)
    if store is None:
        memory = MemoryBindings(options.cap)
        store = _stores[key] = RedisBindings(url, memory) if url else memory
    return store


# --- what was learnt about each upstream --------------------------------------------------------------

UPSTREAM_KIND = "upstream:v1"
UPSTREAM_CAP = 10_000
LEARNT_TTL = 86400.0  # seconds a learnt create-honours-the-model answer is shared: conol may change


class UpstreamMemory:
    """What was learnt about each upstream (a scope digest): follow-ups refused until when, follow-up
    streams unverified until when and why (docs/session-reuse.md#fail-safe), and per model whether
    create honours ``agentModel`` (``model_pinning: auto``).

    Reads are from this process's view, which :meth:`refresh` brings up to date from the shared
    state before a request decides; what a request learns is written to the view at once and to the
    shared state in the background (:meth:`flush` awaits it). So with Redis every worker and
    instance learns what one found, and the fleet pays for a refusal once.
    """

    def __init__(self) -> None:
        self._refused_until: dict[str, float] = {}
        self._unverified: dict[str, tuple[float, str]] = {}  # scope → (until, why)
        self._create_honours: dict[tuple[str, str], bool] = {}
        self._urls: dict[str, str | None] = {}  # scope → the Redis its decisions are shared on
        self._writes: set[asyncio.Task[None]] = set()

    def refused(self, scope: str) -> bool:
        return self._refused_until.get(scope, 0.0) > time.monotonic()

    def refuse(self, scope: str, seconds: float) -> None:
        self._refused_until[scope] = time.monotonic() + seconds
        self._share(scope, _refused_key(scope), json.dumps(time.time() + seconds), seconds)

    def unverified(self, scope: str) -> str | None:
        """Why follow-ups on ``scope`` cannot be read safely now (its stream did not show a posted
        turn where this client reads it), or ``None``."""
        until, why = self._unverified.get(scope, (0.0, ""))
        return why if until > time.monotonic() else None

    def distrust(self, scope: str, why: str, seconds: float) -> None:
        self._unverified[scope] = (time.monotonic() + seconds, why)
        value = json.dumps({"until": time.time() + seconds, "why": why})
        self._share(scope, _unverified_key(scope), value, seconds)

    def create_honours(self, scope: str, model: str) -> bool | None:
        return self._create_honours.get((scope, model))

    def learn(self, scope: str, model: str, honours: bool) -> None:
        self._create_honours[(scope, model)] = honours
        self._share(scope, _honours_key(scope, model), json.dumps(honours), LEARNT_TTL)

    async def refresh(self, scope: str, model: str, url: str | None) -> None:
        """Take what the fleet learnt about ``scope`` (and ``model`` on it) into this view; ``url``:
        where it is shared (None: nowhere, this process only)."""
        self._urls[scope] = url
        if url is None:
            return
        state = shared_state(url, UPSTREAM_KIND, UPSTREAM_CAP)
        keys = [_refused_key(scope), _honours_key(scope, model), _unverified_key(scope)]
        refused, honours, unverified = await state.get_many(keys)
        until = _loads(refused)
        if isinstance(until, float | int):
            self._refused_until[scope] = max(
                self._refused_until.get(scope, 0.0), time.monotonic() + until - time.time()
            )
        self._learn_unverified(scope, _loads(unverified))
        learnt = _loads(honours)
        if isinstance(learnt, bool):
            self._create_honours[(scope, model)] = learnt

    def _learn_unverified(self, scope: str, shared: object) -> None:
        if not isinstance(shared, dict):
            return
        until, why = shared.get("until"), shared.get("why")
        if isinstance(until, float | int) and isinstance(why, str):
            local = time.monotonic() + until - time.time()
            if local > self._unverified.get(scope, (0.0, ""))[0]:
                self._unverified[scope] = (local, why)

    def _share(self, scope: str, key: str, value: str, ttl: float) -> None:
        url = self._urls.get(scope)
        if url is None or ttl <= 0:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop, no request: nothing to share
        state = shared_state(url, UPSTREAM_KIND, UPSTREAM_CAP)
        task = loop.create_task(state.put(key, value, ttl))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def flush(self) -> None:
        """Until what this loop's requests learnt is written to the shared state."""
        loop = asyncio.get_running_loop()
        mine = [task for task in self._writes if task.get_loop() is loop]
        if mine:
            await asyncio.gather(*mine, return_exceptions=True)

    def clear(self) -> None:
        self._refused_until.clear()
        self._unverified.clear()
        self._create_honours.clear()
        self._urls.clear()


def _refused_key(scope: str) -> str:
    return f"refused:{scope}"


def _unverified_key(scope: str) -> str:
    return f"unverified:{scope}"


def _honours_key(scope: str, model: str) -> str:
    return f"create-honours:{scope}:{model}"


def _loads(raw: str | None) -> object:
    try:
        return json.loads(raw) if raw is not None else None
    except ValueError:
        return None  # another version's value: nothing learnt


upstream_memory = UpstreamMemory()


def clear_stores() -> None:
    """Forget every binding, uploaded image and what was learnt (tests; a process starting over):
    a new fake on a port an earlier one used must not be handed that one's asset ids."""
    _stores.clear()
    upstream_memory.clear()
    clear_shared_state()
    asset_cache.clear()
