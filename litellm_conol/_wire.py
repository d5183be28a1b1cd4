"""conol's wire types (spec §2), as pydantic models.

Request bodies are strict (we build them). Everything conol sends is parsed leniently: unknown
fields are ignored and every field we read has a default, because the upstream shapes are only
*observed*, not documented. Fields we never use are not declared, so they cost nothing to parse.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

Effort = Literal["low", "medium", "high", "max"]


# --- what we send -------------------------------------------------------------------------------


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    content: str


class ToolSpec(BaseModel):
    """A tool in conol's (Anthropic) format."""

    name: str
    description: str = ""
    input_schema: dict[str, Any]


class Source(BaseModel):
    type: Literal["home"] = "home"


class CreateSessionBody(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    source: Source = Field(default_factory=Source)
    messages: list[TextPart]
    timezone: str
    agent_model: str = Field(serialization_alias="agentModel")
    agent_effort: Effort = Field(default="low", serialization_alias="agentEffort")
    tools: list[ToolSpec] | None = None

    def to_json(self) -> bytes:
        # `tools` is omitted, not null, when the request has none (spec §2.1).
        return self.model_dump_json(by_alias=True, exclude_none=True).encode()


# --- what conol sends ---------------------------------------------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _SessionRef(_Lenient):
    id: str | None = None


class CreateSessionResult(_Lenient):
    session_id: str | None = Field(default=None, alias="sessionId")
    id: str | None = None
    session: _SessionRef | None = None
    model_downgraded: bool = Field(default=False, alias="modelDowngraded")
    effective_model: str | None = Field(default=None, alias="effectiveModel")

    def resolved_id(self) -> str | None:
        """The session id, wherever this response put it (``sessionId``, ``id`` or ``session.id``)."""
        return self.session_id or self.id or (self.session.id if self.session else None)


class SessionStatus(_Lenient):
    status: str | None = None


class AuthSession(_Lenient):
    """``GET /api/auth/get-session`` (spec §1): the token's session while it is alive.

    better-auth answers a dead token with ``null`` (or no ``session``) rather than an error status.
    """

    session: _SessionRef | None = None


class ContentPart(_Lenient):
    type: str | None = None
    text: str | None = None


class ToolUse(_Lenient):
    """One tool invocation inside a ``tool_call`` log entry."""

    name: str | None = None
    type: str | None = None
    text: str | None = None  # when the list holds text parts rather than tool uses
    input: Any = None
    result: list[ContentPart] | str | None = None


class PreviewEntry(_Lenient):
    role: str | None = None
    type: str | None = None
    content: str | list[ContentPart] | None = None


class LogEntry(_Lenient):
    role: str | None = None
    type: str | None = None
    # text for messages, a list of ToolUse for tool calls; both are ToolUse-compatible dicts.
    content: str | list[ToolUse] | None = None


class Stage(_Lenient):
    id: str | None = None
    logs: list[LogEntry] = Field(default_factory=list)
    preview: list[PreviewEntry] = Field(default_factory=list)


class HistoryDelta(_Lenient):
    type: Literal["history_delta"]
    stages: list[Stage] = Field(default_factory=list)


class ErrorEvent(_Lenient):
    type: Literal["error"]
    message: str | None = None
    error: str | None = None


class DoneEvent(_Lenient):
    type: Literal["done"]


ConolEvent = HistoryDelta | ErrorEvent | DoneEvent

# Discriminated by the literal `type`, so an event is validated against one model only.
_event_adapter: TypeAdapter[ConolEvent] = TypeAdapter(Annotated[ConolEvent, Field(discriminator="type")])

DONE_MARKER = "[DONE]"
_DONE_MARKER_BYTES = DONE_MARKER.encode()


def parse_event(data: str | bytes) -> ConolEvent | None:
    """One SSE ``data:`` payload → an event; ``None`` for junk, unknown types and heartbeats.

    Lines that are not valid JSON, or not an event we understand, are skipped rather than fatal
    (spec §2.3). ``[DONE]`` is reported as a ``done`` event.

    ``data`` may be the raw bytes of the payload (no UTF-8 decode, split or join of a text copy: a
    long answer's cumulative snapshots are tens of MB); the result is the same as for the decoded
    text, invalid UTF-8 included (decoded with replacement characters, as a text reader would).
    """
    if isinstance(data, bytes | bytearray):
        if data.strip() == _DONE_MARKER_BYTES:
            return DoneEvent(type="done")
        try:
            return _event_adapter.validate_json(data)
        except ValidationError:
            try:
                data.decode()
            except UnicodeDecodeError:
                return parse_event(data.decode(errors="replace"))
            return None
    if data.strip() == DONE_MARKER:
        return DoneEvent(type="done")
    try:
        return _event_adapter.validate_json(data)
    except ValidationError:
        return None
