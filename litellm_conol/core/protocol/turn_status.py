"""Which polled status of a follow-up's session is the new turn's own
(docs/session-reuse.md#where-the-new-turn-starts).

After a turn is posted, conol's status may still show the previous turn's end for a while
(docs/protocol.md#readings). So on a follow-up a terminal status is believed only once the new turn has
shown up in the stream (the anchor, ``core/protocol/turn_boundary.py``) and then

* at once, when a non-terminal status was seen since the post (the session ran, then ended), or
* once the new turn's own content has been seen and the status stayed terminal for a settle window
  (a stale status turns non-terminal long before that; polling goes on meanwhile).

Until then it is as good as unknown: the answer does not settle on it and a failed status is not the
new turn's failure. A reattach (reading a turn an earlier attempt posted, its fate unknown) decides
that conol did not take that turn only with the same proof: a non-terminal status seen during the
read, then a terminal one held for a settle window of silence, with no trace of the turn anywhere
(no anchor and no stage-less content the boundary could not place). Pure: the driver passes the time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .end_policy import TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class Belief:
    """A polled status as the end policy may take it: ``status`` (``None``: unknown) seen at ``at``."""

    at: float
    status: str | None


@dataclass
class TurnStatus:
    """The statuses of one follow-up's session, from its post on. ``following``: the run continues a
    session (a new session's statuses are all its own)."""

    following: bool
    settle_window: float
    running_seen: bool = False  # a non-terminal status since the post
    terminal_since: float | None = None  # the current run of terminal statuses began then

    def believe(self, status: str | None, now: float, *, anchored: bool, own_content: bool) -> Belief:
        if status is None or not self.following:
            return Belief(now, status)
        if status.lower() not in TERMINAL_STATUSES:
            self.running_seen, self.terminal_since = True, None
            return Belief(now, status)
        if self.terminal_since is None:
            self.terminal_since = now
        if not anchored:
            return Belief(now, None)  # the previous turn's end: the new turn has not shown up
        if self.running_seen:
            return Belief(now, status)
        held = own_content and now - self.terminal_since >= self.settle_window
        return Belief(self.terminal_since, status) if held else Belief(now, None)

    def ended(self, status: str | None, now: float, quiet_since: float) -> bool:
        """Whether the session provably finished a run since the post: a non-terminal status seen,
        then a terminal one held for a settle window with the stream quiet (``quiet_since``: its last
        activity)."""
        if status is None or status.lower() not in TERMINAL_STATUSES or not self.running_seen:
            return False
        since = max(self.terminal_since if self.terminal_since is not None else now, quiet_since)
        return now - since >= self.settle_window
