"""One pooled ``httpx.AsyncClient`` per event loop, shared by all requests on that loop.

The client keeps no cookie jar, so nothing a server sets can leak from one user's request to
another. Nothing is created at import time, and a forked child forgets the parent's clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import os
import weakref
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx

from ..core.config.settings_table import DEFAULT_MAX_CONCURRENT_POLLS
from .aiohttp_stream import litellm_transport
from .aiohttp_stream import pooled_connections as pooled_connections


class _Closeable(Protocol):
    async def aclose(self) -> Any: ...


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)
_poll_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)
_parked_closers: weakref.WeakKeyDictionary[_Closeable, AsyncIterator[None]] = weakref.WeakKeyDictionary()


def _no_cookies() -> httpx.Cookies:
    return httpx.Cookies(
        http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    )


def _pool() -> httpx.AsyncBaseTransport:
    """The connection pool under the shared client: LiteLLM's own choice for its providers.

    By default that is LiteLLM's aiohttp transport (what ``openai/…`` runs on; it keeps no cookies
    either). httpcore's pool does O(n²) bookkeeping per request in open connections
    (encode/httpcore#1035), and a conol request holds two (events + create/poll), so at 200
    concurrent streams it doubled latency and CPU (bench/RESULTS.md). With LiteLLM's aiohttp
    transport turned off (``litellm.disable_aiohttp_transport``) we use httpx's own pool.
    """
    transport = litellm_transport()
    if transport is not None:
        return transport
    return httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200))


def shared_client() -> httpx.AsyncClient:
    """The pooled client of the running event loop (created on first use, closed with the loop)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            transport=_pool(),
            cookies=_no_cookies(),
            # The event stream is read without a read timeout: the driver enforces its own budgets.
            timeout=httpx.Timeout(connect=10.0, read=None, write=10.0, pool=10.0),
            trust_env=False,
        )
        _clients[loop] = client
        close_with_loop(client)
    return client


def poll_slots(limit: int = DEFAULT_MAX_CONCURRENT_POLLS) -> asyncio.Semaphore:
    """How many status polls may be in flight at once on the running loop (all sessions together;
    ``limit`` applies when the loop's first poll creates it).

    Quiet sessions started together poll together; each poll in flight holds a pooled connection
    besides its session's event stream, and an idle connection stays in the pool afterwards. A
    burst of 100 polls kept 100 extra sockets open, 12 KB of memory per stream (bench/RESULTS.md);
    a poll takes milliseconds, so 16 at a time serve hundreds of quiet sessions.
    """
    loop = asyncio.get_running_loop()
    slots = _poll_slots.get(loop)
    if slots is None:
        slots = asyncio.Semaphore(limit)
        _poll_slots[loop] = slots
    return slots


def close_with_loop(client: _Closeable) -> None:
    """Close ``client`` (ours, or a Redis client) when the running loop shuts down (``asyncio.run``
    and the proxy's lifespan end).

    asyncio has no shutdown hook for arbitrary objects, but it does close every async generator
    still suspended (``loop.shutdown_asyncgens()``): park one that closes the client on exit. So
    code that calls ``asyncio.run`` per request leaves no pooled connections behind.
    """

    async def closer() -> AsyncIterator[None]:
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()

    parked = closer()
    _parked_closers[client] = parked
    asyncio.get_running_loop().create_task(_start(parked))


def forget_closer(client: _Closeable) -> None:
    """``client`` is closed otherwise: nothing to do when its loop shuts down."""
    _parked_closers.pop(client, None)


async def _start(generator: AsyncIterator[None]) -> None:
    await generator.__anext__()  # runs to the yield; the loop's shutdown_asyncgens() resumes it


def _forget_after_fork() -> None:
    """In a forked child: drop the parent's pooled clients and poll slots, unclosed.

    Their connections' sockets are shared with the parent (closing or reusing them here would cut or
    cross the parent's streams), and their loops run only in the parent. Nothing is created at import
    time, so a child forked before first use (gunicorn, multiprocessing) starts clean anyway.
    """
    for client in list(_clients.values()):
        _parked_closers.pop(client, None)
    _clients.clear()
    _poll_slots.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
