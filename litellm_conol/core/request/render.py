"""OpenAI-shaped request pieces → conol's request: the transcript and the tools (the effort: ``_effort``).

conol only ever receives a transcript of parts, never roles (docs/protocol.md#create), so each OpenAI message
becomes one text part with a visible marker for who said it, then one image part per image in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BadRequest
from ..memo import DigestMemo, json_digest
from ..protocol.wire import ImagePart, MessagePart, TextPart, ToolSpec
from .images import ImageLimits, ImageSource, image_of_part
from .tool_hygiene import is_deferred, schema_keywords_only

BUILTIN_TOOLS = frozenset({"WebSearch", "Fetch", "SetIntention", "WriteNote", "ReadNote"})

_KNOWN_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


# --- messages -----------------------------------------------------------------------------------

IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})


def render_messages(
    messages: Sequence[Mapping[str, Any]],
    limits: ImageLimits | None = None,
    images: dict[str, ImageSource] | None = None,
) -> list[MessagePart]:
    """Render the whole conversation, in order, as conol parts: one text part per non-empty message,
    followed by a pending image part for each of its images (collected into ``images`` by key)."""
    if not messages:
        raise BadRequest("messages must contain at least one message")
    parts = render_parts(messages, result_labels(messages), limits, images)
    if not parts:
        raise BadRequest("messages contain no text to send (every message is empty)")
    return parts


def render_parts(
    messages: Sequence[Mapping[str, Any]],
    answers: Mapping[int, CallLabel],
    limits: ImageLimits | None = None,
    images: dict[str, ImageSource] | None = None,
    first_index: int = 0,
) -> list[MessagePart]:
    """``messages`` as conol parts (``first_index``: the first one's place in the conversation;
    ``answers``: the call each tool result answers, by its place: :func:`result_labels` of the whole
    conversation)."""
    limits = limits or ImageLimits()
    parts: list[MessagePart] = []
    for offset, message in enumerate(messages):
        text, found = _render_message(first_index + offset, message, answers, limits)
        if text:
            parts.append(TextPart(content=text))
        for source in found:
            if images is not None:
                images.setdefault(source.key, source)
            parts.append(ImagePart(content=source.pending, media_type=source.media_type or ""))
    return parts


def _render_message(
    index: int, message: Mapping[str, Any], answers: Mapping[int, CallLabel], limits: ImageLimits
) -> tuple[str, list[ImageSource]]:
    if not isinstance(message, Mapping):
        raise BadRequest(f"messages[{index}] must be an object, got {type(message).__name__}")
    role = message.get("role")
    if role not in _KNOWN_ROLES:
        raise BadRequest(
            f"messages[{index}] has unsupported role {role!r}; expected one of {sorted(_KNOWN_ROLES)}"
        )
    body, images = _content(message.get("content"), f"messages[{index}].content", limits)
    if role in ("system", "developer"):
        return (f"[System]\n{body}" if body else ""), images
    if role == "user":
        return body, images
    if role == "assistant":
        return _render_assistant(body, message.get("tool_calls") or ()), images
    call_id = str(message.get("tool_call_id") or message.get("name") or "")
    call = answers.get(index)
    if call is not None:
        label = f"#{call_id}: {call.text}"
    else:
        name = message.get("name")
        label = f"#{call_id} ({name})" if name and name != call_id else f"#{call_id}"
    return f"[Tool result {label}]: {body}", images


def _render_assistant(body: str, tool_calls: Iterable[Mapping[str, Any]]) -> str:
    # The model must see what it called earlier, or a tool loop makes no sense to it.
    lines = [body] if body else []
    for call in tool_calls:
        function = call.get("function") or {}
        arguments = function.get("arguments") or "{}"
        lines.append(f"[Tool call #{call.get('id', '')}: {function.get('name', '')}({arguments})]")
    return "[Assistant]\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True)
class CallLabel:
    """How a tool result names its call: by what conol saw of it (the name, the arguments and, for
    calls alike in both, their order), never by an id conol may never have seen (a follow-up)."""

    name: str
    arguments: str  # canonical JSON
    ordinal: int = 1  # among the calls of one message with this name and these arguments
    alike: int = 1

    @property
    def text(self) -> str:
        order = f", call {self.ordinal} of {self.alike} alike" if self.alike > 1 else ""
        return f"{self.name}({self.arguments}){order}"


def call_labels(message: Mapping[str, Any]) -> list[tuple[str, CallLabel]]:
    """An assistant message's tool calls, in order, as ``(id, label)``."""
    calls = [
        (str(call.get("id") or ""), str(function["name"]), _canonical_json(function.get("arguments")))
        for call in message.get("tool_calls") or ()
        if isinstance(call, Mapping)
        and isinstance(function := call.get("function") or {}, Mapping)
        and function.get("name")
    ]
    labelled = []
    for position, (call_id, name, arguments) in enumerate(calls):
        alike = [p for p, (_, n, a) in enumerate(calls) if (n, a) == (name, arguments)]
        labelled.append((call_id, CallLabel(name, arguments, alike.index(position) + 1, len(alike))))
    return labelled


