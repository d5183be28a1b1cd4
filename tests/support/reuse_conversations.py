"""Conversations for the reuse differential test (tests/integration/test_reuse_differential.py): what one
is made of, the hypothesis strategy that generates them, and the OpenAI messages each turn adds.

A conversation is a list of turns, after a system prompt or none, sent by one caller or by two callers
with equal histories (the second sends every turn of the first, interleaved turn by turn). A turn is a
user message (short replies, text an earlier turn quoted, code whose indentation matters, an image, a
search conol runs itself), two user messages at once, the previous turn word for word again, or a
weather question answered with parallel ``get_weather`` calls, whose results the caller sends back in
a second request (with a user message after them, or not). A turn may also edit the caller's earlier
messages first, cut its answer (``stop`` / ``max_tokens``), be sent again (a retry), or meet an
injected failure (reuse on only).
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

SHORT = ("yes", "ok", "continue", "ok, continue")
TEXTS = (
    "Tell me about stages.",
    'He answered "yes", then "ok, continue".',
    "Please continue: ok",
    "def add(a, b):\n    return a + b",
)
# distinct cities: two calls with equal arguments are one call repeated (docs/protocol.md#stream)
CITIES = (("Paris",), ("Paris", "Tokyo"), ("Tokyo", "Paris", "Oslo"))
RESULTS = ("18°C", "rain")
PNGS = (b"\x89PNG\r\n\x1a\n" + b"diff-one", b"\x89PNG\r\n\x1a\n" + b"diff-two")
# what an edit of earlier messages changes: a user text, code indentation, line endings and trailing
# spaces (a rewrite clients make: the session may be continued or not), an image, an assistant answer
EDITS = ("user", "indent", "benign", "image", "assistant")
FAILURES = (
    ("taken", 500),  # conol takes the follow-up turn, its gateway answers 500
    ("create", 429),
    ("create", 500),
    ("followup", 429),
    ("followup", 500),
    ("followup", 404),
    ("followup", 409),
    ("followup", 410),
    ("gone", 404),
    ("gone", 410),
)
CUTS = ("stop", "max_tokens")
STOP = "Context"  # the dx answer's last sentence: a stop there cuts it
MAX_TOKENS = 6


SYSTEM = "You are a careful assistant. Answer briefly."
SEARCHES = ("search: stage ids", "search: snapshots")
ALSO = ("and one more thing", "thanks")


@dataclass(frozen=True)
class Turn:
    text: str = "ok"
    also: str | None = None  # a second user message in the same request
    after_results: str | None = None  # a user message after the tool results, in the same request
    image: int | None = None  # an image of PNGS after the text
    cities: tuple[str, ...] = ()  # a weather question: get_weather per city, then the results
    results: tuple[str, ...] = ()  # the caller's result for each call, in order
    parallel: bool = True  # parallel_tool_calls (False: the client keeps the first call only)
    cut: str | None = None  # on the turn's last request
    edit: str | None = None  # applied to the caller's earlier messages before this turn
    failure: tuple[str, int] | None = None  # on the turn's first request, with reuse on only
    retry: bool = False  # the turn's last request is sent again

    @property
    def user_text(self) -> str:
        return "weather: " + ", ".join(self.cities) if self.cities else self.text


@dataclass(frozen=True)
class Conversation:
    turns: tuple[Turn, ...]
    two_callers: bool = False
    stream: bool = False
    system: str | None = None

    @property
    def callers(self) -> tuple[str, ...]:
        return ("alice", "bob") if self.two_callers else ("alice",)


# ------------------------------------------------------------------------------------------ strategy
def _maybe(values: tuple[Any, ...], weight: int) -> st.SearchStrategy[Any]:
    """``None`` ``weight`` times as often as each of ``values`` (shrinks to ``None``)."""
    return st.sampled_from((None,) * weight + values)


@st.composite
def turns(draw: st.DrawFn, earlier: tuple[Turn, ...]) -> Turn:
    first = not earlier
    kinds = ("short", "text", "weather", "image", "search", "two")
    kind = draw(st.sampled_from(kinds + (() if first else ("quote", "quote", "again"))))
    if kind == "again":  # the previous turn word for word (its tool calls too)
        previous = earlier[-1]
        return Turn(
            previous.text,
            previous.also,
            previous.after_results,
            previous.image,
            previous.cities,
            previous.results,
            previous.parallel,
        )
    if kind == "weather":
        cities = draw(st.sampled_from(CITIES))
        same = draw(st.booleans())
        results = tuple(RESULTS[0] if same else RESULTS[i % 2] for i in range(len(cities)))
        after = draw(st.sampled_from((None, None, ALSO[1])))
        turn = Turn(
            cities=cities,
            results=results,
            parallel=draw(st.sampled_from((True, True, False))),
            after_results=after,
        )
    elif kind == "quote":
        # the new text appears inside an earlier message (the whole of it, or its last word)
        quoted = draw(st.sampled_from([t.user_text for t in earlier]))
        turn = Turn(text=draw(st.sampled_from((quoted, quoted.split()[-1].strip('".,:')))))
    elif kind == "search":
        turn = Turn(text=draw(st.sampled_from(SEARCHES)))
    else:
        text = draw(st.sampled_from(SHORT if kind in ("short", "two") else TEXTS))
        also = draw(st.sampled_from(ALSO)) if kind == "two" else None
        turn = Turn(text=text, also=also, image=draw(st.sampled_from((0, 1))) if kind == "image" else None)
    return replace(
        turn,
        cut=draw(_maybe(CUTS, 6)),
        edit=None if first else draw(_maybe(EDITS, 6)),
        failure=draw(_maybe(FAILURES, 6)),
        retry=draw(st.sampled_from((False,) * 6 + (True,))),
    )


@st.composite
def conversations(draw: st.DrawFn, longest: int = 6) -> Conversation:
    made: tuple[Turn, ...] = ()
    for _ in range(draw(st.integers(min_value=2, max_value=longest))):
        made += (draw(turns(made)),)
    return Conversation(
        made,
        two_callers=draw(st.booleans()),
        stream=draw(st.booleans()),
        system=draw(st.sampled_from((None, SYSTEM))),
    )


# ------------------------------------------------------------------------------------------ messages
def user_messages(turn: Turn) -> list[dict[str, Any]]:
    """The messages the turn's first request adds."""
    also = [{"role": "user", "content": turn.also}] if turn.also is not None else []
    return [user_message(turn), *also]


