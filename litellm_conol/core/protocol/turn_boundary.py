"""Where a follow-up's new turn begins in conol's event stream: at conol's echo of the turn we posted,
found by position, never by text (docs/session-reuse.md#where-the-new-turn-starts).

conol may replay a session's earlier turns on every connection of a follow-up's stream, may put the
new turn in new stages or append it to the stages it has, may send a stage's logs as cumulative
snapshots or as deltas, and may write after the client stopped reading (docs/protocol.md#readings).
The binding records where the session's history ended (``core/protocol/stage_marks.py``). The
**anchor** is the first user log past that record: in a stage the record holds, at a position past
its recorded logs; in a stage it does not know, anywhere. Until the anchor nothing is the new turn's:
the logs between the record's end and the anchor are the previous turn's tail (kept in ``tail_logs``,
never emitted; previews are messages in flight, never history). After it, a stage's logs past the
anchor and a stage first shown with or after it are the new turn's; so is a preview of a stage shown
before, once it differs from what that stage showed in the event that brought the anchor (the
previous message, which a stage may still show when the new turn opens in it). A second user log past
the anchor is a turn the boundary cannot place (``ambiguous``). Stages of earlier turns that the
record closed are the past wherever they appear.

Positions come from the stream's structure. A stage's first log on a connection is at position 0
when it is the stage's first log (the stream replays from the start), at the anchor's position when it
is the anchor (a reconnect starting at the new turn), on a reattach at the last recorded user log when
it is that log (the stream starts at the latest recorded turn), and otherwise at the record's end (the
stream starts at the new turn). Later events extend what the connection showed, cumulatively or as
deltas. Each log is digested once per connection: the boundary's work grows with the new events only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .event_fields import is_window_reset
from .stage_marks import SessionHistory, StageMark, log_digest, preview_digest, stage_key
from .wire import AssistantEvent, ConolEvent, HistoryDelta, LogEntry, PreviewEntry, Stage, StreamEvent

NO_HISTORY = SessionHistory()


@dataclass(frozen=True, slots=True)
class Anchor:
    stage: str
    position: int
    digest: str


@dataclass(slots=True)
class _Stage:
    """One stage over every connection, at absolute positions."""

    id: str
    mark: StageMark | None  # what the record holds of it (None: the record does not know it)
    logs: int = 0
    first: str = ""
    last_user: int = -1
    last_user_digest: str = ""
    floor: int = 0  # after the anchor, logs below this position are the past
    baseline: dict[str, str] = field(default_factory=dict)  # each preview entry's value at the anchor
    opened: set[str] = field(default_factory=set)  # preview entries the new turn changed
    new: bool = False  # first shown after the anchor, or unknown and first shown with it: all new
    tail: bool = False  # unknown to the record and shown before the anchor: the previous turn's tail

    @classmethod
    def of(cls, mark: StageMark) -> _Stage:
        return cls(mark.id, mark, mark.logs, mark.first, mark.last_user, mark.last_user_digest)

    def observe(self, position: int, log: LogEntry, digest: str) -> None:
        self.logs = max(self.logs, position + 1)
        if position == 0:
            self.first = digest
        if log.role == "user" and position >= self.last_user:
            self.last_user, self.last_user_digest = position, digest

    def as_mark(self) -> StageMark:
        return StageMark(self.id, self.logs, self.first, self.last_user, self.last_user_digest)


@dataclass(slots=True)
class _Shown:
    """What one connection showed of a stage's logs."""

    offset: int  # the absolute position of the connection's first log
    first_entry: LogEntry
    first: str = ""  # its digest
    count: int = 0
    last: str = ""


