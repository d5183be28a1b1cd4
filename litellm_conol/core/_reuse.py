"""Session reuse, decided without I/O: what history a request carries, and whether a conol session
already holds exactly that history, so only the new turn needs to be sent (docs/protocol.md#follow-up-turns).

A request continues a session only when every earlier message, in order, is the history that
session ran, assistant turns as we returned them. Matching is by a digest of that history in a
canonical form that keeps its content and drops only what clients legitimately rewrite:
whitespace, the JSON formatting of tool arguments, a string vs a list of text parts, consecutive
assistant messages (one answer split into a text and a tool-call message, as the Responses API
does), and reasoning (thinking blocks, ``reasoning_content``), which clients may drop or re-sign.
Ids clients send (``x-claude-code-session-id``, ``prompt_cache_key``, …) are never a key: a
client reusing its id for another history must not get another conversation's session.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from ._settings import Settings

ReuseMode = Literal["auto", "off"]
PinningMode = Literal["create", "pin", "auto"]

# As other public clients keep them (docs/protocol.md#session-reuse-by-other-clients):
DEFAULT_TTL = 6 * 3600.0  # seconds a binding lives after its last use
DEFAULT_CAP = 500  # bindings one process keeps in memory
DEFAULT_BACKOFF = 600.0  # seconds reuse stays off for an upstream that refused a follow-up
NEW_TURN_ROLES = frozenset({"user", "tool", "function"})


@dataclass(frozen=True)
class ReuseOptions:
    """``session_reuse`` and ``model_pinning`` and their limits, per deployment or per request."""

    mode: ReuseMode = "auto"
    pinning: PinningMode = "create"
    ttl: float = DEFAULT_TTL
    cap: int = DEFAULT_CAP
    backoff: float = DEFAULT_BACKOFF
    # the deployment's Redis (else the environment's, else memory); holds the password: never in a repr
    redis_url: str | None = field(default=None, repr=False)


def reuse_options(settings: Settings) -> ReuseOptions:
    """The reuse options of one call, as the settings model read them."""
    return ReuseOptions(
        mode="off" if settings["session_reuse"] == "off" else "auto",
        pinning=settings["model_pinning"],
        ttl=settings["session_reuse_ttl"],
        cap=settings["session_reuse_cap"],
        backoff=settings["session_reuse_backoff"],
        redis_url=redis_url(settings),
    )


def redis_url(settings: Settings) -> str | None:
    """Where bindings are shared, the way LiteLLM takes Redis settings: ``redis_url``, else
    ``redis_host``/``redis_port`` with ``redis_username``/``redis_password`` (percent-encoded: a
    password may hold ``@`` or ``/``) and ``redis_ssl`` (``rediss://``); the call's own settings as a
    group before the environment's (a deployment naming a host is not mixed with an environment's URL)."""
    for source in ("param", "env"):
        if settings.source("redis_url") == source:
            return str(settings["redis_url"])
        if settings.source("redis_host") == source:
            username, password = settings["redis_username"], settings["redis_password"]
            user = quote(username, safe="") if username else ""
            auth = f"{user}:{quote(password, safe='')}@" if password else f"{user}@" if user else ""
            host = str(settings["redis_host"])
            host = f"[{host}]" if ":" in host and not host.startswith("[") else host  # IPv6
            scheme = "rediss" if settings["redis_ssl"] else "redis"
            return f"{scheme}://{auth}{host}:{settings['redis_port']}"
    return None


# --- the canonical history -------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Whitespace-insensitive text: runs of whitespace are one space, none at either end."""
    return " ".join(text.split())


def canonical_arguments(arguments: Any) -> Any:
    """Tool-call arguments as data: ``'{"a": 1}'`` and ``'{"a":1}'`` are the same call."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return normalize_text(arguments)
    return arguments if arguments is not None else {}


def _content_text(content: Any) -> str:
    """Any content form (string, parts of text / input_text / output_text, images) as plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return str(content)
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            if part.get("type") in ("thinking", "redacted_thinking", "reasoning"):
                continue  # reasoning is ignored wherever it rides
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
            elif part.get("type") == "image_url":
                image = part.get("image_url")
                texts.append(f"[Image: {image.get('url') if isinstance(image, Mapping) else image}]")
    return "\n".join(texts)


