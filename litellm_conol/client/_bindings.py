"""Where session bindings live: this process's memory, or Redis shared by every worker and instance.

A binding maps the digest of a history to the conol session that holds it. Keys are hashes (of the
account's scope and the canonical history), values are the session id and its settings: neither the
token nor any conversation text is stored. ``take`` removes the binding as it reads it (Redis
``GETDEL``), so two concurrent requests for the same history never both continue one session: the
second finds nothing and starts its own. Redis settings are LiteLLM's router's: the deployment's
``redis_url`` / ``redis_host``…, else ``REDIS_URL``, else ``REDIS_HOST`` / ``REDIS_PORT`` /
``REDIS_PASSWORD``. When Redis fails, reuse carries on in memory (answers never depend on it).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Any, Protocol

from ..core import Binding, ReuseOptions

log = logging.getLogger("litellm_conol.reuse")

KEY_PREFIX = "litellm-conol:reuse:"
REDIS_RETRY_AFTER = 30.0  # seconds a failed Redis is left alone before it is tried again
REDIS_TIMEOUT = 0.5  # seconds per Redis call: a slow Redis must not slow every turn


class BindingStore(Protocol):
    async def take(self, key: str) -> Binding | None: ...

    async def put(self, key: str, binding: Binding, ttl: float) -> None: ...


class MemoryBindings:
    """Bindings in this process: at most ``cap`` (least recently stored dropped first), each until
    its TTL passes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._items: OrderedDict[str, tuple[float, str]] = OrderedDict()

    async def take(self, key: str) -> Binding | None:
        item = self._items.pop(key, None)
        if item is None or item[0] < time.monotonic():
            return None
        return Binding.from_json(item[1])

    async def put(self, key: str, binding: Binding, ttl: float) -> None:
        self._items.pop(key, None)
        self._items[key] = (time.monotonic() + ttl, binding.to_json())
        while len(self._items) > self.cap:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class RedisBindings:
    """Bindings in Redis, with ``fallback`` (memory) while Redis is unreachable."""

    def __init__(self, url: str, fallback: MemoryBindings) -> None:
        self.url = url
        self.fallback = fallback
        self._client: Any = None
        self._down_until = 0.0

    def _redis(self) -> Any:
        if self._client is None:
            import redis.asyncio  # optional: only a deployment that names Redis needs it

            self._client = redis.asyncio.Redis.from_url(
                self.url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
            )
        return self._client

    def _usable(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, exc: BaseException) -> None:
        # the URL may hold a password: the log names the failure, never the settings
        log.warning("session reuse: Redis failed (%s); using memory for %.0f s", type(exc).__name__, 30)
        self._down_until = time.monotonic() + REDIS_RETRY_AFTER
        self._client = None

    async def take(self, key: str) -> Binding | None:
        if self._usable():
            try:
                raw = await self._redis().getdel(KEY_PREFIX + key)
            except Exception as exc:
                self._failed(exc)
            else:
                return Binding.from_json(raw) if raw is not None else await self.fallback.take(key)
        return await self.fallback.take(key)

    async def put(self, key: str, binding: Binding, ttl: float) -> None:
        if self._usable():
            try:
                await self._redis().set(KEY_PREFIX + key, binding.to_json(), ex=max(1, int(ttl)))
                return
            except Exception as exc:
                self._failed(exc)
        await self.fallback.put(key, binding, ttl)


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


class UpstreamMemory:
    """What this process learnt about each upstream (a scope digest): follow-ups refused until when,
    and per model whether create honours ``agentModel`` (``model_pinning: auto``)."""

    def __init__(self) -> None:
        self._refused_until: dict[str, float] = {}
        self._create_honours: dict[tuple[str, str], bool] = {}

    def refused(self, scope: str) -> bool:
        return self._refused_until.get(scope, 0.0) > time.monotonic()

    def refuse(self, scope: str, seconds: float) -> None:
        self._refused_until[scope] = time.monotonic() + seconds

    def create_honours(self, scope: str, model: str) -> bool | None:
        return self._create_honours.get((scope, model))

    def learn(self, scope: str, model: str, honours: bool) -> None:
        self._create_honours[(scope, model)] = honours

    def clear(self) -> None:
        self._refused_until.clear()
        self._create_honours.clear()


upstream_memory = UpstreamMemory()


def clear_stores() -> None:
    """Forget every binding and what was learnt (tests; a process starting over)."""
    _stores.clear()
    upstream_memory.clear()
