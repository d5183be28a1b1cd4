"""What a binding records of a session's stages, so the next follow-up's boundary can find its turn
(``core/protocol/turn_boundary.py``; docs/session-reuse.md#where-the-new-turn-starts).

Per stage, only what that boundary reads: how many log entries it held (positions below are the
past), the digest of its first entry (a stream that replays starts there), and where its last user
log was and its digest (a reattach's stream may start at the latest recorded turn). No per-log
digests, no text: a binding stays small however long the session is.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .wire import LogEntry, PreviewEntry

DIGEST_CHARS = 16
CLOSED_CHARS = 12


def _digest(payload: object) -> str:
    raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:DIGEST_CHARS]


def log_digest(log: LogEntry) -> str:
    """A log entry's identity: its role, type and content, a tool call without its result (conol
    fills the result in later: the same entry, before and after)."""
    content: object = log.content
    if isinstance(content, list):
        content = [[use.name, use.type, use.text, use.input] for use in content]
    return _digest([log.role, log.type, content])


def preview_digest(entry: PreviewEntry) -> str:
    content: object = entry.content
    if isinstance(content, list):
        content = [[part.type, part.text] for part in content]
    return _digest([entry.role, entry.type, content])


@dataclass(frozen=True, slots=True)
class StageMark:
    """One stage as the session's history left it."""

    id: str
    logs: int = 0  # how many log entries it held
    first: str = ""  # the digest of its first log entry
    last_user: int = -1  # the position of its last user log (-1: none)
    last_user_digest: str = ""


def stage_key(sid: str) -> str:
    """A closed stage as the binding keeps it: a short digest of its id."""
    return hashlib.sha256(sid.encode()).hexdigest()[:CLOSED_CHARS]


@dataclass(frozen=True, slots=True)
class SessionHistory:
    """Where a session's history ended: the stages a next turn may continue, and the ids (digests)
    of the stages earlier turns closed (conol opened new ones for a later turn), which are the past
    wherever they show up again."""

    stages: tuple[StageMark, ...] = ()
    closed: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.stages or self.closed)

    def to_json(self) -> dict[str, object]:
        stages = [[m.id, m.logs, m.first, m.last_user, m.last_user_digest] for m in self.stages]
        return {"stages": stages, "closed": sorted(self.closed)}

    @classmethod
    def of(cls, raw: object) -> SessionHistory:
        """The inverse of :meth:`to_json`; ``ValueError`` for anything else."""
        if not isinstance(raw, dict) or not isinstance(raw.get("stages"), list):
            raise ValueError("a session history must be {stages, closed}")
        closed = raw.get("closed", [])
        if not isinstance(closed, list) or not all(isinstance(c, str) for c in closed):
            raise ValueError("closed stages must be a list of digests")
        return cls(tuple(_mark_of(item) for item in raw["stages"]), frozenset(closed))


def _mark_of(item: object) -> StageMark:
    if not (isinstance(item, list) and len(item) == 5):
        raise ValueError("a stage must be [id, logs, first, last user, its digest]")
    sid, logs, first, last_user, user_digest = item
    if not (isinstance(sid, str) and isinstance(first, str) and isinstance(user_digest, str)):
        raise ValueError("a stage's id and digests must be strings")
    if not (isinstance(logs, int) and isinstance(last_user, int) and logs >= 0 and last_user < logs):
        raise ValueError("a stage's positions must be integers within its logs")
    return StageMark(sid, logs, first, last_user, user_digest)
