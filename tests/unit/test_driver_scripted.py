"""The driver (``SessionRun``) against a scripted in-memory ``SessionTransport``: no sockets.

Every run happens on an event loop with a virtual clock: ``loop.time()`` only moves when the loop
would otherwise sleep, and then jumps straight to the next timer. The driver reads time only through
``loop.time()`` / ``loop.call_at`` / ``asyncio.sleep``, so its schedule (status polls, reconnect
backoff, the settle window) plays out exactly and instantly, and the tests can assert it to the tick.
"""

from __future__ import annotations

import asyncio
import json
import selectors
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import pytest
from support.events import delta, msg, snapshots, stage

from litellm_conol import (
    AgentFailed,
    AuthenticationFailed,
    ConolError,
    PermissionDenied,
    UpstreamError,
    UpstreamUnavailable,
)
from litellm_conol.client.driver import SessionRun
from litellm_conol.core.answer.assembler import Assembler, TextDelta
from litellm_conol.core.protocol.end_policy import Timing
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.protocol.wire import CreateSessionBody, CreateSessionResult, TextPart

pytestmark = pytest.mark.timeout(30)

TOKEN = "tok-SECRET-5f0c9a"
SESSION_ID = "ses_1"
_T = TypeVar("_T")


# --- a loop with a virtual clock ------------------------------------------------------------------


