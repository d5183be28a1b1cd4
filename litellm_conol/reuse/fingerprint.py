"""Session reuse, decided without I/O: what history a request carries, and whether a conol session
already holds exactly that history, so only the new turn needs to be sent (docs/protocol.md#follow-up-turns).

A request continues a session only when every earlier message, in order, is the history that
session ran, assistant turns as we returned them. Matching is by a digest of that history in a
canonical form that keeps its content and drops only what clients legitimately rewrite:
whitespace, the JSON formatting of tool arguments, a string vs a list of text parts, consecutive
assistant messages (one answer split into a text and a tool-call message, as the Responses API
does), reasoning (thinking blocks, ``reasoning_content``), which clients may drop or re-sign, and
tool-call ids: a call is its name and arguments in its place, and a result names the call it answers
by those (``core/request/render.py`` ``result_labels``), since LiteLLM's generateContent adapter
(Gemini CLI) resends every call of one function as ``call_<name>``, whatever id we returned.
Ids clients send (``x-claude-code-session-id``, ``prompt_cache_key``, …) are never a key: a
client reusing its id for another history must not get another conversation's session.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.protocol.stage_marks import SessionHistory
from ..core.protocol.turn_boundary import NO_HISTORY
from ..core.request.render import IMAGE_PART_TYPES, CallLabel, call_labels, result_labels

NEW_TURN_ROLES = frozenset({"user", "tool", "function"})


# --- the canonical history -------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Text as clients resend it: line endings as ``\n``, no trailing space on a line, no blank
    line at either end. Indentation and inner spacing are content (code) and stay."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def canonical_arguments(arguments: Any) -> Any:
    """Tool-call arguments as data: ``'{"a": 1}'`` and ``'{"a":1}'`` are the same call."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return normalize_text(arguments)
    return arguments if arguments is not None else {}


REASONING_PART_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})


def image_identity(part: Mapping[str, Any]) -> str:
    """An image part by its content: the digest of its data (a ``data:`` URL, base64 source) or of
    its URL. Any image form a client sends counts, so two histories differing only in an image differ."""
    image = part.get("image_url", part.get("source", part.get("file_id")))
    if isinstance(image, Mapping):
        image = image.get("url", image.get("data", image.get("file_id")))
    raw = image if isinstance(image, str) else json.dumps(image, sort_keys=True, default=str)
    if raw.startswith("data:") and "," in raw:
        raw = raw.split(",", 1)[1]  # the bytes, not how the URL names their type
    return "image:" + hashlib.sha256("".join(raw.split()).encode()).hexdigest()


def _content_items(content: Any) -> list[str]:
    """Any content form (a string, parts of text / input_text / output_text, images) as a list of
    texts and image identities, in order; reasoning parts left out."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return [str(content)]
    items: list[str] = []
    for part in content:
        if isinstance(part, str):
            items.append(part)
        elif isinstance(part, Mapping):
            kind = part.get("type")
            if kind in REASONING_PART_TYPES:
                continue  # reasoning is ignored wherever it rides
            if kind in IMAGE_PART_TYPES:
                items.append(image_identity(part))
            elif isinstance(part.get("text"), str):
                items.append(part["text"])
            else:
                items.append(json.dumps(dict(part), sort_keys=True, default=str))
    return items


def _content_text(content: Any) -> str:
    """The content's texts joined, each image by its identity (``[image:<digest>]``)."""
    items = _content_items(content)
    return "\n".join(f"[{item}]" if item.startswith("image:") else item for item in items)


def _canonical_calls(calls: Any) -> list[list[Any]]:
    out: list[list[Any]] = []
    for call in calls or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") or {}
        out.append([str(function.get("name") or ""), canonical_arguments(function.get("arguments"))])
    return out


def call_ref(label: CallLabel) -> str:
    """A tool call as a result names it: its name, arguments and order among calls alike."""
    return "call:" + label.text


def canonical_message(message: Any, answers: CallLabel | None = None) -> list[Any]:
    """One message as compared: ``[role, text, tool calls, the call a tool result answers]``; system
    and developer the same role. ``answers``: the call a tool result answers (``result_labels``);
    without one, the id it names."""
    if not isinstance(message, Mapping):
        return ["?", normalize_text(str(message)), [], ""]
    role = str(message.get("role") or "")
    role = "system" if role == "developer" else role
    text = normalize_text(_content_text(message.get("content")))
    calls = _canonical_calls(message.get("tool_calls")) if role == "assistant" else []
    answered = ""
    if role == "tool":
        named = str(message.get("tool_call_id") or message.get("name") or "")
        answered = call_ref(answers) if answers is not None else "id:" + named
    return [role, text, calls, answered]


def canonical_history(messages: Sequence[Any]) -> list[list[Any]]:
    """The history as compared, consecutive assistant messages merged (one answer split into a text
    and a tool-call message, as the Responses API does)."""
    answers = result_labels(messages)
    out: list[list[Any]] = []
    for index, message in enumerate(messages):
        item = canonical_message(message, answers.get(index))
        if item[0] == "assistant" and out and out[-1][0] == "assistant":
            previous = out[-1]
            previous[1] = "\n\n".join(text for text in (previous[1], item[1]) if text)
            previous[2] = previous[2] + item[2]
            continue
        out.append(item)
    return out


