"""Opening a turn other than by one create: a follow-up on a bound session, or an empty create whose
model is pinned with ``/model`` before the turn is posted (docs/protocol.md#follow-up-turns, #model-pinning).

Either one is a :class:`SessionStart` the driver calls instead of its create. A follow-up conol
refuses (any answer but 2xx, 401/403 aside) raises :class:`FollowUpRefused`, which the provider
answers with a new full session: nothing was streamed yet, so the caller sees the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ..core import (
    AuthenticationFailed,
    ConolError,
    CreateSessionBody,
    ModelDowngraded,
    PermissionDenied,
    SessionInfo,
    TurnBody,
    TurnBoundary,
    UpstreamError,
    model_bodies,
)
from ._transport import SessionTransport


class FollowUpRefused(UpstreamError):
    """conol did not take a turn on an existing session (not supported, the session is gone, …)."""


class TurnTransport(SessionTransport, Protocol):
    async def post_turn(self, session_id: str, body: TurnBody) -> None: ...

    async def set_model(self, session_id: str, body: dict[str, Any]) -> bool: ...


class SessionStart(Protocol):
    """How a run gets its session and its turn going; ``boundary`` filters what the stream replays."""

    boundary: TurnBoundary

    async def open(self, transport: SessionTransport) -> SessionInfo: ...


async def _post(transport: TurnTransport, session_id: str, turn: TurnBody) -> None:
    try:
        await transport.post_turn(session_id, turn)
    except (AuthenticationFailed, PermissionDenied):
        raise  # the token, not the follow-up: a new session would fail the same way
    except ConolError as exc:
        raise FollowUpRefused(
            f"conol refused a turn on session {session_id}: {exc.message}", status_code=exc.status_code
        ) from None


@dataclass
class FollowUpStart:
    """The next turn on a session that holds the request's history; ``repin``: ``/model`` first."""

    session_id: str
    turn: TurnBody
    boundary: TurnBoundary
    model: str
    effort: str
    repin: bool = False

    async def open(self, transport: SessionTransport) -> SessionInfo:
        turns = cast(TurnTransport, transport)
        if self.repin:
            for body in model_bodies(self.model, self.effort):
                if not await turns.set_model(self.session_id, body):
                    raise FollowUpRefused(f"conol did not re-pin session {self.session_id} to {self.model}")
        await _post(turns, self.session_id, self.turn)
        return SessionInfo(self.session_id, self.model, False)


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
            for body in model_bodies(model, effort):
                self.pinned = await turns.set_model(session_id, body) and self.pinned
            effective, downgraded = (model, False) if self.pinned else (effective, True)
        if downgraded and self.strict_model:
            raise ModelDowngraded(
                f"conol ran {effective!r} instead of {model!r} (create ignored the model and pinning it "
                "with /model failed) and strict_model is on"
            )
        await _post(turns, session_id, self.turn)
        return SessionInfo(session_id, effective, downgraded)