def result_labels(messages: Sequence[Any]) -> dict[int, CallLabel]:
    """The call each tool result answers, by the result's place in ``messages``: the call with its id
    in the latest assistant message before it that has one. Results sharing an id answer that
    message's calls with the id in order: LiteLLM's generateContent adapter names every call of one
    function ``call_<name>`` (Gemini's functionCall parts carry no id it keeps), so a turn that read
    two files holds two ``call_read_file`` calls and two results."""
    open_calls: dict[str, list[CallLabel]] = {}
    taken: dict[str, int] = {}
    answers: dict[int, CallLabel] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "assistant":
            latest: dict[str, list[CallLabel]] = {}
            for call_id, label in call_labels(message):
                if call_id:
                    latest.setdefault(call_id, []).append(label)
            open_calls.update(latest)
            taken.update(dict.fromkeys(latest, 0))
        elif role in ("tool", "function"):
            call_id = str(message.get("tool_call_id") or message.get("name") or "")
            labels = open_calls.get(call_id)
            if labels:
                answers[index] = labels[min(taken[call_id], len(labels) - 1)]
                taken[call_id] += 1
    return answers


def _canonical_json(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            decoded: Any = json.loads(arguments)
        except ValueError:
            return arguments
        arguments = decoded
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, sort_keys=True)


def content_text(content: Any, *, where: str = "content") -> str:
    """OpenAI message content (None, a string, or a list of parts) as plain text; its images
    (``image_url`` parts) go to conol as uploaded assets, not as text (:func:`render_messages`)."""
    return _content(content, where, ImageLimits())[0]


def _content(content: Any, where: str, limits: ImageLimits) -> tuple[str, list[ImageSource]]:
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string, a list of parts or null, got {type(content).__name__}")
    texts: list[str] = []
    images: list[ImageSource] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") in IMAGE_PART_TYPES:
            images.append(image_of_part(part, where, limits))
        else:
            texts.append(_part_text(part, where))
    return "\n".join(filter(None, texts)), images


def _part_text(part: Any, where: str) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        raise BadRequest(f"{where} has a part that is not an object: {type(part).__name__}")
    kind = part.get("type")
    if kind in ("text", "input_text"):
        return str(part.get("text") or "")
    raise BadRequest(f"{where} has a part of unsupported type {kind!r} (supported: text, image_url)")


# --- tools --------------------------------------------------------------------------------------


# Converted tool lists by the digest of the request's ``tools``: agents send the same tools with every
# request, so the converted specs (frozen) are shared, not rebuilt and held again by each stream.
CONVERTED_TOOLS: DigestMemo[tuple[ToolSpec, ...]] = DigestMemo(size=256)


def convert_tools(tools: Sequence[Any] | None) -> list[ToolSpec]:
    """OpenAI- or Anthropic-format tool definitions → conol's Anthropic format, validated; deferred
    tools left out and schemas cut to JSON Schema keywords (``core/request/tool_hygiene.py``)."""
    if not tools:
        return []
    digest = json_digest(tools)
    known = CONVERTED_TOOLS.get(digest) if digest is not None else None
    if known is None:
        known = tuple(_converted(tools))
        if digest is not None:
            CONVERTED_TOOLS.put(digest, known)
    return list(known)


def _converted(tools: Sequence[Any]) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if _deferred(tool):
            continue  # a placeholder the client loads later: not callable, so not conol's to offer
        spec = _convert_tool(index, tool)
        if spec.name in seen:
            raise BadRequest(f"tool {spec.name!r} is defined more than once")
        if spec.name in BUILTIN_TOOLS:
            raise BadRequest(f"tool {spec.name!r} clashes with conol's built-in tool of the same name")
        seen.add(spec.name)
        specs.append(spec)
    return specs


def _convert_tool(index: int, tool: Any) -> ToolSpec:
    if not isinstance(tool, Mapping):
        raise BadRequest(f"tools[{index}] must be an object")
    if "function" in tool or tool.get("type") == "function":
        function = tool.get("function")
        if not isinstance(function, Mapping):
            raise BadRequest(f"tools[{index}] has type 'function' but no 'function' object")
        name, description, schema = (
            function.get("name"),
            function.get("description"),
            function.get("parameters"),
        )
    else:
        name, description, schema = tool.get("name"), tool.get("description"), tool.get("input_schema")
    if not isinstance(name, str) or not name.strip():
        raise BadRequest(f"tools[{index}] has no name")
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise BadRequest(f"tool {name!r}: its parameters schema must be a JSON object schema (type 'object')")
    return ToolSpec(name=name, description=str(description or ""), input_schema=schema_keywords_only(schema))


def _deferred(tool: Any) -> bool:
    if not isinstance(tool, Mapping):
        return False
    function = tool.get("function")
    schema = function.get("parameters") if isinstance(function, Mapping) else tool.get("input_schema")
    return is_deferred(tool, function, schema)


def tool_arguments(arguments: Any) -> str:
    """conol tool input → OpenAI ``function.arguments`` (docs/protocol.md#stream: ``ensure_ascii=False``)."""
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
