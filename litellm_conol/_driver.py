"""One conol session from create to finish: wires the transport to the core and the end policy.

This is the only place with a clock. The event stream is read by its own task into a queue, so
waiting for "the next event or the next deadline" never cancels an HTTP read halfway; status
polls run as tasks too, so events keep flowing while a poll is in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ._assembler import Assembler, Piece
from ._end_policy import EndPolicy, Finish, Poll, Timing
from ._errors import AgentFailed, ConolError, RequestTimeout, UpstreamError
from ._transport import Transport
from ._wire import CreateSessionBody, parse_event


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    effective_model: str | None
    model_downgraded: bool


@dataclass
class RunStats:
    """What happened, for provider_specific_fields and the benchmarks."""

    ended_by: str = ""
    status_polls: int = 0
    reconnects: int = 0
    events: int = 0


@dataclass(frozen=True, slots=True)
class _Event:
    data: str


@dataclass(frozen=True, slots=True)
class _StreamClosed:
    error: ConolError | None = None


@dataclass(frozen=True, slots=True)
class _Status:
    value: str | None
    error: ConolError | None = None


_Item = _Event | _StreamClosed | _Status
_T = TypeVar("_T")


@dataclass
class SessionRun:
    """Iterate it for pieces; afterwards ``assembler``, ``info`` and ``stats`` hold the result."""

    transport: Transport
    body: CreateSessionBody
    assembler: Assembler
    timing: Timing = field(default_factory=Timing)
    timeout: float = 600.0
    max_reconnects: int = 3

    info: SessionInfo | None = field(default=None, init=False)
    stats: RunStats = field(default_factory=RunStats, init=False)

    async def pieces(self) -> AsyncIterator[list[Piece]]:
        """Lists of pieces as events arrive; the first (empty) list marks the session's creation."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        session_id, created = await self._with_deadline(self.transport.create_session(self.body), deadline)
        self.info = SessionInfo(session_id, created.effective_model, created.model_downgraded)
        yield []  # the session exists: callers may check `info` before any content arrives
        inbox: asyncio.Queue[_Item] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()
        policy = EndPolicy(self.timing, loop.time())
        self._start(tasks, self._read_stream(session_id, inbox))
        try:
            while True:
                now = loop.time()
                step = policy.next_step(
                    now, committed=self.assembler.committed, client_tool=self.assembler.wants_client_tool
                )
                if isinstance(step, Finish):
                    self.stats.ended_by = step.reason
                    return
                if isinstance(step, Poll):
                    policy.on_poll_started(now)
                    self._start(tasks, self._poll(session_id, inbox))
                    continue
                if now >= deadline:
                    raise RequestTimeout(
                        f"conol session {session_id} was still running after the "
                        f"{self.timeout:g} s timeout; abandoned"
                    )
                item = await _next_item(inbox, min(step.deadline, deadline))
                if item is None:
                    continue
                pieces = self._handle(item, policy, loop.time(), session_id, inbox, tasks)
                if pieces:
                    yield pieces
        finally:
            self.stats.status_polls = policy.polls
            await _cancel_all(tasks)

    def _handle(
        self,
        item: _Item,
        policy: EndPolicy,
        now: float,
        session_id: str,
        inbox: asyncio.Queue[_Item],
        tasks: set[asyncio.Task[None]],
    ) -> list[Piece]:
        if isinstance(item, _Event):
            event = parse_event(item.data)
            if event is None:
                return []  # junk line, heartbeat or unknown type: not fatal (spec §2.3)
            self.stats.events += 1
            policy.on_event(now)
            pieces = self.assembler.feed(event)
            if self.assembler.done:
                policy.on_definitive("done event")
            return pieces
        if isinstance(item, _Status):
            if item.error is not None:
                raise item.error
            policy.on_status(now, item.value)
            if policy.is_failed:
                raise AgentFailed(f"conol session {session_id} ended with status {policy.status!r}")
            if policy.stream_closed and not policy.is_terminal and item.value is not None:
                self._reconnect(policy, session_id, inbox, tasks)
            return []
        if item.error is not None and not policy.is_terminal and self.stats.events == 0:
            raise item.error
        policy.on_stream_closed()
        return []

    def _reconnect(
        self, policy: EndPolicy, session_id: str, inbox: asyncio.Queue[_Item], tasks: set[asyncio.Task[None]]
    ) -> None:
        # The server closed the stream while the agent is still running: not the end. The new
        # connection replays the history; cumulative snapshots and tool dedupe absorb the repeat.
        if self.stats.reconnects >= self.max_reconnects:
            raise UpstreamError(
                f"conol closed the event stream of session {session_id} {self.stats.reconnects + 1} times "
                "while the session was still running"
            )
        self.stats.reconnects += 1
        policy.on_reconnected()
        backoff = 0.1 * 2 ** (self.stats.reconnects - 1)
        self._start(tasks, self._read_stream(session_id, inbox, delay=backoff))

    async def _read_stream(self, session_id: str, inbox: asyncio.Queue[_Item], delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            async with self.transport.event_stream(session_id) as lines:
                async for data in lines:
                    inbox.put_nowait(_Event(data))
        except ConolError as exc:
            inbox.put_nowait(_StreamClosed(exc))
            return
        inbox.put_nowait(_StreamClosed())

    async def _poll(self, session_id: str, inbox: asyncio.Queue[_Item]) -> None:
        try:
            inbox.put_nowait(_Status(await self.transport.get_status(session_id)))
        except ConolError as exc:
            inbox.put_nowait(_Status(None, exc))

    @staticmethod
    def _start(tasks: set[asyncio.Task[None]], coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def _with_deadline(self, awaitable: Awaitable[_T], deadline: float) -> _T:
        try:
            async with asyncio.timeout_at(deadline):
                return await awaitable
        except TimeoutError:
            raise RequestTimeout(
                f"conol did not create the session within the {self.timeout:g} s timeout"
            ) from None


async def _next_item(inbox: asyncio.Queue[_Item], deadline: float) -> _Item | None:
    """The next item, or ``None`` once ``deadline`` (loop time) has passed."""
    try:
        return inbox.get_nowait()  # the hot path: events already waiting cost no timer
    except asyncio.QueueEmpty:
        pass
    try:
        async with asyncio.timeout_at(deadline):
            return await inbox.get()
    except TimeoutError:
        return None


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> None:
    pending = list(tasks)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
