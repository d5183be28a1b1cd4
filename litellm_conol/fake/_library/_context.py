"""What a model does with its session, whatever its scenario scripts for a fresh request: the default
scenario ``hello`` and the prompt-driven ``agent`` do this first, so a session continued with
follow-up turns behaves as a model's would (``litellm-conol doctor --reuse`` asks this of conol).

* On a follow-up turn after the tool results it asked for (the newest parts are results), it answers
  with them: it never calls again for the same request.
* On a follow-up turn, told to remember a word it says ``OK.``; asked for the word, it says it.
* Offered a tool and asked to call it by name (``call get_weather …``), it calls it (with no
  arguments: the fake reads no intent beyond the tool's name).

A session's first turn is otherwise the scenario's own (a fresh request carrying a whole history
gets ``hello``'s greeting, as before); anything else: ``None``, and the scenario's script answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._scenarios import ScenarioContext
from .._steps import Sleep, Step, ToolCall
from ._common import commit_then_complete, say, think

REMEMBER = re.compile(r"remember the word ([A-Za-z0-9_-]+)", re.IGNORECASE)
ASKED_FOR_THE_WORD = "what was the word"
NOT_TOLD = "I was not told a word."
_CALL = re.compile(r"\bcall ([A-Za-z_][\w-]*)", re.IGNORECASE)
_RESULT = "[Tool result #"


def tool_results_since_user(messages: Sequence[str]) -> list[str]:
    """The tool results after the last user message (parts that are neither a tool result, an
    assistant turn nor a system prompt), oldest first: each result's text after ``]: ``."""
    results: list[str] = []
    for text in reversed(messages):
        if text.startswith(_RESULT):
            results.insert(0, text.partition("]: ")[2])
        elif not text.startswith(("[Assistant]", "[System]")):
            break
    return results


def results_since_user(messages: Sequence[str]) -> int:
    """How many tool results follow the last user message, in a full transcript or a session's turns."""
    return len(tool_results_since_user(messages))


def remembered_word(messages: Sequence[str]) -> str | None:
    """The last word the session was told to remember, anywhere in its transcript."""
    words = REMEMBER.findall("\n".join(messages))
    return words[-1] if words else None


def memory_answer(messages: Sequence[str]) -> str | None:
    """Asked for the word: the word (or that none was given); told one: ``OK.``; else ``None``."""
    last = messages[-1] if messages else ""
    if ASKED_FOR_THE_WORD in last.lower():
        return remembered_word(messages) or NOT_TOLD
    if REMEMBER.search(last):
        return "OK."
    return None


def _answer(text: str, thinking: str) -> list[Step]:
    return [*think(thinking, 2), *say(text, 3), *commit_then_complete(text, 0.2)]


def answer_from_context(ctx: ScenarioContext) -> list[Step] | None:
    """On a follow-up turn, the answer the session calls for (tool results to use, a word to say), or
    ``None``."""
    if ctx.turn == 1:
        return None
    results = tool_results_since_user(ctx.messages)
    if results:
        said = "The tool returned: " + "; ".join(results) + "."
        return _answer(said, "I have the tool's result; answer with it.")
    remembered = memory_answer(ctx.messages)
    if remembered is not None:
        return _answer(remembered, "Answer from memory.")
    return None


def asked_tool_call(ctx: ScenarioContext) -> list[Step] | None:
    """A call of the offered tool the newest message asks for by name, or ``None``."""
    last = ctx.messages[-1] if ctx.messages else ""
    named = [name for name in _CALL.findall(last) if name in ctx.tools]
    if not named:
        return None
    return [*think(f"The user asked me to call {named[0]}.", 2), Sleep(0.02), ToolCall(named[0], {})]


def from_context(ctx: ScenarioContext) -> list[Step] | None:
    """The steps a model's context calls for, or ``None`` when the scenario's script should answer."""
    return answer_from_context(ctx) or asked_tool_call(ctx)
