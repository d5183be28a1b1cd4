"""Small state shared by every worker and instance: Redis when the deployment names one, else this
process's memory (docs/session-reuse.md#redis-bindings-shared-by-every-worker-and-instance).

Session bindings (``store``), what was learnt about each upstream (``UpstreamMemory``) and the
memory of recent failures (``reuse.failure_guard``) are small JSON values with a TTL, each kind
under its own versioned key prefix (``litellm-conol:reuse:v3:…``): a worker of another version reads
other keys, never a value it would misread.

Every Redis command used exists since Redis 2.6 (``GET``, ``SETEX``, ``DEL``, ``MGET``, ``EVALSHA``):
the conditional take and the claim are Lua scripts, atomic on the server, so no ``GETDEL`` (6.2) nor
``SET … NX EX`` (2.6.12) is needed. A ``redis.asyncio`` client belongs to the event loop it was made
on, so there is one per URL and loop (the SDK's sync calls run on their own loop), closed when its
loop shuts down or when it fails. When Redis fails, this process's memory answers for
``REDIS_RETRY_AFTER`` seconds, then Redis is tried again: answers never depend on Redis. The URL holds
the password: it is never logged, nor put in an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..client.pool import close_with_loop, forget_closer

log = logging.getLogger("litellm_conol.reuse")

KEY_ROOT = "litellm-conol:"
REDIS_RETRY_AFTER = 30.0  # seconds a failed Redis is left alone before it is tried again
REDIS_TIMEOUT = 0.5  # seconds per Redis call: a slow Redis must not slow every turn

# Removes KEYS[1] only while it still holds ARGV[1]: a take that cannot remove what another request
# stored or took in between (docs/session-reuse.md#two-requests-for-one-history).
TAKE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""
# Stores ARGV[1] for ARGV[2] seconds when KEYS[1] is free; returns what KEYS[1] holds afterwards.
CLAIM = """
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SETEX', KEYS[1], ARGV[2], ARGV[1])
return ARGV[1]
"""


class SharedState(Protocol):
    """Small string values under keys, each with a TTL in seconds."""

    async def get(self, key: str) -> str | None: ...

    async def get_many(self, keys: Sequence[str]) -> list[str | None]: ...

    async def put(self, key: str, value: str, ttl: float) -> None: ...

    async def claim(self, key: str, value: str, ttl: float) -> str:
        """Store ``value`` if ``key`` is free; what ``key`` holds afterwards (``value``: claimed)."""
        ...

    async def take(self, key: str, expected: str) -> bool:
        """Remove ``key`` if it holds ``expected``; whether it did."""
        ...

    async def delete(self, key: str) -> None: ...


class MemoryState:
    """This process's values: at most ``cap`` (least recently stored dropped first), each until its
    TTL passes. Thread-safe: the SDK's sync calls run on a loop of their own thread."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._items: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def _live(self, key: str) -> str | None:
        item = self._items.get(key)
        if item is not None and item[0] < time.monotonic():
            del self._items[key]
            return None
        return item[1] if item is not None else None

    def _store(self, key: str, value: str, ttl: float) -> None:
        self._items.pop(key, None)
        self._items[key] = (time.monotonic() + ttl, value)
        while len(self._items) > self.cap:
            self._items.popitem(last=False)

    async def get(self, key: str) -> str | None:
        with self._lock:
            return self._live(key)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        with self._lock:
            return [self._live(key) for key in keys]

    async def put(self, key: str, value: str, ttl: float) -> None:
        with self._lock:
            self._store(key, value, ttl)

    async def claim(self, key: str, value: str, ttl: float) -> str:
        with self._lock:
            held = self._live(key)
            if held is not None:
                return held
            self._store(key, value, ttl)
            return value

    async def take(self, key: str, expected: str) -> bool:
        with self._lock:
            if self._live(key) != expected:
                return False
            del self._items[key]
            return True

    async def delete(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class _Connection:
    """One loop's client for one URL, with its scripts."""

    client: Any
    take: Any
    claim: Any


_connections: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Connection]] = (
    weakref.WeakKeyDictionary()
)
_down_until: dict[str, float] = {}  # per URL: when a failed Redis is tried again


