"""The driver's inbox: what the reader and poll tasks report, in order, for one consumer."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from ..core.errors import ConolError


@dataclass(frozen=True, slots=True)
class StreamEvent:
    data: bytes


@dataclass(frozen=True, slots=True)
class StreamClosed:
    error: ConolError | None = None
    received: int = 0  # data lines this connection delivered


@dataclass(frozen=True, slots=True)
class StatusReport:
    value: str | None
    error: ConolError | None = None


InboxItem = StreamEvent | StreamClosed | StatusReport


class Inbox:
    """What the reader and poll tasks report, in order; only the driver takes from it.

    ``asyncio.Queue`` would do, but it carries four deques and an event per session (about 2.5 KB of
    every open stream) for bounds, putters and ``join()``, which one consumer never uses.
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[InboxItem] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: InboxItem) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def get_nowait(self) -> InboxItem:
        return self._items.popleft()

    async def get(self, deadline: float) -> InboxItem | None:
        """The next item, or ``None`` once ``deadline`` (loop time) has passed."""
        if self._items:
            return self._items.popleft()  # the hot path: items already waiting cost no timer
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        timer = loop.call_at(deadline, wake_waiter, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None
        return self._items.popleft() if self._items else None


def wake_waiter(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
