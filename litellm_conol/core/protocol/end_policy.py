"""When is the answer finished? (docs/protocol.md#end-of-answer) Pure: the caller passes the time in.

conol's stream usually stays open after the agent finishes, and its status may turn terminal
shortly *before* the last snapshot. So the signals are combined, strongest first:

1. definitive, end at once: a ``done`` event / ``[DONE]``; the server closing the stream once the
   status is terminal; a committed assistant message in the logs once the status is terminal;
2. otherwise a terminal status followed by ``settle_window`` seconds of stream silence (restarted
   by every event).

The status is polled only while the stream is quiet, and never again once it is terminal.

Two budgets give up on a session that has gone quiet (the driver reports them as a timeout):

* ``first_event_timeout``: no event at all this long after the session was created (the stream
  never opened, or opened and stayed silent; heartbeat comments do not count);
* ``idle_timeout``: no event this long after the last one while the answer is not finished (the
  status is still running, or unknown because its polls fail). conol can be silent for many
  seconds while a built-in tool runs, so the default is generous.

Once the status is terminal the settle window ends the answer long before either budget.
"""

from __future__ import annotations

from dataclasses import dataclass

TERMINAL_STATUSES = frozenset(
    {"completed", "complete", "done", "stopped", "failed", "error", "cancelled", "canceled"}
)
FAILED_STATUSES = frozenset({"failed", "error"})


@dataclass(frozen=True, slots=True)
class Timing:
    """Every knob of the end-of-answer decision, in seconds."""

    settle_window: float = 1.0
    poll_after_idle: float = 0.2  # first status poll after this much stream silence
    poll_interval: float = 0.2  # between polls while the stream stays quiet
    # Past the settle window of silence a terminal status ends the answer the moment a poll sees
    # it, so polling every 0.5 s still ends it well within settle_window + 0.25 s of the status
    # turning terminal, with a fraction of the requests to conol.
    medium_poll_after: float = 1.2
    medium_poll_interval: float = 0.5
    slow_poll_after: float = 10.0  # a silence this long is a tool run: poll less often
    slow_poll_interval: float = 1.0
    tool_call_settle: float = 0.3  # after a client tool call, wait this long for sibling calls
    # Give up (a timeout) when conol sends no event at all this long after the session was created
    # (option ``first_event_timeout``, env ``CONOL_FIRST_EVENT_TIMEOUT``).
    first_event_timeout: float = 60.0
    # Give up (a timeout) when conol sends no event this long mid-answer while the session is not
    # finished; must outlast silent built-in tool runs (option ``idle_timeout``, env ``CONOL_IDLE_TIMEOUT``).
    idle_timeout: float = 120.0


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str


@dataclass(frozen=True, slots=True)
class Poll:
    pass


@dataclass(frozen=True, slots=True)
class GiveUp:
    """A budget ran out: the session is abandoned and reported as a timeout."""

    reason: str


@dataclass(frozen=True, slots=True)
class WaitUntil:
    deadline: float


Step = Finish | Poll | WaitUntil | GiveUp


