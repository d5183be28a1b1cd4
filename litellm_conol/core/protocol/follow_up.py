"""What a follow-up turn on a conol session sends (docs/protocol.md#follow-up-turns): the turn's body,
and the ``/model`` calls that pin the session's model and effort first (docs/protocol.md#model-pinning)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .wire import MessagePart


class TurnBody(BaseModel):
    """``POST /api/sessions/{id}/messages`` (docs/protocol.md#follow-up-turns): the new turn only, no source,
    no model."""

    messages: list[MessagePart]
    timezone: str

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()  # an image part's ``mediaType``


def pinning_calls(model: str, effort: str | None) -> list[dict[str, Any]]:
    """The bodies of the ``/model`` calls that pin a session, in order: the model call resets the
    effort to null, so the effort comes last."""
    bodies: list[dict[str, Any]] = [{"agentModel": model, "agentEffort": None}]
    if effort is not None:
        bodies.append({"agentEffort": effort})
    return bodies
