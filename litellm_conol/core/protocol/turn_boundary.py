"""Where a follow-up's new turn begins in conol's event stream, found by structure (never by text).

conol may replay a session's earlier turns on every connection of a follow-up's stream, and may put
the new turn in new stages or append it to the stages it already has (docs/protocol.md#follow-up-turns,
#readings). The binding records where the session's history ended: every stage id and a digest of
each of its log entries, in order (:data:`StageLogs`). :class:`TurnBoundary` compares each snapshot
with that record: a stage it does not name is the new turn's; in a stage it names, the logs beyond
the recorded ones are, and its previews are once the new turn has reached it. Everything else — the
earlier turns' stages, their previews, a replayed ``done`` or ``error``, a terminal status — is the
past. Matching text (a short "ok", a quoted message) never decides.

A stage's logs may come as cumulative snapshots (each event holds them all) or as deltas (each
event holds the new ones); a connection that starts at the new turn holds none of the earlier ones.
:meth:`TurnBoundary._place` reads all three the same way: by comparing digests, position by position.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from .event_fields import is_window_reset
from .wire import ConolEvent, HistoryDelta, LogEntry, Stage

# (stage id, the digests of its log entries in order), in the order the stages appeared
StageLogs = tuple[tuple[str, tuple[str, ...]], ...]


def log_digest(log: LogEntry) -> str:
    """A log entry's identity: its role, type and content, a tool call without its result (conol
    fills the result in later: the same entry, before and after)."""
    content: object = log.content
    if isinstance(content, list):
        content = [[use.name, use.type, use.text, use.input] for use in content]
    payload = json.dumps([log.role, log.type, content], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass
class _Connection:
    """What one connection of the stream showed; a reconnect replays from the start again."""

    started: bool
    seen: dict[str, list[str]] = field(default_factory=dict)  # each stage's logs as this stream shows them
    offset: dict[str, int] = field(default_factory=dict)  # the absolute index of the stream's first log
    open: set[str] = field(default_factory=set)  # known stages this connection saw the new turn reach


class TurnBoundary:
    """Filters a follow-up's events down to the new turn's; records the session's stage logs.

    ``known``: the history the binding recorded (empty for a new session: everything is new).
    ``started``: the new turn has shown up (on any connection): a terminal status is now its own.
    """

    def __init__(self, known: StageLogs = (), *, record: bool = True) -> None:
        self._record = record or bool(known)  # a new session nobody will continue: nothing to record
        self._known: dict[str, tuple[str, ...]] = {sid: tuple(logs) for sid, logs in known}
        self._history: dict[str, tuple[str, ...]] = dict(self._known)
        self.started = not self._known
        self.unnamed = False  # a stage without an id: no boundary can be recorded for the next turn
        self._conn = _Connection(started=self.started)

    @property
    def known(self) -> StageLogs:
        return tuple(self._known.items())

    def history(self) -> StageLogs:
        """The session's stage logs as far as seen: the recorded ones, then this turn's."""
        return tuple(self._history.items())

    def reconnected(self) -> None:
        """A new connection replays the session from its start: its positions start over."""
        self._conn = _Connection(started=not self._known)

    def filter(self, event: ConolEvent) -> ConolEvent | None:
        """The event as far as it belongs to the new turn; ``None`` when nothing of it does."""
        if not self._record:
            return event  # everything of a new session is its own turn
        if not isinstance(event, HistoryDelta):
            return event if self._conn.started else None  # e.g. an earlier turn's done, replayed
        if event.window_reset is not None and is_window_reset(event.window_reset):
            return event  # read by nobody (the assembler drops it whole), so it marks nothing
        stages = [kept for stage in event.stages if (kept := self._stage(stage)) is not None]
        if not stages:
            return None
        return event.model_copy(update={"stages": stages})

    def _stage(self, stage: Stage) -> Stage | None:
        sid = stage.id
        if sid is None:
            self.unnamed = True
            return stage if self._conn.started else None
        new_from = self._place(sid, stage.logs)
        if sid not in self._known:
            self._mark_started()
            return stage
        if new_from < len(stage.logs):
            self._conn.open.add(sid)
            self._mark_started()
        if sid not in self._conn.open:
            return None  # the earlier turns' logs and previews
        return stage.model_copy(update={"logs": stage.logs[new_from:]})

    def _mark_started(self) -> None:
        self._conn.started = self.started = True

    def _place(self, sid: str, logs: Sequence[LogEntry]) -> int:
        """Where in ``logs`` the new turn's entries begin (``len(logs)``: none of them are new);
        records the stage's logs as far as this connection showed them."""
        digests = [log_digest(log) for log in logs]
        seen = self._conn.seen.get(sid, [])
        cumulative = len(digests) >= len(seen) and digests[: len(seen)] == seen
        start = 0 if cumulative else len(seen)  # a delta continues what this stream showed
        view = digests if cumulative else seen + digests
        self._conn.seen[sid] = view
        known = self._known.get(sid, ())
        if view and sid not in self._conn.offset:
            self._conn.offset[sid] = _stream_start(view[0], known)
        offset = self._conn.offset.get(sid, 0)
        full = known[:offset] + tuple(view)
        if len(full) >= len(self._history.get(sid, ())):
            self._history[sid] = full
        return _first_new(digests, offset + start, known)


def _stream_start(first: str, known: Sequence[str]) -> int:
    """Where a connection's first log of a stage sits in the recorded ones: 0 for a replay from the
    start, its place for a stream that starts at a later turn (no replay: the session's latest
    turn), past them all for a log the record does not hold (the new turn's)."""
    if known and known[0] == first:
        return 0
    for position in range(len(known) - 1, 0, -1):
        if known[position] == first:
            return position
    return len(known)


def _first_new(digests: Sequence[str], first_position: int, known: Sequence[str]) -> int:
    """The index of the first entry beyond the recorded history, or that differs from it."""
    for index, digest in enumerate(digests):
        position = first_position + index
        if position >= len(known) or known[position] != digest:
            return index
    return len(digests)


def stage_logs_json(stages: StageLogs) -> list[list[object]]:
    return [[sid, list(logs)] for sid, logs in stages]


def stage_logs_of(raw: object) -> StageLogs:
    """The inverse of :func:`stage_logs_json`; ``ValueError`` for anything else."""
    if not isinstance(raw, list):
        raise ValueError("stages must be a list")
    out: list[tuple[str, tuple[str, ...]]] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise ValueError("a stage must be [id, [digests]]")
        logs = item[1]
        if not isinstance(logs, list) or not all(isinstance(d, str) for d in logs):
            raise ValueError("a stage's logs must be digests")
        out.append((item[0], tuple(logs)))
    return tuple(out)
