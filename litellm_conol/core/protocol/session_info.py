"""What a finished session run reports: plain data shared by the client (which fills it) and the
provider (which turns it into ``provider_specific_fields``)."""

from __future__ import annotations

from dataclasses import dataclass


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
    unreadable: int = 0  # events of a known type whose shape we could not read
    unreadable_reason: str | None = None  # the first one's, named
