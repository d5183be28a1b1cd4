"""Usage of one answer: conol's ``contextUsage`` where an event carried it
(``core/protocol/event_fields.py``, ``turn_usage``, says how it maps), otherwise estimated with
LiteLLM's own token counter (the prompt: ``prompt_tokens.py``, each message counted once, images
never fetched); ``provider_specific_fields`` says which (``usage``: ``"reported"`` or
``"estimated"``, and ``usage_estimated``). The reasoning share of the completion tokens is counted as
LiteLLM's stream builder counts it, so a streamed and a non-streamed answer report the same usage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import litellm
from litellm.types.utils import Usage

from ..core.answer.assembler import Assembler
from ..core.protocol.event_fields import TurnUsage, turn_usage
from .prompt_tokens import PromptEstimate


def answer_token_counter(model: str) -> Callable[[str], int]:
    """LiteLLM's token counter for ``model``, as ``max_tokens`` counts the answer."""

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text, count_response_tokens=True))

    return count


def estimate_completion(assembler: Assembler) -> int:
    completion_text = assembler.final_text + assembler.final_reasoning
    completion_text += "".join(call.name + call.arguments for call in assembler.tool_calls)
    if not completion_text:
        return 0
    return int(litellm.token_counter(text=completion_text, count_response_tokens=True))


def estimate_reasoning(assembler: Assembler) -> int | None:
    """What LiteLLM's stream builder counts for the reasoning of a streamed answer."""
    if not assembler.final_reasoning:
        return None
    return int(litellm.token_counter(text=assembler.final_reasoning, count_response_tokens=True))


def make_usage(prompt: int, completion: int, reasoning: int | None) -> Usage:
    """Usage with ``completion_tokens_details.reasoning_tokens`` when there was reasoning (capped at
    the completion tokens, as LiteLLM caps it)."""
    if reasoning is None:
        return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        reasoning_tokens=min(reasoning, completion),
    )


def turn_usage_of(prompt: PromptEstimate | None, assembler: Assembler) -> TurnUsage:
    """One session's usage: reported where conol sent ``contextUsage`` (the prompt is then not
    counted at all: ``prompt`` is ``None``), else estimated (``prompt``: ``estimate_prompt``'s)."""
    completion = estimate_completion(assembler)
    if is_reported(assembler) or prompt is None:
        return turn_usage(assembler.context_usage, 0, completion)
    return turn_usage(None, prompt.tokens, completion)


def is_reported(assembler: Assembler) -> bool:
    """conol reported the turn's usage (a ``contextUsage`` with ``usedTokens``)."""
    context = assembler.context_usage
    return context is not None and bool(context.used_tokens)


@dataclass(frozen=True)
class RequestUsage:
    """A request's usage over its turns, and how much of its prompt count was estimated or reported
    (the operator's metrics, docs/metrics.md)."""

    usage: Usage
    prompt_estimated: int
    prompt_reported: int


def request_usage(turns: Iterable[tuple[PromptEstimate | None, Assembler]]) -> RequestUsage:
    """Over every turn (each repair turn re-sends the whole conversation): conol's reported numbers
    for a turn that carried ``contextUsage``, the estimate for one that did not (``estimate_prompt``'s,
    ``None`` for a reported turn)."""
    prompt = {True: 0, False: 0}  # by reported
    completion = 0
    reasoning: int | None = None
    for estimate, assembler in turns:
        turn = turn_usage_of(estimate, assembler)
        prompt[turn.reported] += turn.prompt_tokens
        completion += turn.completion_tokens
        turn_reasoning = estimate_reasoning(assembler)
        if turn_reasoning is not None:
            reasoning = (reasoning or 0) + turn_reasoning
    usage = make_usage(prompt[True] + prompt[False], completion, reasoning)
    return RequestUsage(usage, prompt_estimated=prompt[False], prompt_reported=prompt[True])
