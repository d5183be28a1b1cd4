"""Conversations for the reuse differential test (tests/integration/test_reuse_differential.py): what one
is made of, the hypothesis strategy that generates them, and the OpenAI messages each turn adds.

A conversation is a list of turns, sent by one caller or by two callers with equal histories (the
second sends every turn of the first, interleaved turn by turn). A turn is a user message (short replies,
text an earlier turn quoted, code whose indentation matters, an image) or a weather question answered
with parallel ``get_weather`` calls, whose results the caller sends back in a second request. A turn may
also edit the caller's earlier messages first, cut its answer (``stop`` / ``max_tokens``), be sent again
(a retry), or meet an injected failure (reuse on only).
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Turn:
    text: str = "ok"
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
    kind = draw(st.sampled_from(("short", "text", "weather", "image") + (() if first else ("quote",) * 2)))
    if kind == "weather":
        cities = draw(st.sampled_from(CITIES))
        same = draw(st.booleans())
        results = tuple(RESULTS[0] if same else RESULTS[i % 2] for i in range(len(cities)))
        turn = Turn(cities=cities, results=results, parallel=draw(st.sampled_from((True, True, False))))
    elif kind == "quote":
        # the new text appears inside an earlier message (the whole of it, or its last word)
        quoted = draw(st.sampled_from([t.user_text for t in earlier]))
        turn = Turn(text=draw(st.sampled_from((quoted, quoted.split()[-1].strip('".,:')))))
    else:
        text = draw(st.sampled_from(SHORT if kind == "short" else TEXTS))
        turn = Turn(text=text, image=draw(st.sampled_from((0, 1))) if kind == "image" else None)
    return Turn(
        text=turn.text,
        image=turn.image,
        cities=turn.cities,
        results=turn.results,
        parallel=turn.parallel,
        cut=draw(_maybe(CUTS, 6)),
        edit=None if first else draw(_maybe(EDITS, 6)),
        failure=draw(_maybe(FAILURES, 6)),
        retry=draw(st.sampled_from((False,) * 6 + (True,))),
    )


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    made: tuple[Turn, ...] = ()
    for _ in range(draw(st.integers(min_value=2, max_value=4))):
        made += (draw(turns(made)),)
    return Conversation(made, two_callers=draw(st.booleans()), stream=draw(st.booleans()))


# ------------------------------------------------------------------------------------------ messages
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
