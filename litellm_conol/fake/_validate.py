"""Validation of the ``POST /api/sessions`` body (docs/protocol.md#create): a malformed body is a 400, like
the real service would need it to be, so a client bug shows up as an error instead of a silently odd
session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EFFORTS = ("low", "medium", "high", "max")


def create_body_problem(body: Any, known_asset: Callable[[str], bool] = lambda path: False) -> str | None:
    """Why ``body`` is not a valid create request, or None when it is. An image part must name an
    asset uploaded before (``known_asset``: its ``/api/assets/<id>`` path is known)."""
    if not isinstance(body, dict):
        return "body must be a JSON object"
    checks = (_source, lambda b: _messages(b, known_asset), _model, _effort, _tools, _timezone, _preset)
    for check in checks:
        problem = check(body)
        if problem is not None:
            return problem
    return None


def _source(body: dict[str, Any]) -> str | None:
    source = body.get("source")
    if not isinstance(source, dict) or source.get("type") != "home":
        kind = source.get("type") if isinstance(source, dict) else source
        return f"source must be {{'type': 'home'}} (got type {kind!r})"
    return None


def _messages(body: dict[str, Any], known_asset: Callable[[str], bool]) -> str | None:
    # an empty list is an empty create (docs/protocol.md#create): the session waits for its first turn
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages must be a list of {'type': 'text', 'content': <string>}"
    return turn_messages_problem(messages, known_asset, allow_empty=True)


def turn_messages_problem(
    messages: Any, known_asset: Callable[[str], bool], allow_empty: bool = False
) -> str | None:
    """Why ``messages`` are not a list of text and image parts (``POST /api/sessions`` and a turn's
    POST); an image part must name an asset uploaded before."""
    if not isinstance(messages, list) or (not messages and not allow_empty):
        return "messages must be a non-empty list of {'type': 'text', 'content': <string>}"
    for i, part in enumerate(messages):
        if isinstance(part, dict) and part.get("type") == "image":
            problem = _image_part(i, part, known_asset)
            if problem is not None:
                return problem
        elif (
            not isinstance(part, dict)
            or part.get("type") != "text"
            or not isinstance(part.get("content"), str)
        ):
            return f"messages[{i}] must be {{'type': 'text', 'content': <string>}}"
    return None


def _image_part(i: int, part: dict[str, Any], known_asset: Callable[[str], bool]) -> str | None:
    content, media_type = part.get("content"), part.get("mediaType")
    if not isinstance(content, str) or not isinstance(media_type, str) or not media_type.startswith("image/"):
        shape = "{'type': 'image', 'content': '/api/assets/<id>', 'mediaType': 'image/…'}"
        return f"messages[{i}] must be {shape}"
    if not known_asset(content):
        return f"messages[{i}] names an unknown asset {content!r}"
    return None


def unknown_asset(body: Any, known_asset: Callable[[str], bool]) -> str | None:
    """Why a body's image part names no uploaded asset (the first such part), or ``None``: the
    server answers it as its ``unknown_asset_status`` reading says."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for i, part in enumerate(messages if isinstance(messages, list) else ()):
        path = part.get("content") if isinstance(part, dict) and part.get("type") == "image" else None
        if isinstance(path, str) and not known_asset(path):
            return f"messages[{i}] names an unknown asset {path!r}"
    return None


def _model(body: dict[str, Any]) -> str | None:
    model = body.get("agentModel")
    return None if isinstance(model, str) and model else "agentModel must be a non-empty string"


def _effort(body: dict[str, Any]) -> str | None:
    if body.get("agentEffort") in EFFORTS:
        return None
    return f"agentEffort must be one of {', '.join(EFFORTS)} (got {body.get('agentEffort')!r})"


def _tools(body: dict[str, Any]) -> str | None:
    if "tools" not in body:
        return None
    tools = body["tools"]
    if not isinstance(tools, list):
        return "tools must be a list"
    for i, tool in enumerate(tools):
        if not (
            isinstance(tool, dict)
            and isinstance(tool.get("name"), str)
            and tool["name"]
            and isinstance(tool.get("input_schema"), dict)
            and isinstance(tool.get("description", ""), str)
        ):
            # OpenAI-format tools are the client's to convert (docs/protocol.md#create)
            return f"tools[{i}] must be Anthropic format {{name, description, input_schema}}"
    return None


def _timezone(body: dict[str, Any]) -> str | None:
    tz = body.get("timezone")
    return None if tz is None or (isinstance(tz, str) and tz) else "timezone must be an IANA name string"


def _preset(body: dict[str, Any]) -> str | None:
    # a client sends these at create (docs/protocol.md#create); the fake accepts them and records nothing more
    preset, prompt = body.get("modelPreset"), body.get("systemPrompt")
    if preset is not None and not isinstance(preset, str):
        return "modelPreset must be a string"
    return None if prompt is None or isinstance(prompt, str) else "systemPrompt must be a string"
