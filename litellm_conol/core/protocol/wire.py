"""conol's wire types (docs/protocol.md#create), as pydantic models.

Request bodies are strict (we build them). Everything conol sends is parsed leniently: unknown
fields are ignored and every field we read has a default, because the upstream shapes are only
*observed*, not documented. Fields we never use are not declared, so they cost nothing to parse.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

# Both effort vocabularies (low…max and minimal…xhigh, docs/protocol.md#effort-words): a ladder in
# models.json may use either; what a request asks for is mapped onto it in ``core/models/effort.py``.
Effort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]


# --- what we send -------------------------------------------------------------------------------


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    content: str


class ImagePart(BaseModel):
    """An uploaded image in a turn (docs/protocol.md#assets): ``content`` is ``/api/assets/<id>``; while the
    request is rendered and not yet uploaded, a pending name (``PENDING_PREFIX`` + key, in
    ``core/request/images.py``)."""

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["image"] = "image"
    content: str
    media_type: str = Field(serialization_alias="mediaType")


MessagePart = TextPart | ImagePart


class ToolSpec(BaseModel):
    """A tool in conol's (Anthropic) format; frozen: one converted tool serves every request that
    sends the same tools (``core/request/render.py``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any]


class Source(BaseModel):
    type: Literal["home"] = "home"


class CreateSessionBody(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    source: Source = Field(default_factory=Source)
    messages: list[MessagePart]
    timezone: str
    agent_model: str = Field(serialization_alias="agentModel")
    agent_effort: Effort = Field(default="low", serialization_alias="agentEffort")
    tools: list[ToolSpec] | None = None

    def to_json(self) -> bytes:
        # `tools` is omitted, not null, when the request has none (docs/protocol.md#create).
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


# Fields other clients read off conol's events (docs/protocol.md#stream) are declared ``Any``: a value of an
# unexpected type then costs nothing but itself (``event_fields`` reads them), never the event it rides on.


class HistoryDelta(_Lenient):
    type: Literal["history_delta"]
    stages: list[Stage] = Field(default_factory=list)
    context_usage: Any = Field(default=None, alias="contextUsage")
    window_reset: Any = Field(default=None, alias="windowReset")


class ErrorEvent(_Lenient):
    type: Literal["error"]
    message: str | None = None
    error: str | None = None
    context_usage: Any = Field(default=None, alias="contextUsage")


class DoneEvent(_Lenient):
    type: Literal["done"]
    context_usage: Any = Field(default=None, alias="contextUsage")


class AssistantEvent(_Lenient):
    """``type: "assistant"``: the final text, under ``content``, ``message`` or ``text``
    (docs/protocol.md#stream)."""

    type: Literal["assistant"]
    content: Any = None
    message: Any = None
    text: Any = None
    context_usage: Any = Field(default=None, alias="contextUsage")


class StreamEvent(_Lenient):
    """``type: "stream_event"``: a delta to append, under ``delta``, ``content`` or ``text``
    (or ``event.delta``, as Anthropic's agent SDK nests it)."""

    type: Literal["stream_event"]
    delta: Any = None
    content: Any = None
    text: Any = None
    event: Any = None
    context_usage: Any = Field(default=None, alias="contextUsage")


class UsageEvent(_Lenient):
    """An event of a type we do not read that carries ``contextUsage`` (it "can ride on any event")."""

    type: str | None = None
    context_usage: Any = Field(default=None, alias="contextUsage")


ConolEvent = HistoryDelta | ErrorEvent | DoneEvent | AssistantEvent | StreamEvent | UsageEvent
_TypedEvent = HistoryDelta | ErrorEvent | DoneEvent | AssistantEvent | StreamEvent

# Discriminated by the literal `type`, so an event is validated against one model only.
_event_adapter: TypeAdapter[_TypedEvent] = TypeAdapter(Annotated[_TypedEvent, Field(discriminator="type")])

DONE_MARKER = "[DONE]"
_DONE_MARKER_BYTES = DONE_MARKER.encode()
_KNOWN_TYPES = frozenset({"history_delta", "error", "done", "assistant", "stream_event"})


def parse_event(data: str | bytes) -> ConolEvent | None:
    """One event payload → an event; ``None`` for junk, unknown types and heartbeats.

    Lines that are not valid JSON, or not an event we understand, are skipped rather than fatal
    (docs/protocol.md#stream). ``[DONE]`` is reported as a ``done`` event. A ``history_delta`` whose shape
    drifted where the meaning is still clear is read anyway (``_normalized_delta``); what stays unreadable is
    ``None`` here and ``unreadable_reason()`` says why.

    ``data`` may be the raw bytes of the payload (no UTF-8 decode, split or join of a text copy: a
    long answer's cumulative snapshots are tens of MB); the result is the same as for the decoded
    text, invalid UTF-8 included (decoded with replacement characters, as a text reader would).
    """
    if isinstance(data, bytes | bytearray):
        if data.strip() == _DONE_MARKER_BYTES:
            return DoneEvent(type="done")
        try:
            return _checked(_event_adapter.validate_json(data), data)
        except ValidationError:
            try:
                data.decode()
            except UnicodeDecodeError:
                return parse_event(data.decode(errors="replace"))
            return _parse_tolerantly(data)
    if data.strip() == DONE_MARKER:
        return DoneEvent(type="done")
    try:
        return _checked(_event_adapter.validate_json(data), data)
    except ValidationError:
        return _parse_tolerantly(data)


def unreadable_reason(data: str | bytes) -> str | None:
    """Why a payload of a known event type could not be read: the unexpected shape, named. ``None``
    for what is rightly skipped (not JSON, not an object, an unknown type) and for readable events."""
    raw = _json_object(data)
    if raw is None or raw.get("type") not in _KNOWN_TYPES:
        return None
    try:
        _event_adapter.validate_python(_normalized(raw))
    except ValidationError as exc:
        errors = exc.errors()
        where = _field_path(errors[0]["loc"][1:])  # [0] is the event type
        expected = dict.fromkeys(e["msg"] for e in errors if _field_path(e["loc"][1:]) == where)
        shape = _shape(errors[0]["input"])
        return f"a {raw['type']} event whose {where or 'body'} is {shape} ({' or '.join(expected)})"
    return None


def _field_path(loc: tuple[int | str, ...]) -> str:
    """``stages.0.preview.0.content``: the fields and indexes of an error's location, without the
    union member labels pydantic puts in it (``str``, ``list[ContentPart]``)."""
    return ".".join(
        str(p) for p in loc if isinstance(p, int) or (p.isidentifier() and p.islower() and p != "str")
    )


# --- drift where the meaning is clear ------------------------------------------------------------
# The hot path above validates conol's JSON in one go. Only an event that fails it, or a
# history_delta that came out empty-handed, is looked at again here, in Python.


def _checked(event: ConolEvent, data: str | bytes) -> ConolEvent:
    """``event``, unless it is a history_delta that read nothing at all, where its JSON may hold
    content one level deeper (a wrapping object, stages nested in stages): then the tolerant reading.
    An event with content in any stage is taken as it is, so a long answer is never parsed twice."""
    if isinstance(event, HistoryDelta) and not any(stage.logs or stage.preview for stage in event.stages):
        return _parse_tolerantly(data) or event
    return event


def _parse_tolerantly(data: str | bytes) -> ConolEvent | None:
    raw = _json_object(data)
    if raw is None:
        return None
    if raw.get("type") not in _KNOWN_TYPES:
        return _untyped_event(raw)
    try:
        return _event_adapter.validate_python(_normalized(raw))
    except ValidationError:
        return None


def _untyped_event(raw: dict[str, Any]) -> ConolEvent | None:
    """``{"done": true}`` (another client's end marker, docs/protocol.md#end-of-answer) is ``done``;
    another event with ``contextUsage`` is read for that alone; anything else is skipped."""
    if "type" not in raw and raw.get("done") is True:
        return DoneEvent(type="done", contextUsage=raw.get("contextUsage"))
    if raw.get("contextUsage") is not None:
        return UsageEvent(type=str(raw.get("type")), contextUsage=raw["contextUsage"])
    return None


def _json_object(data: str | bytes) -> dict[str, Any] | None:
    try:
        raw = json.loads(data)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


def _normalized(raw: dict[str, Any]) -> dict[str, Any]:
    return _normalized_delta(raw) if raw.get("type") == "history_delta" else raw


def _normalized_delta(raw: dict[str, Any]) -> dict[str, Any]:
    """Readings of a drifted history_delta whose meaning is clear: ``stages`` inside one wrapping
    object; ``stages`` keyed by stage id; a stage's content inside one wrapping object; a single
    ``logs``/``preview`` entry or content part where a list belongs."""
    stages = raw.get("stages")
    if not stages:
        wrapper = next((v for v in raw.values() if isinstance(v, dict) and "stages" in v), None)
        stages = wrapper["stages"] if wrapper is not None else stages
    if isinstance(stages, dict):
        stages = [{"id": key, **value} if isinstance(value, dict) else value for key, value in stages.items()]
    if isinstance(stages, list):
        stages = [_normalized_stage(stage) for stage in stages]
    return {**raw, "stages": stages}


_STAGE_KEYS = ("logs", "preview")


def _normalized_stage(stage: Any) -> Any:
    if not isinstance(stage, dict):
        return stage
    if not any(key in stage for key in _STAGE_KEYS):
        inner = next(
            (v for v in stage.values() if isinstance(v, dict) and any(k in v for k in _STAGE_KEYS)), None
        )
        if inner is not None:
            stage = {"id": stage.get("id"), **inner}
    stage = dict(stage)
    for key in _STAGE_KEYS:
        entries = stage.get(key)
        if isinstance(entries, dict):
            entries = [entries]
        if isinstance(entries, list):
            stage[key] = [_normalized_entry(entry) for entry in entries]
    return stage


def _normalized_entry(entry: Any) -> Any:
    if isinstance(entry, dict) and isinstance(entry.get("content"), dict):
        return {**entry, "content": [entry["content"]]}
    return entry


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "an object with keys " + (", ".join(sorted(map(str, value))[:8]) or "none")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return f"{type(value).__name__} {json.dumps(value)[:40]}"