class _VirtualSelector(selectors.DefaultSelector):
    """Instead of sleeping until the next timer, report nothing ready and move the clock there."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout is None:
            return ready or super().select(timeout)  # no timer at all: a real wait (a hang is a bug)
        self.now += timeout
        return []


class _VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._clock = _VirtualSelector()
        super().__init__(self._clock)

    def time(self) -> float:
        return self._clock.now


def run_virtual(coro: Coroutine[Any, Any, _T]) -> _T:
    loop = _VirtualTimeLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def now() -> float:
    return asyncio.get_running_loop().time()


# --- the scripted transport -----------------------------------------------------------------------


def payloads(*events: dict[str, Any]) -> list[bytes]:
    return [json.dumps(event).encode() for event in events]


DONE = {"type": "done"}


@dataclass
class Connection:
    """One event-stream connection: refused at open (``refuse``), or its payloads, then ``then``:
    close cleanly, hang until aborted, or raise."""

    payloads: list[bytes] = field(default_factory=list)
    then: Literal["close", "hang"] | Exception = "hang"
    refuse: Exception | None = None


class ScriptedStream:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.aborted = asyncio.Event()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._payloads()

    async def _payloads(self) -> AsyncIterator[bytes]:
        for data in self.connection.payloads:
            yield data
        if self.connection.then == "hang":
            await self.aborted.wait()
        elif isinstance(self.connection.then, Exception):
            raise self.connection.then

    def abort(self) -> None:
        self.aborted.set()


@dataclass
class ScriptedTransport:
    """A :class:`litellm_conol.client.transport.SessionTransport` from a script.

    ``connections`` are used in order (the last one again once they run out); ``statuses`` are
    the answers of successive polls (the last one repeats); every call is recorded with its time."""

    connections: list[Connection]
    statuses: list[str | Exception] = field(default_factory=lambda: ["running"])
    create_error: Exception | None = None
    endpoint: Endpoint = field(default_factory=lambda: Endpoint("http://conol.invalid", TOKEN))
    opened_at: list[float] = field(default_factory=list)
    polled_at: list[float] = field(default_factory=list)
    streams: list[ScriptedStream] = field(default_factory=list)

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        if self.create_error is not None:
            raise self.create_error
        return SESSION_ID, CreateSessionResult(effectiveModel="claude-haiku-4-5")

    async def get_status(self, session_id: str) -> str | None:
        assert session_id == SESSION_ID
        self.polled_at.append(now())
        answer = self.statuses[min(len(self.polled_at), len(self.statuses)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    @asynccontextmanager
    async def event_stream(self, session_id: str) -> AsyncIterator[ScriptedStream]:
        assert session_id == SESSION_ID
        self.opened_at.append(now())
        connection = self.connections[min(len(self.opened_at), len(self.connections)) - 1]
        if connection.refuse is not None:
            raise connection.refuse
        stream = ScriptedStream(connection)
        self.streams.append(stream)
        yield stream


BODY = CreateSessionBody(messages=[TextPart(content="hi")], timezone="UTC", agent_model="claude-haiku-4-5")


def make_run(transport: ScriptedTransport, **kwargs: Any) -> SessionRun:
    return SessionRun(transport=transport, body=BODY, assembler=Assembler(), **kwargs)


async def collect(run: SessionRun) -> list[list[Any]]:
    return [batch async for batch in run.pieces()]


def text_of(batches: list[list[Any]]) -> str:
    return "".join(piece.text for batch in batches for piece in batch if isinstance(piece, TextDelta))


# --- (a) a plain answer ---------------------------------------------------------------------------


def test_snapshots_then_done_give_the_exact_answer():
    text = "Hello there, world."
    transport = ScriptedTransport([Connection(payloads(*snapshots(text, 4), DONE))])
    run = make_run(transport)

    batches = run_virtual(collect(run))

    assert batches[0] == []  # the session exists
    assert text_of(batches) == text
    assert run.assembler.final_text == text
    assert run.info is not None and run.info.session_id == SESSION_ID
    assert run.info.effective_model == "claude-haiku-4-5"
    assert (run.stats.events, run.stats.ended_by) == (5, "done event")
    assert (run.stats.reconnects, run.stats.status_polls) == (0, 0)
    assert transport.streams[0].aborted.is_set()  # the hanging stream was dropped at the end


# --- (b) the stream closes while the agent still runs -----------------------------------------------


def test_an_early_close_while_running_reconnects_and_the_replay_adds_nothing_twice():
    text = "The answer continues after the reconnect."
    full = snapshots(text, 4)
    transport = ScriptedTransport(
        [
            Connection(payloads(*full[:2]), then="close"),
            Connection(payloads(*full, DONE)),  # conol replays the whole history
        ],
        statuses=["running"],
    )
    run = make_run(transport, reconnect_backoff=0.1)

    batches = run_virtual(collect(run))

    assert text_of(batches) == text
    assert run.assembler.final_text == text
    assert run.stats.reconnects == 1
    assert run.stats.events == 2 + 4 + 1
    assert run.stats.ended_by == "done event"
    # the close is asked about at once, the reconnect waits out its backoff
    assert transport.polled_at == [0.0]
    assert transport.opened_at == [0.0, 0.1]


# --- (c) reconnects exhausted, or not worth trying --------------------------------------------------


def test_reconnects_exhausted_raise_the_last_errors_type_and_status():
    refused = UpstreamUnavailable("conol is unavailable while reading the event stream (503)")
    transport = ScriptedTransport([Connection(refuse=refused)], statuses=["running"])
    run = make_run(transport, max_reconnects=2, reconnect_backoff=0.25)

    with pytest.raises(UpstreamUnavailable) as caught:
        run_virtual(collect(run))

    assert caught.value.status_code == 503
    assert caught.value.message == (
        f"conol closed the event stream of session {SESSION_ID} 3 times before the answer was "
        "complete (max_reconnects=2); last error: conol is unavailable while reading the event "
        "stream (503)"
    )
    assert transport.opened_at == [0.0, 0.25, 0.75]  # backoff 0.25, then doubled
    assert run.stats.reconnects == 2
    # one at once after each failed connection (0, 0.25, 0.75); between them the quiet-stream
    # schedule (poll_interval 0.2 after the last poll) goes on while the reconnect backs off
    assert transport.polled_at == [0.0, 0.2, 0.25, 0.45, 0.65, 0.75]
    assert run.stats.status_polls == 6


def test_a_non_transient_stream_error_is_raised_at_once_without_a_reconnect():
    refused = AuthenticationFailed("conol rejected the session token while opening the event stream (401)")
    transport = ScriptedTransport([Connection(refuse=refused)])
    run = make_run(transport, reconnect_backoff=0.1)

    with pytest.raises(AuthenticationFailed) as caught:
        run_virtual(collect(run))

    assert caught.value is refused
    assert caught.value.status_code == 401
    assert transport.opened_at == [0.0]
    assert (run.stats.reconnects, run.stats.status_polls) == (0, 0)


# --- (d) status polls thin out as the silence grows -------------------------------------------------

# Binary-exact values, so the schedule's sums are exact.
THINNING = Timing(
    settle_window=2.0,
    poll_after_idle=0.25,
    poll_interval=0.25,
    medium_poll_after=1.0,
    medium_poll_interval=0.5,
    slow_poll_after=4.0,
    slow_poll_interval=1.0,
)


def expected_polls(timing: Timing, until: float) -> list[float]:
    """The end policy's schedule after an event at 0 and silence since: first poll after
    ``poll_after_idle``, then each interval chosen by how long the stream had been quiet."""
    at = timing.poll_after_idle
    polls = []
    while at <= until:
        polls.append(at)
        if at >= timing.slow_poll_after:
            at += timing.slow_poll_interval
        elif at >= timing.medium_poll_after:
            at += timing.medium_poll_interval
        else:
            at += timing.poll_interval
    return polls


def test_status_polls_follow_the_thinning_schedule_and_stop_at_a_terminal_status():
    schedule = expected_polls(THINNING, until=7.0)
    assert schedule == [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0]
    statuses: list[str | Exception] = ["running"] * (len(schedule) - 1) + ["completed"]
    transport = ScriptedTransport([Connection(payloads(delta(stage(preview=[msg("Hi")]))))], statuses)
    run = make_run(transport, timing=THINNING)

    async def run_and_note_the_end() -> tuple[list[list[Any]], float]:
        batches = await collect(run)
        return batches, now()

    batches, ended_at = run_virtual(run_and_note_the_end())

    assert transport.polled_at == schedule  # none before 0.25, none after the terminal answer
    assert run.stats.status_polls == len(schedule)
    assert run.stats.ended_by == "status terminal, settled"
    assert ended_at == 7.0 + THINNING.settle_window
    assert text_of(batches) == "Hi"


def test_a_failed_poll_is_retried_on_schedule_and_does_not_end_the_answer():
    statuses: list[str | Exception] = [RuntimeError("connection reset"), "completed"]
    transport = ScriptedTransport([Connection(payloads(delta(stage(preview=[msg("Hi")]))))], statuses)
    run = make_run(transport, timing=THINNING)

    run_virtual(collect(run))

    assert transport.polled_at == [0.25, 0.5]
    assert run.stats.ended_by == "status terminal, settled"


# --- (e) events that queued up come out together ----------------------------------------------------


def test_events_queued_at_once_come_out_as_one_coalesced_batch():
    text = "A long answer that arrived as many cumulative snapshots at once."
    transport = ScriptedTransport([Connection(payloads(*snapshots(text, 50), DONE))])
    run = make_run(transport)

    batches = run_virtual(collect(run))

    assert batches == [[], [TextDelta(text)]]
    assert run.stats.events == 51


def test_a_burst_longer_than_max_batch_is_split_and_still_exact():
    text = "x" * 600
    transport = ScriptedTransport([Connection(payloads(*snapshots(text, 300), DONE))])
    run = make_run(transport)

    batches = run_virtual(collect(run))

    # the first event, then MAX_BATCH (256) more in one batch; the remaining 43 and the done next
    cut = len(text) * 257 // 300
    assert batches == [[], [TextDelta(text[:cut])], [TextDelta(text[cut:])]]
    assert run.stats.events == 301


# --- (f) the token never shows in an error ----------------------------------------------------------


def _quoting(cls: type[ConolError]) -> ConolError:
    return cls(f"conol echoed the request: Cookie: __Secure-better-auth.session_token={TOKEN}")


def _leak_cases() -> list[tuple[str, ScriptedTransport, type[ConolError]]]:
    hang = Connection(payloads(delta(stage(preview=[msg("Hi")]))))
    return [
        ("create", ScriptedTransport([hang], create_error=_quoting(UpstreamError)), UpstreamError),
        (
            "stream open",
            ScriptedTransport([Connection(refuse=_quoting(AuthenticationFailed))]),
            AuthenticationFailed,
        ),
        ("stream read", ScriptedTransport([Connection(then=_quoting(PermissionDenied))]), PermissionDenied),
        ("status poll", ScriptedTransport([hang], statuses=[_quoting(PermissionDenied)]), PermissionDenied),
        (
            "error event",
            ScriptedTransport([Connection(payloads({"type": "error", "message": f"bad cookie {TOKEN}"}))]),
            AgentFailed,
        ),
        (
            "reconnects exhausted",
            ScriptedTransport([Connection(refuse=_quoting(UpstreamUnavailable))]),
            UpstreamUnavailable,
        ),
        # not ours: only its type is named, in the error the exhausted reconnects raise
        ("foreign exception", ScriptedTransport([Connection(then=RuntimeError(TOKEN))]), UpstreamError),
    ]


@pytest.mark.parametrize(("where", "transport", "raised"), _leak_cases(), ids=[c[0] for c in _leak_cases()])
def test_the_token_never_appears_in_a_raised_error(where, transport, raised):
    run = make_run(transport, max_reconnects=1, reconnect_backoff=0.1)

    with pytest.raises(ConolError) as caught:
        run_virtual(collect(run))

    error = caught.value
    assert type(error) is raised, where
    for shown in (error.message, str(error), repr(error), *map(str, error.args)):
        assert TOKEN not in shown, where
    if where != "foreign exception":
        assert "***" in error.message, where