class EndPolicy:
    def __init__(self, timing: Timing, now: float) -> None:
        self.timing = timing
        self.started_at = now
        self.last_event_at = now
        self.last_activity_at: float | None = None  # any data line, even one we cannot parse
        self.terminal_seen_at: float | None = None
        self.status: str | None = None
        self.last_poll_at: float | None = None
        self.poll_in_flight = False
        self.polls = 0
        self._polled_since_close = True
        self.stream_closed = False
        # The last stream ended in an error (refused, reset): what followed it is unknown until a new
        # connection delivers an event, so silence proves nothing and cannot settle the answer.
        self.stream_failed = False
        self._definitive: str | None = None

    # -- signals --

    def on_event(self, now: float) -> None:
        self.last_event_at = now
        self.stream_failed = False

    def on_activity(self, now: float) -> None:
        """Any ``data:`` line arrived (parsed or not): the session is alive, for the budgets."""
        self.last_activity_at = now

    def on_definitive(self, reason: str) -> None:
        self._definitive = reason

    def on_poll_started(self, now: float) -> None:
        self.poll_in_flight = True
        self.last_poll_at = now
        self.polls += 1
        self._polled_since_close = True

    def on_status(self, now: float, status: str | None) -> None:
        """A poll's answer; ``None`` when the poll failed (not terminal: retried on the next poll)."""
        self.poll_in_flight = False
        if status is None:
            return
        self.status = status
        if not self.is_terminal:
            self.terminal_seen_at = None  # running again: an earlier terminal status was not the end
        elif self.terminal_seen_at is None:
            self.terminal_seen_at = now
            if self.stream_closed and not self.stream_failed:
                self._definitive = "stream closed, status terminal"

    def on_stream_closed(self, failed: bool = False) -> None:
        """The stream ended: cleanly (the server closed it), or ``failed`` (an error, a refusal)."""
        self.stream_closed = True
        self.stream_failed = failed
        self._polled_since_close = False  # ask at once: the close may be the end
        if self.is_terminal and not failed:
            self._definitive = "stream closed, status terminal"

    def on_reconnected(self) -> None:
        self.stream_closed = False

    @property
    def is_terminal(self) -> bool:
        return self.status is not None and self.status.lower() in TERMINAL_STATUSES

    @property
    def is_failed(self) -> bool:
        return self.status is not None and self.status.lower() in FAILED_STATUSES

    # -- the decision --

    def next_step(
        self, now: float, *, committed: bool = False, client_tool: bool = False, cut: str | None = None
    ) -> Step:
        if cut is not None:
            # The answer was cut (stop sequence, max_tokens): whatever conol writes next is unseen.
            return Finish(cut)
        if self._definitive is not None:
            return Finish(self._definitive)
        if client_tool:
            # The model asked the client to run a tool: the agent will wait for a result it never
            # gets, so end once sibling calls had a moment to arrive.
            return self._finish_after(
                self.last_event_at + self.timing.tool_call_settle, "client tool call", now
            )
        if self.terminal_seen_at is not None:
            if committed:
                return Finish("committed message, status terminal")
            if self.stream_failed or self.last_activity_at is None:
                # Silence proves nothing yet: the stream broke (the rest of the answer comes with
                # the reconnect's replay), or it has not delivered its first event (a slow connect,
                # a busy loop) while the status already says finished. Never settle on nothing.
                budget = self.budget_deadline()
                return GiveUp(self._stall_reason()) if now >= budget else WaitUntil(budget)
            settle_from = max(self.terminal_seen_at, self.last_event_at)
            return self._finish_after(
                settle_from + self.timing.settle_window, "status terminal, settled", now
            )
        budget = self.budget_deadline()
        if now >= budget:
            return GiveUp(self._stall_reason())
        if self.poll_in_flight:
            # woken by the poll's answer
            return WaitUntil(min(now + self.timing.slow_poll_interval, budget))
        if self.stream_closed and not self._polled_since_close:
            return Poll()
        due = self._next_poll_due(committed or self.stream_closed)
        return Poll() if now >= due else WaitUntil(min(due, budget))

    def budget_deadline(self) -> float:
        """When the session counts as stalled (loop time): the first-event or the idle budget."""
        if self.last_activity_at is None:
            return self.started_at + self.timing.first_event_timeout
        return self.last_activity_at + self.timing.idle_timeout

    def _stall_reason(self) -> str:
        if self.last_activity_at is None:
            return (
                f"conol sent no event within {self.timing.first_event_timeout:g} s of creating the "
                "session (first_event_timeout)"
            )
        return (
            f"conol sent no event for {self.timing.idle_timeout:g} s while the session was still "
            f"running (idle_timeout; last status: {self.status or 'unknown'})"
        )

    def _finish_after(self, deadline: float, reason: str, now: float) -> Step:
        return Finish(reason) if now >= deadline else WaitUntil(deadline)

    def _next_poll_due(self, urgent: bool) -> float:
        # A committed message or a closed stream means the end is likely now: ask at once.
        idle = 0.0 if urgent else self.timing.poll_after_idle
        due = self.last_event_at + idle
        if self.last_poll_at is not None and self.last_poll_at >= self.last_event_at:
            due = max(due, self.last_poll_at + self._poll_interval(self.last_poll_at - self.last_event_at))
        return due

    def _poll_interval(self, quiet_for: float) -> float:
        """Polls thin out as the silence grows: each one is a request to conol."""
        timing = self.timing
        if quiet_for >= timing.slow_poll_after:
            return timing.slow_poll_interval
        if quiet_for >= timing.medium_poll_after:
            return timing.medium_poll_interval
        return timing.poll_interval