def call_refs(message: Mapping[str, Any]) -> tuple[str, ...]:
    """The tool calls of an assistant message as the results answering them name them."""
    return tuple(call_ref(label) for _, label in call_labels(message))


def answered_refs(canonical_turn: Sequence[Sequence[Any]]) -> frozenset[str]:
    """The calls a new turn's tool results answer (its entries of :func:`canonical_history`)."""
    return frozenset(str(entry[3]) for entry in canonical_turn if entry[0] == "tool" and entry[3])


def history_digest(scope: str, settings: str, messages: Sequence[Any]) -> str:
    """The binding key of a history: a hash, so the store never holds a conversation's content."""
    return canonical_digest(scope, settings, canonical_history(messages))


def canonical_digest(scope: str, settings: str, canonical: Sequence[Any]) -> str:
    """:func:`history_digest` of a history already in canonical form (computed once per turn)."""
    payload = json.dumps([scope, settings, list(canonical)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class DigestOfHistory:
    """:func:`canonical_digest` of a canonical history and what follows it, without holding the
    history: the hash of its JSON so far, fed the bytes ``json.dumps`` writes for the whole list
    (items joined by ``", "``). A request keeps this, not a copy of its conversation, until it binds
    its answer."""

    def __init__(self, scope: str, settings: str, canonical: Sequence[Any]) -> None:
        head = _dumps([scope, settings])  # '["<scope>", "<settings>"]'
        self._hash = hashlib.sha256(head[:-1].encode() + b", [")
        self._items = 0
        self.feed(canonical)

    def feed(self, canonical: Sequence[Any]) -> None:
        """The history goes on with these canonical items."""
        for item in canonical:
            self._hash.update((", " + _dumps(item) if self._items else _dumps(item)).encode())
            self._items += 1

    def followed_by(self, more: Sequence[Any]) -> str:
        """The digest of the history followed by ``more`` (canonical items); this one is unchanged."""
        extended = copy.copy(self)
        extended._hash = self._hash.copy()
        extended.feed(more)
        extended._hash.update(b"]]")
        return extended._hash.hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def scope_digest(base_url: str, token: str, caller: str = "") -> str:
    """Which account, upstream and caller a binding belongs to (the token only ever as part of a
    hash): two callers sharing a token never continue each other's sessions, which hold conol-side
    state the other never saw (docs/session-reuse.md#whose-sessions). ``caller``: an opaque digest
    of the caller identity, ``""`` for none (the credential alone)."""
    scope = f"{base_url}\0{token}" + (f"\0{caller}" if caller else "")
    return hashlib.sha256(scope.encode()).hexdigest()


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


BINDING_FORMAT = 3  # a stored binding of another format is no binding (a rolling upgrade)


@dataclass(frozen=True)
class Binding:
    """A conol session that holds a known history: where to continue, how it is set, and where its
    history ended (``history``: what the next boundary reads, ``core/protocol/stage_marks.py``)."""

    session_id: str
    model: str  # as requested: a request asking for another model is another session (or a re-pin)
    effort: str
    history: SessionHistory = NO_HISTORY
    turns: int = 1
    pinned: bool = False  # the model was set with /model (a change can re-pin the same session)
    effective_model: str = ""  # what conol runs ("" = the requested model)
    downgraded: bool = False
    pending_calls: tuple[str, ...] = ()  # client calls conol waits on (call_refs): the next turn answers them
    pending_turn: str = ""  # a turn posted whose fate is unknown (a timeout): only its retry may continue
    extra: dict[str, Any] = field(default_factory=dict)
    # the stored value it was read from, exactly: a take compares that (another version may format
    # the same binding differently), never this binding serialised again
    raw: str = field(default="", compare=False, repr=False)

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": BINDING_FORMAT,
                "session_id": self.session_id,
                "model": self.model,
                "effort": self.effort,
                "history": self.history.to_json(),
                "turns": self.turns,
                "pinned": self.pinned,
                "effective_model": self.effective_model,
                "downgraded": self.downgraded,
                "pending_calls": list(self.pending_calls),
                "pending_turn": self.pending_turn,
            }
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> Binding | None:
        try:
            text = raw.decode() if isinstance(raw, bytes) else raw
            data = json.loads(text)
            if data.get("v") != BINDING_FORMAT:
                return None
            return cls(
                session_id=str(data["session_id"]),
                model=str(data["model"]),
                effort=str(data["effort"]),
                history=SessionHistory.of(data["history"]),
                turns=int(data.get("turns", 1)),
                pinned=bool(data.get("pinned", False)),
                effective_model=str(data.get("effective_model", "")),
                downgraded=bool(data.get("downgraded", False)),
                pending_calls=tuple(str(c) for c in data.get("pending_calls", ())),
                pending_turn=str(data.get("pending_turn", "")),
                raw=text,
            )
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
            return None  # a stale or foreign value: no binding, never a crash