def _connection(url: str) -> _Connection:
    """The running loop's client for ``url`` (created on first use, closed with the loop)."""
    loop = asyncio.get_running_loop()
    per_loop = _connections.setdefault(loop, {})
    connection = per_loop.get(url)
    if connection is None:
        import redis.asyncio  # optional: only a deployment that names Redis needs it

        client = redis.asyncio.Redis.from_url(
            url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        connection = _Connection(client, client.register_script(TAKE_IF_EQUAL), client.register_script(CLAIM))
        per_loop[url] = connection
        close_with_loop(client)
    return connection


async def _discard(url: str, connection: _Connection) -> None:
    """Close a client that failed (its connections may be half-open): the next call makes a new one."""
    per_loop = _connections.get(asyncio.get_running_loop(), {})
    if per_loop.get(url) is connection:
        del per_loop[url]
    forget_closer(connection.client)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(connection.client.aclose(), REDIS_TIMEOUT)


async def close_redis_clients() -> None:
    """Close the running loop's Redis clients (a shutdown; tests)."""
    for url, connection in list(_connections.get(asyncio.get_running_loop(), {}).items()):
        await _discard(url, connection)


def redis_clients_open() -> int:
    """How many Redis clients the running loop holds (tests)."""
    return len(_connections.get(asyncio.get_running_loop(), {}))


def _text(raw: Any) -> str | None:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else raw  # never a crash: no value


class RedisState:
    """Values in Redis under ``prefix``, with ``fallback`` (this process's memory) while Redis fails.
    A value stored in memory while Redis was down is still found once Redis is back."""

    def __init__(self, url: str, prefix: str, fallback: MemoryState) -> None:
        self.url = url
        self.prefix = prefix
        self.fallback = fallback

    def __repr__(self) -> str:
        return f"RedisState(prefix={self.prefix!r})"  # the URL holds the password

    async def _call(self, command: str, *args: Any) -> tuple[bool, Any]:
        """``(True, result)`` from Redis, or ``(False, None)`` when Redis is down or just failed."""
        if _down_until.get(self.url, 0.0) > time.monotonic():
            return False, None
        connection = _connection(self.url)
        try:
            if command in ("take", "claim"):
                script = getattr(connection, command)
                return True, await script(keys=args[:1], args=args[1:], client=connection.client)
            return True, await getattr(connection.client, command)(*args)
        except Exception as exc:
            # the URL may hold a password: the log names the failure, never the settings
            log.warning(
                "litellm-conol: Redis failed (%s); this process's memory answers for %.0f s",
                type(exc).__name__,
                REDIS_RETRY_AFTER,
            )
            _down_until[self.url] = time.monotonic() + REDIS_RETRY_AFTER
            await _discard(self.url, connection)
            return False, None

    async def get(self, key: str) -> str | None:
        ok, raw = await self._call("get", self.prefix + key)
        value = _text(raw) if ok else None
        return value if value is not None else await self.fallback.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        ok, raw = await self._call("mget", [self.prefix + key for key in keys])
        found = [_text(value) for value in raw] if ok else [None] * len(keys)
        remembered = await self.fallback.get_many(keys)
        return [value if value is not None else mine for value, mine in zip(found, remembered, strict=True)]

    async def put(self, key: str, value: str, ttl: float) -> None:
        ok, _ = await self._call("setex", self.prefix + key, _seconds(ttl), value)
        if not ok:
            await self.fallback.put(key, value, ttl)

    async def claim(self, key: str, value: str, ttl: float) -> str:
        ok, held = await self._call("claim", self.prefix + key, value, _seconds(ttl))
        return str(_text(held)) if ok else await self.fallback.claim(key, value, ttl)

    async def take(self, key: str, expected: str) -> bool:
        ok, taken = await self._call("take", self.prefix + key, expected)
        return bool(taken) if ok and taken else await self.fallback.take(key, expected)

    async def delete(self, key: str) -> None:
        await self._call("delete", self.prefix + key)
        await self.fallback.delete(key)


def _seconds(ttl: float) -> int:
    """Redis expiry in whole seconds (``SETEX``), at least one."""
    return max(1, math.ceil(ttl))


_states: dict[tuple[str | None, str, int], SharedState] = {}


def shared_state(url: str | None, kind: str, cap: int) -> SharedState:
    """The state of one ``kind`` (a versioned name: ``reuse:v3``) for a Redis URL, or memory only
    (``url`` None); one per process, its memory holding at most ``cap`` values."""
    key = (url, kind, cap)
    state = _states.get(key)
    if state is None:
        memory = MemoryState(cap)
        state = _states[key] = RedisState(url, f"{KEY_ROOT}{kind}:", memory) if url else memory
    return state


def forget_kind(kind: str) -> None:
    """Forget the values of one ``kind`` this process holds in memory (a test's fresh start)."""
    for key in [key for key in _states if key[1] == kind]:
        del _states[key]


def clear_shared_state() -> None:
    """Forget every value this process holds and every Redis failure (tests)."""
    _states.clear()
    _down_until.clear()


def _forget_after_fork() -> None:
    """In a forked child: the parent's clients share its sockets and run on its loops; drop them."""
    _connections.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
