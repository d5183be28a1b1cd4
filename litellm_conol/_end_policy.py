"""When is the answer finished? (spec §2.5) Pure: the caller passes the time in.

conol's stream usually stays open after the agent finishes, and its status may turn terminal
shortly *before* the last snapshot. So the signals are combined, strongest first:

1. definitive, end at once: a ``done`` event / ``[DONE]``; the server closing the stream once the
   status is terminal; a committed assistant message in the logs once the status is terminal;
2. otherwise a terminal status followed by ``settle_window`` seconds of stream silence (restarted
   by every event).

The status is polled only while the stream is quiet, and never again once it is terminal.
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
    slow_poll_after: float = 10.0  # a silence this long is a tool run: poll less often
    slow_poll_interval: float = 1.0
    tool_call_settle: float = 0.3  # after a client tool call, wait this long for sibling calls


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str


@dataclass(frozen=True, slots=True)
class Poll:
    pass


@dataclass(frozen=True, slots=True)
class WaitUntil:
    deadline: float


Step = Finish | Poll | WaitUntil


class EndPolicy:
    def __init__(self, timing: Timing, now: float) -> None:
        self.timing = timing
        self.last_event_at = now
        self.terminal_seen_at: float | None = None
        self.status: str | None = None
        self.last_poll_at: float | None = None
        self.poll_in_flight = False
        self.polls = 0
        self.stream_closed = False
        self._definitive: str | None = None

    # -- signals --

    def on_event(self, now: float) -> None:
        self.last_event_at = now

    def on_definitive(self, reason: str) -> None:
        self._definitive = reason

    def on_poll_started(self, now: float) -> None:
        self.poll_in_flight = True
        self.last_poll_at = now
        self.polls += 1

    def on_status(self, now: float, status: str | None) -> None:
        """A poll's answer; ``None`` when the poll failed (not terminal: retried on the next poll)."""
        self.poll_in_flight = False
        if status is None:
            return
        self.status = status
        if self.is_terminal and self.terminal_seen_at is None:
            self.terminal_seen_at = now
            if self.stream_closed:
                self._definitive = "stream closed, status terminal"

    def on_stream_closed(self) -> None:
        self.stream_closed = True
        if self.is_terminal:
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

    def next_step(self, now: float, *, committed: bool = False, client_tool: bool = False) -> Step:
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
            settle_from = max(self.terminal_seen_at, self.last_event_at)
            return self._finish_after(
                settle_from + self.timing.settle_window, "status terminal, settled", now
            )
        if self.poll_in_flight:
            return WaitUntil(now + self.timing.slow_poll_interval)  # woken by the poll's answer
        due = self._next_poll_due(committed or self.stream_closed)
        return Poll() if now >= due else WaitUntil(due)

    def _finish_after(self, deadline: float, reason: str, now: float) -> Step:
        return Finish(reason) if now >= deadline else WaitUntil(deadline)

    def _next_poll_due(self, urgent: bool) -> float:
        # A committed message or a closed stream means the end is likely now: ask at once.
        idle = 0.0 if urgent else self.timing.poll_after_idle
        due = self.last_event_at + idle
        if self.last_poll_at is not None and self.last_poll_at >= self.last_event_at:
            quiet_for = self.last_poll_at - self.last_event_at
            slow = quiet_for >= self.timing.slow_poll_after
            due = max(
                due,
                self.last_poll_at + (self.timing.slow_poll_interval if slow else self.timing.poll_interval),
            )
        return due