def _canonical_calls(calls: Any) -> list[list[Any]]:
    out: list[list[Any]] = []
    for call in calls or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") or {}
        out.append(
            [
                str(call.get("id") or ""),
                str(function.get("name") or ""),
                canonical_arguments(function.get("arguments")),
            ]
        )
    return out


def canonical_history(messages: Sequence[Any]) -> list[list[Any]]:
    """The history as compared: ``[role, text, tool calls, tool call id]`` per message, consecutive
    assistant messages merged, system and developer the same role."""
    out: list[list[Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            out.append(["?", normalize_text(str(message)), [], ""])
            continue
        role = str(message.get("role") or "")
        role = "system" if role == "developer" else role
        text = normalize_text(_content_text(message.get("content")))
        calls = _canonical_calls(message.get("tool_calls")) if role == "assistant" else []
        call_id = str(message.get("tool_call_id") or message.get("name") or "") if role == "tool" else ""
        if role == "assistant" and out and out[-1][0] == "assistant":
            previous = out[-1]
            previous[1] = normalize_text(f"{previous[1]} {text}")
            previous[2] = previous[2] + calls
            continue
        out.append([role, text, calls, call_id])
    return out


def history_digest(scope: str, settings: str, messages: Sequence[Any]) -> str:
    """The binding key of a history: a hash, so the store never holds a conversation's content."""
    payload = json.dumps([scope, settings, canonical_history(messages)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def scope_digest(base_url: str, token: str) -> str:
    """Which account and upstream a binding belongs to; the token only ever as part of a hash."""
    return hashlib.sha256(f"{base_url}\0{token}".encode()).hexdigest()


def settings_digest(tools: Sequence[Mapping[str, Any]], extra: Mapping[str, Any]) -> str:
    """What a conol session was created with besides the transcript (its tools): a session made with
    other tools is not the one this request would create."""
    payload = json.dumps([list(tools), dict(extra)], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def split_new_turn(messages: Sequence[Any]) -> tuple[list[Any], list[Any]] | None:
    """``(history, new)``: everything up to the last assistant message, and the user turns and tool
    results after it. ``None`` when there is nothing earlier to continue or nothing new to send."""
    last = None
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            last = index
    if last is None:
        return None
    new = list(messages[last + 1 :])
    if not new or any(not isinstance(m, Mapping) or m.get("role") not in NEW_TURN_ROLES for m in new):
        return None
    return list(messages[: last + 1]), new


def returned_assistant(text: str, tool_calls: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """The assistant message as we returned it (``(id, name, arguments)`` per client tool call)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
            for cid, name, arguments in tool_calls
        ]
    return message


@dataclass(frozen=True)
class Binding:
    """A conol session that holds a known history: where to continue, and how it is set."""

    session_id: str
    model: str
    effort: str
    stages: tuple[str, ...] = ()  # stage ids its turns produced: a follow-up's replay of them is old
    turns: int = 1
    pinned: bool = False  # the model was set with /model (a change can re-pin the same session)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {
                "session_id": self.session_id,
                "model": self.model,
                "effort": self.effort,
                "stages": list(self.stages),
                "turns": self.turns,
                "pinned": self.pinned,
            }
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> Binding | None:
        try:
            data = json.loads(raw)
            return cls(
                session_id=str(data["session_id"]),
                model=str(data["model"]),
                effort=str(data["effort"]),
                stages=tuple(str(s) for s in data.get("stages", ())),
                turns=int(data.get("turns", 1)),
                pinned=bool(data.get("pinned", False)),
            )
        except (ValueError, KeyError, TypeError):
            return None  # a stale or foreign value: no binding, never a crash
