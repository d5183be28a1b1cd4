"""One conol session from create to finish: wires the transport to the core and the end policy.

This is the only place with a clock. The event stream is read by its own task into a queue, so
waiting for "the next event or the next deadline" never cancels an HTTP read halfway; status
polls run as tasks too, so events keep flowing while a poll is in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..core.answer.assembler import Assembler, Piece, coalesce
from ..core.config.budgets import DEFAULT_TIMEOUT
from ..core.errors import ConolError, RequestTimeout, UpstreamError
from ..core.protocol.agent_failures import failure_error
from ..core.protocol.end_policy import (
    EndPolicy,
    Finish,
    GiveUp,
    Poll,
    Timing,
)
from ..core.protocol.session_info import RunStats, SessionInfo
from ..core.protocol.turn_boundary import TurnBoundary
from ..core.protocol.turn_status import TurnStatus
from ..core.protocol.wire import ConolEvent, CreateSessionBody, parse_event, unreadable_reason
from .follow_up import FollowUpUnverified, SessionStart, unanchored, unseen_turn
from .inbox import Inbox, InboxItem, StatusReport, StreamClosed, StreamEvent
from .transport import SessionTransport

_T = TypeVar("_T")


MAX_BATCH = 256  # queued events handled together before the end policy runs again
CLEANUP_TIMEOUT = 5.0  # seconds to wait for cancelled reader/poll tasks to close their connections


@dataclass
class SessionRun:
    """Iterate it for pieces; afterwards ``assembler``, ``info`` and ``stats`` hold the result."""

    transport: SessionTransport
    body: CreateSessionBody
    assembler: Assembler
    timing: Timing = field(default_factory=Timing)
    timeout: float = DEFAULT_TIMEOUT
    max_reconnects: int = 3
    reconnect_backoff: float = 0.1  # seconds before the first reconnect; doubles for each further one

    start: SessionStart | None = None  # a follow-up or a pinned start instead of one create
    record: bool = True  # record the session's stage logs (session reuse may continue it)

    info: SessionInfo | None = field(default=None, init=False)
    stats: RunStats = field(default_factory=RunStats, init=False)
    boundary: TurnBoundary = field(init=False)  # the new turn's start; records the session's stage logs
    _last_stream_error: ConolError | None = field(default=None, init=False, repr=False)
    _status: TurnStatus = field(init=False, repr=False)  # which polled status is this turn's
    _aborts: set[Callable[[], None]] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.boundary = self.start.boundary if self.start is not None else TurnBoundary(record=self.record)
        waiting = bool(getattr(self.start, "waiting", False))
        self._status = TurnStatus(self.boundary.following, self.timing.settle_window, waiting=waiting)

    async def pieces(self) -> AsyncIterator[list[Piece]]:
        """Lists of pieces as events arrive; the first (empty) list marks the session's creation."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        session_id = await self._create(deadline)
        yield []  # the session exists: callers may check `info` before any content arrives
        inbox = Inbox()
        tasks: set[asyncio.Task[None]] = set()
        policy = EndPolicy(self.timing, loop.time())
        self._status.posted_at = policy.started_at
        self._start(tasks, self._read_stream(session_id, inbox))
        try:
            while True:
                now = loop.time()
                step = policy.next_step(
                    now,
                    committed=self.assembler.committed,
                    client_tool=self.assembler.wants_client_tool,
                    cut=_cut_reason(self.assembler),
                )
                if isinstance(step, Finish):
                    self.stats.ended_by = step.reason
                    self._check_something_was_read(session_id)
                    tail = self.assembler.finish()  # text held back for a stop sequence that never came
                    if tail:
                        yield tail
                    return
                self._check_anchored(policy, now, session_id)
                if isinstance(step, GiveUp):
                    raise RequestTimeout(f"{step.reason}; session {session_id} abandoned")
                if isinstance(step, Poll):
                    policy.on_poll_started(now)
                    self._start(tasks, self._poll(session_id, inbox))
                    continue
                if now >= deadline:
                    raise RequestTimeout(
                        f"conol session {session_id} was still running after the "
                        f"{self.timeout:g} s timeout; abandoned"
                    )
                item = await inbox.get(min(step.deadline, deadline, self._anchor_deadline(policy)))
                if item is None:
                    continue
                pieces = self._handle(item, policy, loop.time(), session_id, inbox, tasks)
                if isinstance(item, StreamEvent):
                    pieces += self._handle_queued_events(policy, session_id, inbox, tasks)
                if self.assembler.cut is not None:
                    self._drop_upstream()  # before the last text goes out: conol need not write on
                if pieces:
                    yield coalesce(pieces)
        except ConolError as exc:
            self._mask_secret(exc)  # e.g. an `error` event quoting the request, cookie included
            raise
        finally:
            self.stats.status_polls = policy.polls
            # Drop the upstream connection synchronously first: whatever our caller does next
            # (a cancelled proxy request keeps its loop busy for a while), conol sees it at once.
            self._drop_upstream()
            await _cancel_all(tasks)

    async def _create(self, deadline: float) -> str:
        try:
            if self.start is not None:
                self.info = await self._with_deadline(self.start.open(self.transport), deadline)
                return self.info.session_id
            session_id, created = await self._with_deadline(
                self.transport.create_session(self.body), deadline
            )
        except ConolError as exc:
            self._mask_secret(exc)
            raise
        self.info = SessionInfo(session_id, created.effective_model, created.model_downgraded)
        return session_id

    def _drop_upstream(self) -> None:
        for abort in list(self._aborts):
            abort()

    def _handle_queued_events(
        self, policy: EndPolicy, session_id: str, inbox: Inbox, tasks: set[asyncio.Task[None]]
    ) -> list[Piece]:
        """Events that queued up meanwhile, handled at once: their pieces go out as one batch.

        Stops at anything but an event (handled, then the end policy decides again), at the end of
        the answer and at a client tool call, so nothing is handled later than one at a time would.
        """
        pieces: list[Piece] = []
        for _ in range(MAX_BATCH):
            if self.assembler.done or self.assembler.wants_client_tool or self.assembler.cut or inbox.empty():
                break
            item = inbox.get_nowait()
            pieces += self._handle(item, policy, asyncio.get_running_loop().time(), session_id, inbox, tasks)
            if not isinstance(item, StreamEvent):
                break
        return pieces

    def _note_unreadable(self, data: bytes) -> None:
        reason = unreadable_reason(data)
        if reason is not None:
            self.stats.unreadable += 1
            self.stats.unreadable_reason = self.stats.unreadable_reason or reason

    def _check_something_was_read(self, session_id: str) -> None:
        """An empty answer because conol's events changed shape is an error that says so, not an
        empty success (one odd event among readable ones is skipped, docs/protocol.md#stream)."""
        answer = self.assembler
        if self.stats.unreadable and not (answer.final_text or answer.final_reasoning or answer.tool_calls):
            raise UpstreamError(
                f"conol session {session_id} sent {self.stats.unreadable} event(s) of a shape this client "
                f"cannot read and nothing readable: {self.stats.unreadable_reason}. conol's protocol may "
                "have changed: run `litellm-conol doctor`."
            )

    def _mask_secret(self, exc: ConolError) -> None:
        """Last line of defence: whatever an error quotes (conol's own text too), never the token."""
        token = self.transport.endpoint.token
        if token and token in exc.message:
            exc.message = exc.message.replace(token, "***")
            exc.args = (exc.message,)

    def _handle(
        self,
        item: InboxItem,
        policy: EndPolicy,
        now: float,
        session_id: str,
        inbox: Inbox,
        tasks: set[asyncio.Task[None]],
    ) -> list[Piece]:
        if isinstance(item, StreamEvent):
            policy.on_activity(now)
            event = parse_event(item.data)
            if event is None:
                self._note_unreadable(item.data)
                return []  # junk line, heartbeat or unknown type: not fatal (docs/protocol.md#stream)
            self.stats.events += 1
            event = self._this_turn(event)
            if self.boundary.ambiguous is not None:
                raise FollowUpUnverified(f"session {session_id}: {self.boundary.ambiguous}")
            if event is None:
                return []  # an earlier turn's, replayed
            policy.on_event(now)
            pieces = self.assembler.feed(event)
            if self.assembler.done:
                policy.on_definitive("done event")
            return pieces
        if isinstance(item, StatusReport):
            if item.error is not None:
                raise item.error
            boundary = self.boundary
            belief = self._status.believe(
                item.value,
                now,
                anchored=boundary.anchored,
                own_content=boundary.own_content,
                committed=self.assembler.committed,
            )
            self._check_turn_seen(item.value, policy, now, session_id)
            policy.on_status(belief.at, belief.status)
            if policy.is_failed:
                raise failure_error(None, "status", status=policy.status, session_id=session_id)
            unfinished = not policy.is_terminal or policy.stream_failed
            if policy.stream_closed and item.value is not None and unfinished:
                self._reconnect(policy, session_id, inbox, tasks)
            return []
        if item.error is not None and not _is_transient(item.error):
            raise item.error  # a dead token, a missing session: reconnecting cannot help
        if item.error is not None:
            self._last_stream_error = item.error
        # A connection that closed without a single line (conol replays the history on every
        # connection) told us nothing: as good as a failed one, never proof of the end.
        policy.on_stream_closed(failed=item.error is not None or item.received == 0)
        if policy.stream_failed and policy.is_terminal:
            # finished, but we did not see the end: the replay of a new connection has it
            self._reconnect(policy, session_id, inbox, tasks)
        return []

    def _this_turn(self, event: ConolEvent) -> ConolEvent | None:
        """The event as far as it is this turn's (the boundary also records the session's stage
        logs, for the next follow-up's boundary)."""
        return self.boundary.filter(event)

    def _anchor_deadline(self, policy: EndPolicy) -> float:
        """Until when a follow-up's stream may go without showing the turn we posted: the first-event
        budget, counted from the post (replayed events are not the new turn's)."""
        if self.boundary.anchored:
            return float("inf")
        return policy.started_at + self.timing.first_event_timeout

    def _check_anchored(self, policy: EndPolicy, now: float, session_id: str) -> None:
        if now >= self._anchor_deadline(policy):
            raise unanchored(self.boundary, self.start, self.timing.first_event_timeout, session_id)

    def _check_turn_seen(self, status: str | None, policy: EndPolicy, now: float, session_id: str) -> None:
        """The session provably finished a run since the post and the stream never showed the turn."""
        boundary, quiet_since = self.boundary, policy.last_activity_at or policy.started_at
        if not boundary.following or boundary.anchored or not self._status.ended(status, now, quiet_since):
            return
        error = unseen_turn(boundary, self.start, session_id)
        if error is not None:
            raise error

    def _reconnect(
        self, policy: EndPolicy, session_id: str, inbox: Inbox, tasks: set[asyncio.Task[None]]
    ) -> None:
        # The server closed the stream (or refused it) while the agent is still running: not the
        # end. The new connection replays the history; cumulative snapshots and tool dedupe absorb
        # the repeat, so the answer continues where it was, never duplicated.
        if self.stats.reconnects >= self.max_reconnects:
            raise self._reconnects_exhausted(session_id)
        self.stats.reconnects += 1
        policy.on_reconnected()
        self.boundary.reconnected()
        backoff = self.reconnect_backoff * 2 ** (self.stats.reconnects - 1)
        self._start(tasks, self._read_stream(session_id, inbox, delay=backoff))

    def _reconnects_exhausted(self, session_id: str) -> ConolError:
        what = (
            f"conol closed the event stream of session {session_id} {self.stats.reconnects + 1} times "
            f"before the answer was complete (max_reconnects={self.max_reconnects})"
        )
        last = self._last_stream_error
        if last is None:
            return UpstreamError(what)
        # Keep the last failure's type and status (e.g. 503 → ServiceUnavailableError), say why.
        return type(last)(
            f"{what}; last error: {last.message}", status_code=last.status_code, headers=last.headers
        )

    async def _read_stream(self, session_id: str, inbox: Inbox, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        received = 0
        try:
            async with self.transport.event_stream(session_id) as stream:
                self._aborts.add(stream.abort)
                try:
                    async for data in stream:
                        received += 1
                        inbox.put_nowait(StreamEvent(data))
                finally:
                    self._aborts.discard(stream.abort)
        except ConolError as exc:
            inbox.put_nowait(StreamClosed(exc, received))
            return
        except Exception as exc:  # never leave the driver waiting on a reader that died
            failure = UpstreamError(f"reading conol's event stream failed: {type(exc).__name__}")
            inbox.put_nowait(StreamClosed(failure, received))
            return
        inbox.put_nowait(StreamClosed(None, received))

    async def _poll(self, session_id: str, inbox: Inbox) -> None:
        try:
            inbox.put_nowait(StatusReport(await self.transport.get_status(session_id)))
        except ConolError as exc:
            inbox.put_nowait(StatusReport(None, exc))
        except Exception:  # a failed poll is not terminal (docs/protocol.md#end-of-answer): the next retries
            inbox.put_nowait(StatusReport(None))

    @staticmethod
    def _start(tasks: set[asyncio.Task[None]], coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(_forget)
        task.add_done_callback(tasks.discard)

    async def _with_deadline(self, awaitable: Awaitable[_T], deadline: float) -> _T:
        try:
            async with asyncio.timeout_at(deadline):
                return await awaitable
        except TimeoutError:
            raise RequestTimeout(
                f"conol did not create the session within the {self.timeout:g} s timeout"
            ) from None


def _cut_reason(assembler: Assembler) -> str | None:
    """Why the answer was cut short, as ``ended_by`` says it; ``None`` while it was not."""
    if assembler.cut is None:
        return None
    return "stop sequence" if assembler.cut.reason == "stop" else "max_tokens"


def _forget(task: asyncio.Task[None]) -> None:
    # The tasks report through the inbox; an unexpected exception must not be logged as
    # "never retrieved" after the run was cancelled.
    if not task.cancelled():
        task.exception()


def _is_transient(error: ConolError) -> bool:
    """A stream failure worth a reconnect: 5xx, timeouts, connection errors. Not a 4xx: a dead
    token or a missing session stays so, and a 429 goes back to the caller with its Retry-After."""
    status = int(error.status_code)
    return status >= 500 or status == 408


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> None:
    """Cancel the reader and poll tasks, and give them a moment to close their connections.

    They are waited for with ``asyncio.wait``, never ``await task``: awaiting a task forwards any
    cancellation of the waiter into it, and under anyio (Starlette, so the LiteLLM proxy) a
    cancelled scope re-cancels its task at every await. Forwarded into the reader, those repeated
    cancellations interrupt httpx's close halfway and leave the upstream socket open. Cancelled
    once, the tasks close cleanly on their own even if our own wait is cut short.
    """
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=CLEANUP_TIMEOUT)
