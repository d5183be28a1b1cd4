"""Sync calls run the async implementation on one background event loop (one code path for all
four entry points; the loop's pooled HTTP client is shared by every sync caller in the process).

Fork-safe: a forked child has no copy of the loop's thread (and the lock may have been held by
another thread at the fork), so the child forgets both and starts its own loop on first use. At exit
the loop closes what it holds (its pooled HTTP client, its Redis clients): ``close_background_loop``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _forget_after_fork() -> None:
    global _lock, _loop
    _lock = threading.Lock()
    _loop = None  # its thread exists only in the parent; the parent still runs it


os.register_at_fork(after_in_child=_forget_after_fork)


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="litellm-conol-sync", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def close_background_loop(timeout: float = 2.0) -> None:
    """Close what the background loop holds and stop it (at exit; a later sync call starts a new one).

    Its clients close themselves when their loop shuts its async generators down (``client.pool``).
    """
    global _loop
    with _lock:
        loop, _loop = _loop, None
    if loop is None or not loop.is_running():
        return
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(timeout=timeout)
    loop.call_soon_threadsafe(loop.stop)


atexit.register(close_background_loop)


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` on the background loop and wait for its result (exceptions re-raised here)."""
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # e.g. KeyboardInterrupt in the caller: stop the work on the loop too
        raise


def iterate_sync(agen: AsyncIterator[_T]) -> Iterator[_T]:
    """A sync iterator over an async one; closing it early closes the async one (and its stream)."""
    loop = _background_loop()
    try:
        while True:
            try:
                yield asyncio.run_coroutine_threadsafe(_anext(agen), loop).result()
            except StopAsyncIteration:
                return
    finally:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            asyncio.run_coroutine_threadsafe(aclose(), loop).result(timeout=5)


async def _anext(agen: AsyncIterator[_T]) -> _T:
    return await agen.__anext__()
