"""Which polled status of a follow-up's session is the new turn's own
(docs/session-reuse.md#where-the-new-turn-starts).

After a turn is posted, conol's status may still show the previous turn's end for a while
(docs/protocol.md#readings). So on a follow-up a terminal status is believed only once the new turn has
shown up in the stream (the anchor, ``core/protocol/turn_boundary.py``) and then

* at once, when a non-terminal status proves the session ran again since the post (polled a
  settle window or more after it: a status lags by less than that; and when the previous turn ended
  on tool calls, the session shows as running while it waits, so only once a terminal status came
  first), or when it says the turn completed (not failed) and the new turn's own message was
  committed (the answer is complete: the status only confirms it), or
* once the new turn's own content has been seen and the status stayed terminal for a settle window
  after it (a stale status turns non-terminal long before that; polling goes on meanwhile), unless
  it says failed: the new turn's own failure comes as its ``error`` event.

Until then it is as good as unknown: the answer does not settle on it and a failed status is not the
new turn's failure. That the session ran something since the post and finished without the stream
showing the turn (``ended``) takes the same proof of a new run, then a terminal status held for a
settle window of silence: a reattach (reading a turn an earlier attempt posted, its fate
unknown) then decides conol did not take that turn, when nothing it could not place came either; a
posted turn's stream is then one this client cannot read. Pure: the driver passes the time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .end_policy import FAILED_STATUSES, TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class Belief:
    """A polled status as the end policy may take it: ``status`` (``None``: unknown) seen at ``at``."""

    at: float
    status: str | None


@dataclass
class TurnStatus:
    """The statuses of one follow-up's session, from its post (at ``posted_at``) on. ``following``:
    the run continues a session (a new session's statuses are all its own). ``waiting``: the previous
    turn ended on tool calls, so the session shows as running while conol's agent waits on them."""

    following: bool
    settle_window: float
    posted_at: float = 0.0
    waiting: bool = False
    fresh_terminal: bool = False  # a terminal status a settle window or more after the post
    ran: bool = False  # a non-terminal status that proves the session ran again since the post
    terminal_since: float | None = None  # the current run of terminal statuses began then
    content_at: float | None = None  # when the new turn's own content was first seen

    def believe(
        self, status: str | None, now: float, *, anchored: bool, own_content: bool, committed: bool = False
    ) -> Belief:
        if status is None or not self.following:
            return Belief(now, status)
        # a status lags behind by less than a settle window: one polled earlier may be the past's
        fresh = now - self.posted_at >= self.settle_window
        if status.lower() not in TERMINAL_STATUSES:
            # running is a new run, unless the previous turn waits on a tool's result (then it shows
            # as running anyway, until a terminal status comes)
            self.ran = self.ran or (fresh and (self.fresh_terminal or not self.waiting))
            self.terminal_since = None
            return Belief(now, status)
        self.fresh_terminal = self.fresh_terminal or fresh
        if self.terminal_since is None:
            self.terminal_since = now
        if not anchored:
            return Belief(now, None)  # the previous turn's end: the new turn has not shown up
        if self.ran:
            return Belief(now, status)
        if status.lower() in FAILED_STATUSES:
            return Belief(now, None)  # the new turn's own failure also comes as its error event
        if own_content and self.content_at is None:
            self.content_at = now
        if committed:
            return Belief(now, status)
        since = max(self.terminal_since, self.content_at if self.content_at is not None else now)
        held = own_content and now - since >= self.settle_window
        return Belief(since, status) if held else Belief(now, None)

    def ended(self, status: str | None, now: float, quiet_since: float) -> bool:
        """Whether the session provably finished a run since the post: running again, then terminal
        for a settle window with the stream quiet (``quiet_since``: its last activity)."""
        if status is None or status.lower() not in TERMINAL_STATUSES or not self.ran:
            return False
        since = max(self.terminal_since if self.terminal_since is not None else now, quiet_since)
        return now - since >= self.settle_window
