"""Opening a turn other than by one create: a follow-up on a bound session, or an empty create whose
model is pinned with ``/model`` before the turn is posted (docs/protocol.md#follow-up-turns, #model-pinning).

Either one is a :class:`SessionStart` the driver calls instead of its create. What conol answers a
follow-up decides what happens next, by what it means (docs/session-reuse.md#when-a-follow-up-fails):

* the endpoint does not exist or is not allowed there (405, 501; a 404 while the session itself is
  still there) → :class:`FollowUpRefused` ``unsupported``: follow-ups stay off for that upstream;
* the session is gone (404, 410), busy (409, 423), the turn was refused (400, 413, 415, 422) or
  named an image asset conol no longer has (a 404 while the session is there, for a turn naming
  assets) → :class:`FollowUpRefused` for this conversation only: a new full session answers it;
* a rate limit, a server error or a timeout → the caller's usual (retryable) error; ``posted`` says
  whether conol may have taken the turn, so a retry reads that turn instead of posting it twice (and
  posts it after all, ``not_taken``, when the session finished without it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from ..core.errors import (
    AuthenticationFailed,
    ConolError,
    ModelDowngraded,
    PermissionDenied,
    RequestTimeout,
    UpstreamError,
    UpstreamUnavailable,
)
from ..core.protocol import paths
from ..core.protocol.follow_up import TurnBody, pinning_calls
from ..core.protocol.session_info import SessionInfo
from ..core.protocol.turn_boundary import TurnBoundary
from ..core.protocol.wire import CreateSessionBody, ImagePart
from .transport import SessionTransport

RefusalKind = Literal["unsupported", "gone", "busy", "rejected", "not_taken", "asset_gone"]
Posted = Literal["no", "unknown", "yes"]

UNSUPPORTED = frozenset({405, 501})
GONE = frozenset({404, 410})
BUSY = frozenset({409, 423})
REJECTED = frozenset({400, 413, 415, 422})
NOT_TAKEN = frozenset({429, 503})  # conol said so before doing anything: the turn was not taken


class FollowUpRefused(UpstreamError):
    """conol did not take a turn on an existing session; ``kind`` says why (module docstring)."""

    def __init__(self, message: str, *, kind: RefusalKind, status_code: int | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.kind: RefusalKind = kind


class FollowUpUnverified(UpstreamUnavailable):
    """A follow-up's stream that this client cannot read safely: it never showed the turn we posted
    within the first-event budget, or showed two turns past the session's history. 503, retryable;
    the caller's retry gets a new session, and session reuse is off for that upstream for a while
    (docs/session-reuse.md#fail-safe)."""


class TurnTransport(SessionTransport, Protocol):
    async def post_turn(self, session_id: str, body: TurnBody) -> None: ...

    async def set_model(self, session_id: str, body: dict[str, Any]) -> bool: ...

    async def get_raw(self, path: str, doing: str) -> tuple[int, bytes, dict[str, str]]: ...


class SessionStart(Protocol):
    """How a run gets its session and its turn going; ``boundary`` filters what the stream replays."""

    boundary: TurnBoundary

    async def open(self, transport: SessionTransport) -> SessionInfo: ...


async def _refusal_kind(
    transport: TurnTransport, session_id: str, status: int, names_assets: bool
) -> RefusalKind | None:
    """What a refused follow-up means; ``None``: not a refusal (the caller's usual error)."""
    if status in UNSUPPORTED:
        return "unsupported"
    if status == 404:
        # the session, the endpoint or an image the turn names: the session's own address tells
        # whether the session is there; then a turn naming assets may have named a gone one, which
        # is that conversation's, never proof the endpoint is missing
        try:
            found, _, _ = await transport.get_raw(paths.session(session_id), "checking the session")
        except ConolError:
            return "gone"
        if not 200 <= found < 300:
            return "gone"
        return "asset_gone" if names_assets else "unsupported"
    if status in GONE:
        return "gone"
    if status in BUSY:
        return "busy"
    if status in REJECTED:
        return "rejected"
    return None


@dataclass
class FollowUpStart:
    """The next turn on a session that holds the request's history; ``repin``: ``/model`` first;
    ``reattach``: this very turn was posted before with an unknown outcome, so it is only read."""

    session_id: str
    turn: TurnBody
    boundary: TurnBoundary
    model: str
    effort: str
    info: SessionInfo
    repin: bool = False
    reattach: bool = False
    waiting: bool = False  # the previous turn ended on tool calls: the session shows as running
    posted: Posted = field(default="no", init=False)

    async def open(self, transport: SessionTransport) -> SessionInfo:
        turns = cast(TurnTransport, transport)
        if self.reattach:
            self.posted = "yes"
            return self.info
        info = self.info
        if self.repin:
            for body in pinning_calls(self.model, self.effort):
                if not await turns.set_model(self.session_id, body):
                    raise FollowUpRefused(
                        f"conol did not re-pin session {self.session_id} to {self.model}", kind="rejected"
                    )
            info = SessionInfo(self.session_id, self.model, False)
        await self._post(turns)
        return info

    async def _post(self, transport: TurnTransport) -> None:
        self.posted = "unknown"
        try:
            await post_turn(transport, self.session_id, self.turn)
        except ConolError as exc:
            if not_taken(exc):
                self.posted = "no"
            raise
        self.posted = "yes"


def not_taken(exc: ConolError) -> bool:
    """A failed post conol surely did not take (a refusal, a dead token, a rate limit)."""
    refused = isinstance(exc, FollowUpRefused | AuthenticationFailed | PermissionDenied)
    return refused or int(exc.status_code) in NOT_TAKEN


async def post_turn(transport: TurnTransport, session_id: str, turn: TurnBody) -> None:
    """Post a turn; a refusal becomes :class:`FollowUpRefused` of its kind, anything else is raised
    as it is (401/403: the token, which a new session would not fix either)."""
    try:
        await transport.post_turn(session_id, turn)
    except (AuthenticationFailed, PermissionDenied):
        raise
    except ConolError as exc:
        names_assets = any(isinstance(part, ImagePart) for part in turn.messages)
        kind = await _refusal_kind(transport, session_id, int(exc.status_code), names_assets)
        if kind is None:
            raise
        raise FollowUpRefused(
            f"conol refused a turn on session {session_id} ({kind}): {exc.message}",
            kind=kind,
            status_code=int(exc.status_code),
        ) from None


@dataclass
class PinnedStart:
    """An empty create, then ``/model`` (always with ``always_pin``; in ``auto`` only when create says
    it ran another model), then the turn. ``pinned`` / ``create_honoured`` say what was found."""

    create: CreateSessionBody
    turn: TurnBody
    boundary: TurnBoundary
    always_pin: bool
    strict_model: bool = False
    pinned: bool = field(default=False, init=False)
    create_honoured: bool | None = field(default=None, init=False)

    async def open(self, transport: SessionTransport) -> SessionInfo:
        turns = cast(TurnTransport, transport)
        empty = self.create.model_copy(update={"messages": []})
        session_id, created = await transport.create_session(empty)
        model, effort = self.create.agent_model, self.create.agent_effort
        self.create_honoured = not created.model_downgraded
        effective, downgraded = created.effective_model, created.model_downgraded
        if self.always_pin or created.model_downgraded:
            self.pinned = True
            for body in pinning_calls(model, effort):
                self.pinned = await turns.set_model(session_id, body) and self.pinned
            effective, downgraded = (model, False) if self.pinned else (effective, True)
        if downgraded and self.strict_model:
            raise ModelDowngraded(
                f"conol ran {effective!r} instead of {model!r} (create ignored the model and pinning it "
                "with /model failed) and strict_model is on"
            )
        await post_turn(turns, session_id, self.turn)
        return SessionInfo(session_id, effective, downgraded)


def unanchored(boundary: TurnBoundary, start: object, budget: float, session_id: str) -> ConolError:
    """A follow-up whose stream did not show the turn we posted within the first-event budget: a
    reattach's turn may never have been taken (a timeout: the session is forgotten); a posted turn's
    stream that showed events but never ours is a reading this client cannot place
    (docs/session-reuse.md#fail-safe)."""
    if boundary.events_before_anchor == 0 or getattr(start, "reattach", False):
        return RequestTimeout(
            f"conol's stream of session {session_id} did not show the turn within {budget:g} s "
            "(first_event_timeout); abandoned"
        )
    return FollowUpUnverified(
        f"conol's stream of session {session_id} never showed the turn we posted: "
        f"{boundary.events_before_anchor} other event(s) in {budget:g} s (first_event_timeout)"
    )


def unseen_turn(boundary: TurnBoundary, start: object, session_id: str) -> ConolError | None:
    """The session provably finished a run since the post (``core/protocol/turn_status.py``) and its
    stream never showed the turn: on a reattach with no trace of it at all, conol never took the turn
    an earlier attempt posted (docs/session-reuse.md#when-a-follow-up-fails); on a turn we posted,
    this upstream's stream shows turns where this client cannot find them. ``None``: a reattach that
    saw content it cannot place, or a stream starting at a user log word for word the last recorded
    one (either may be the turn: only the budget ends that read, never a second post)."""
    if getattr(start, "reattach", False):
        if boundary.stageless_before_anchor or boundary.unsure:
            return None
        return FollowUpRefused(
            f"conol did not take the turn an earlier attempt posted on session {session_id}",
            kind="not_taken",
        )
    return FollowUpUnverified(
        f"conol's session {session_id} ran and finished, and its stream never showed the turn we posted"
    )