class TurnBoundary:
    """Filters a follow-up's events down to the new turn's; records where the session's history ends.

    ``known``: the binding's record (empty for a new session: everything is its own turn, only
    recorded). ``reattach``: this turn was posted before with an unknown outcome, so the stream may
    start at the latest recorded turn. After the anchor: ``own_content`` once the new turn said or
    did something; ``stageless`` when an answer came without stages (a next boundary cannot place
    it); ``ambiguous`` says why the stream cannot be read, when it cannot.
    """

    def __init__(
        self, known: SessionHistory = NO_HISTORY, *, record: bool = True, reattach: bool = False
    ) -> None:
        self._record = record or bool(known)
        self.known = known
        self.following = bool(known)
        self.reattach = reattach
        self.anchor: Anchor | None = None
        self.anchored = not self.following
        self.own_content = False
        self.stageless = False
        self.unnamed = False  # a stage without an id: no boundary can be recorded for the next turn
        self.echoed = self.following  # a user log was shown (a next boundary needs one to anchor on)
        self.ambiguous: str | None = None
        self.events_before_anchor = 0
        self.stageless_before_anchor = 0
        self.unsure = False  # a reattach placed a stream at the last recorded user log by its digest
        self.tail_logs: list[LogEntry] = []
        self._stages: dict[str, _Stage] = {mark.id: _Stage.of(mark) for mark in known.stages}
        self._shown: dict[str, _Shown] = {}
        self._fresh: set[str] = set()  # stages unknown to the record first shown in the current event
        self._saw_recorded = False  # this connection showed a stage the record holds
        self._live = self.anchored  # this connection has reached the anchor: what follows is new
        self._closed: dict[str, bool] = {}

    def reconnected(self) -> None:
        """A new connection may replay the session from its start: its positions start over, and
        what it shows before the anchor again is the past."""
        self._shown, self._saw_recorded = {}, False
        self._live = not self.following

    def filter(self, event: ConolEvent) -> ConolEvent | None:
        """The event as far as it belongs to the new turn; ``None`` when nothing of it does."""
        if not self._record:
            return event  # a new session nobody will continue: everything is its own turn
        if not isinstance(event, HistoryDelta):
            return self._other(event)
        if event.window_reset is not None and is_window_reset(event.window_reset):
            return event if self._live else None  # the assembler drops it whole
        if not self.anchored:
            self.events_before_anchor += 1
        return self._delta(event)

    def _delta(self, event: HistoryDelta) -> HistoryDelta | None:
        """Logs first, in every stage (they may hold the anchor), then previews: in the event that
        brings the anchor, a stage the stream showed before holds the previous message's previews
        (their values are the baseline a new message must differ from)."""
        anchored, self._fresh = self.anchored, set()
        named = [(stage, self._state(stage.id)) for stage in event.stages if stage.id is not None]
        logs = {state.id: self._logs(state, stage.logs) for stage, state in named if state is not None}
        anchor_event = self.anchored and not anchored
        kept: list[Stage] = []
        for stage in event.stages:
            if stage.id is None:
                self.unnamed = True
                if self._live:
                    kept.append(stage)
                continue
            state = self._stages.get(stage.id)
            if state is None or self._is_closed(stage.id):
                continue  # an earlier turn's stage: the past wherever it shows up
            previews = self._previews(state, stage.preview, anchor_event)
            if self._live and (logs[state.id] or previews):
                kept.append(stage.model_copy(update={"logs": logs[state.id], "preview": previews}))
        if not self.following:
            return event
        return event.model_copy(update={"stages": kept}) if kept else None

    def _other(self, event: ConolEvent) -> ConolEvent | None:
        content = isinstance(event, StreamEvent | AssistantEvent)
        if not self._live:
            if not self.anchored:
                self.events_before_anchor += 1
                self.stageless_before_anchor += content
            return None  # e.g. an earlier turn's done or error, replayed
        if content:
            self.stageless = self.own_content = True
        return event

    # -- one stage ------------------------------------------------------------------------------------

    def _is_closed(self, sid: str) -> bool:
        closed = self._closed.get(sid)
        if closed is None:
            closed = self._closed[sid] = bool(self.known.closed) and stage_key(sid) in self.known.closed
        return closed

    def _state(self, sid: str | None) -> _Stage | None:
        if sid is None or self._is_closed(sid):
            return None
        state = self._stages.get(sid)
        if state is None:
            # a stage the record does not know: the new turn's once the anchor was found; before it,
            # the anchor's own stage or, shown after a recorded stage, what the previous turn wrote late
            state = self._stages[sid] = _Stage(sid, None, new=self.anchored, tail=self._saw_recorded)
            self._fresh.add(sid)
        elif state.mark is not None:
            self._saw_recorded = True
        return state

    def _logs(self, state: _Stage, logs: list[LogEntry]) -> list[LogEntry]:
        kept: list[LogEntry] = []
        for position, log, digest in self._placed(state, logs):
            state.observe(position, log, digest)
            if not self.following:
                self.echoed = self.echoed or log.role == "user"
                continue
            if not self.anchored:
                self._before_anchor(state, position, log, digest)
                continue
            # a reconnect's replay is the past until it is back at the anchor
            self._live = self._live or _reaches(self.anchor, state.id, position)
            if self._live and position >= state.floor:
                if log.role == "user":
                    self.ambiguous = (
                        "conol's stream showed a second user turn past the session's history, after "
                        "the turn we posted: which one is this request's cannot be told"
                    )
                    continue
                kept.append(log)
                self.own_content = True
        return kept

    def _before_anchor(self, state: _Stage, position: int, log: LogEntry, digest: str) -> None:
        if state.mark is not None and position < state.mark.logs:
            return  # the recorded history
        if log.role == "user":
            self._anchor(Anchor(state.id, position, digest))
        elif state.mark is not None or state.tail:
            self.tail_logs.append(log)  # the previous turn's, written after the client stopped reading

    def _anchor(self, anchor: Anchor) -> None:
        """The new turn starts here: what every stage holds now is the past, its previews' values
        the baseline a new message must differ from."""
        self.anchor, self.anchored, self._live = anchor, True, True
        for state in self._stages.values():
            state.floor = anchor.position + 1 if state.id == anchor.stage else state.logs

    def _previews(
        self, state: _Stage, previews: list[PreviewEntry], anchor_event: bool
    ) -> list[PreviewEntry]:
        if not (self._live and self.following):
            return []  # before the anchor (or a reconnect's replay of it): messages of earlier turns
        kept: list[PreviewEntry] = []
        ranks: dict[str | None, int] = {}
        fresh = state.new or state.id in self._fresh  # first shown with the anchor, unknown to the record
        for entry in previews:
            rank = ranks.get(entry.type, 0)
            ranks[entry.type] = rank + 1
            key = f"{entry.type}#{rank}"
            if fresh or key in state.opened:
                kept.append(entry)
                continue
            digest = preview_digest(entry)
            if anchor_event:
                state.baseline[key] = digest  # the previous message, still shown
            elif digest != state.baseline.get(key):
                state.opened.add(key)
                kept.append(entry)
        if kept:
            self.own_content = True
        return kept

    # -- positions --------------------------------------------------------------------------------

    def _placed(self, state: _Stage, logs: list[LogEntry]) -> list[tuple[int, LogEntry, str]]:
        """The logs this connection shows for the first time, each with its absolute position."""
        if not logs:
            return []
        shown = self._shown.get(state.id)
        if shown is None:
            first = log_digest(logs[0])
            offset = self._start(state, first, logs[0].role == "user")
            shown = self._shown[state.id] = _Shown(offset, logs[0], first=first)
            start, index_base = 0, 0
        elif _extends(shown, logs):
            start, index_base = shown.count, 0  # a cumulative snapshot: everything again, then more
        else:
            start, index_base = 0, shown.count  # a delta: only what is new
        placed: list[tuple[int, LogEntry, str]] = []
        for index in range(start, len(logs)):
            log = logs[index]
            digest = shown.first if index + index_base == 0 else log_digest(log)
            placed.append((shown.offset + index_base + index, log, digest))
        if placed:
            shown.count += len(placed)
            shown.last = placed[-1][2]
        return placed

    def _start(self, state: _Stage, first: str, user: bool) -> int:
        """Where a connection's first log of a stage sits (module docstring). ``user``: that log is a
        user log: on a reattach, one placed at a recorded user log may be ours said word for word
        again (in the same second), so that read can never prove our turn was not taken; unless
        this session's turns came in stages of their own (the record closed some): then ours would
        not be in a recorded stage."""
        mark = state.mark
        recorded_user = self.reattach and user and mark is not None and not self.known.closed
        if not state.first or first == state.first:
            self.unsure = self.unsure or (recorded_user and bool(state.first))
            return 0
        anchor = self.anchor
        if anchor is not None and anchor.stage == state.id and first == anchor.digest:
            return anchor.position
        if mark is None:
            return state.logs
        if recorded_user and mark.last_user >= 0 and first == mark.last_user_digest:
            self.unsure = True  # the stream starts at the latest recorded turn, or at ours
            return mark.last_user
        return mark.logs

    # -- the record ---------------------------------------------------------------------------------

    def history(self) -> SessionHistory:
        """Where the session's history ends now, for the next turn's boundary. When the new turn came
        in stages of its own, the stages before it are closed (kept as id digests only)."""
        anchor = self.anchor
        opened = anchor.stage if anchor is not None and self._stages[anchor.stage].mark is None else None
        closed = set(self.known.closed)
        marks: list[StageMark] = []
        for state in self._stages.values():
            if opened is not None and not (state.new or state.id == opened):
                closed.add(stage_key(state.id))
            else:
                marks.append(state.as_mark())
        return SessionHistory(tuple(marks), frozenset(closed))


def _reaches(anchor: Anchor | None, sid: str, position: int) -> bool:
    return anchor is not None and anchor.stage == sid and position >= anchor.position


def _extends(shown: _Shown, logs: list[LogEntry]) -> bool:
    """Whether ``logs`` repeat what the connection showed (a cumulative snapshot) rather than add to
    it: as many or more, starting with the same first log (compared as parsed: it may be the whole
    first transcript, too long to digest on every event) and holding the last one at its place (by
    digest: a tool call's result is filled in later)."""
    count = shown.count
    if len(logs) < count or logs[0] != shown.first_entry:
        return False
    return count == 1 or log_digest(logs[count - 1]) == shown.last