def user_message(turn: Turn) -> dict[str, Any]:
    if turn.image is None:
        return {"role": "user", "content": turn.user_text}
    url = "data:image/png;base64," + base64.b64encode(PNGS[turn.image]).decode()
    content = [{"type": "text", "text": turn.user_text}, {"type": "image_url", "image_url": {"url": url}}]
    return {"role": "user", "content": content}


def edited(history: list[dict[str, Any]], edit: str) -> list[dict[str, Any]]:
    """``history`` with ``edit`` applied to its earlier messages (a copy; unchanged if nothing fits)."""
    out = copy.deepcopy(history)
    users = [m for m in out if m["role"] == "user"]
    if edit == "assistant":
        answers = [m for m in out if m["role"] == "assistant"]
        if answers:
            answers[0]["content"] = (answers[0].get("content") or "") + " (edited)"
        return out
    for message in users[:1] if edit in ("user", "benign") else users:
        message["content"] = _edit_content(message["content"], edit)
    return out


def _edit_content(content: Any, edit: str) -> Any:
    if isinstance(content, str):
        return _edit_text(content, edit)
    parts = []
    for part in content:
        if part["type"] == "text":
            part = {**part, "text": _edit_text(part["text"], edit)}
        elif edit == "image":
            other = PNGS[1] if base64.b64encode(PNGS[0]).decode() in part["image_url"]["url"] else PNGS[0]
            part = {**part, "image_url": {"url": "data:image/png;base64," + base64.b64encode(other).decode()}}
        parts.append(part)
    return parts


def _edit_text(text: str, edit: str) -> str:
    if edit == "user":
        return text + " (edited)"
    if edit == "indent":
        return text.replace("\n    ", "\n  ")
    if edit == "benign":
        return "\r\n".join(line + "  " for line in text.split("\n"))
    return text


def normalised_history(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client may rewrite without changing a message (line endings, trailing spaces), undone."""
    out = copy.deepcopy(history)
    for message in out:
        content = message.get("content")
        if isinstance(content, str):
            message["content"] = _plain(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    part["text"] = _plain(part["text"])
    return out


def _plain(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n"))
