"""The one effort mapping: whatever a client asks for → the ``agentEffort`` conol runs the model at.

Inputs, strongest first (``effort_inputs`` gathers them from the call and the original request):

1. Anthropic ``output_config.effort`` (low | medium | high | max; Claude Code's effort setting);
2. OpenAI ``reasoning_effort`` (none | minimal | low | medium | high | xhigh; also the ``{effort}``
   object LiteLLM's ``/v1/messages`` adapter passes for non-Claude names);
3. Responses' ``reasoning.effort`` (same words);
4. Anthropic ``thinking``: ``enabled`` with ``budget_tokens`` (by LiteLLM's budget thresholds),
   ``adaptive`` (no effort of its own: the deployment's ``default_effort``, else ``high``, the
   effort Anthropic's API runs adaptive thinking at when ``output_config`` says none), ``disabled``
   (the lowest step);
5. nothing: the deployment's ``default_effort``, else ``low`` (the spec's default).

Both vocabularies sit on one scale (``RANKS``): ``low…max`` and ``minimal…xhigh`` meet
at low/medium/high, ``minimal`` (and ``none``) is below ``low``, and ``xhigh`` and ``max`` are the
same top step (docs/protocol.md#effort-words: one vocabulary's top is the other's).
The deployment's ``max_effort`` caps the rank; the result is then clamped onto the model's ladder
(``effort_ladders`` in ``models.json``): the highest step at or below the rank, else the lowest step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from ..errors import BadRequest
from ..protocol.wire import Effort

RANKS: dict[str, int] = {
    "none": 0,
    "minimal": 1,
    "low": 2,
    "medium": 3,
    "high": 4,
    "xhigh": 5,
    "max": 5,
}
WIRE_EFFORTS: frozenset[str] = frozenset(get_args(Effort))
# The low…max vocabulary: what conol takes for a model models.json gives no ladder for
# (docs/protocol.md#effort-words).
DEFAULT_LADDER: tuple[Effort, ...] = ("low", "medium", "high", "max")
DEFAULT_EFFORT = "low"  # nothing asked, no default_effort: the spec's default
ADAPTIVE_EFFORT = "high"  # adaptive thinking with no effort given: Anthropic's own default effort

# Anthropic ``thinking.budget_tokens`` → rank: LiteLLM's thresholds for medium and high
# (``DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET``) and its xhigh one for the top step.
_THINKING_BUDGETS: tuple[tuple[int, str], ...] = ((8192, "max"), (4096, "high"), (2048, "medium"))

# The keys ``effort_inputs`` reads, from the call's params and the client's original request body.
EFFORT_KEYS = ("output_config", "reasoning_effort", "reasoning", "thinking")


@dataclass(frozen=True, slots=True)
class EffortChoice:
    """What conol receives, and why (for logs and ``provider_specific_fields``)."""

    effort: Effort
    requested: str  # the word (or thinking form) the request came down to, before cap and ladder
    source: str  # output_config | reasoning_effort | reasoning | thinking | default_effort | default


def choose_effort(
    inputs: Mapping[str, Any],
    *,
    ladder: Sequence[Effort] = DEFAULT_LADDER,
    default_effort: Any = None,
    max_effort: Any = None,
) -> EffortChoice:
    """The ``agentEffort`` for a request's effort ``inputs`` (keys of ``EFFORT_KEYS``), on ``ladder``."""
    default = _word("default_effort", default_effort) if default_effort is not None else None
    word, source = _requested(inputs, default)
    rank = RANKS[word]
    if max_effort is not None:
        cap = _word("max_effort", max_effort)
        rank = min(rank, RANKS[cap])
        if RANKS[ladder[0]] > RANKS[cap]:
            raise BadRequest(
                f"max_effort {cap!r} is below the lowest effort this model runs at ({ladder[0]!r}; its "
                f"efforts are {', '.join(ladder)}): raise max_effort for this deployment or use another model"
            )
    return EffortChoice(effort=clamp(rank, ladder), requested=word, source=source)


def clamp(rank: int, ladder: Sequence[Effort]) -> Effort:
    """The highest step of ``ladder`` at or below ``rank``; the lowest step when none is
    (docs/protocol.md#effort-words)."""
    at_or_below = [step for step in ladder if RANKS[step] <= rank]
    return at_or_below[-1] if at_or_below else ladder[0]


def map_effort(reasoning_effort: Any = None, reasoning: Any = None, thinking: Any = None) -> Effort:
    """The effort for these OpenAI/Anthropic params on the ``low…max`` ladder (no deployment settings)."""
    inputs = {"reasoning_effort": reasoning_effort, "reasoning": reasoning, "thinking": thinking}
    return choose_effort(inputs).effort


def effort_inputs(params: Mapping[str, Any], original_body: Mapping[str, Any] | None) -> dict[str, Any]:
    """The effort keys of the call, with the client's original request (through the proxy) winning.

    LiteLLM 1.108's ``/v1/messages`` adapter drops ``output_config`` before the handler, passes
    ``thinking`` as is for Claude names and, for other names, replaces it with a ``reasoning_effort``
    of its own choosing; the proxy keeps the body the client sent (``proxy_server_request.body``).
    A ``reasoning_effort`` the body does not have, next to a ``thinking`` it does, is the adapter's:
    dropped, so both names go through this one mapping.
    """
    inputs = {key: params[key] for key in EFFORT_KEYS if params.get(key) is not None}
    if not original_body:
        return inputs
    from_body = {key: original_body[key] for key in EFFORT_KEYS if original_body.get(key) is not None}
    if "thinking" in from_body and "reasoning_effort" not in from_body:
        inputs.pop("reasoning_effort", None)
    return {**inputs, **from_body}


def reported_ladder(words: Sequence[str] | None) -> tuple[Effort, ...] | None:
    """A ladder conol reported (discovery's ``efforts``, kept in a refreshed catalog) in conol's words,
    lowest first; words it does not know are left out, ``None`` when none is left. Read tolerantly:
    a surprising answer must not fail requests (a models.json ladder is checked: ``check_ladder``)."""
    known = {word.strip().lower() for word in words or () if word.strip().lower() in WIRE_EFFORTS}
    ladder = tuple(sorted(known, key=lambda word: (RANKS[word], word)))
    return ladder or None  # type: ignore[return-value]  # only WIRE_EFFORTS words are kept


def check_ladder(model: str, ladder: Any) -> tuple[Effort, ...]:
    """A ``models.json`` ladder: a non-empty list of conol effort words, lowest first."""
    if not isinstance(ladder, list) or not ladder:
        raise ValueError(f"effort_ladders[{model!r}] must be a non-empty list of effort words")
    for step in ladder:
        if step not in WIRE_EFFORTS:
            raise ValueError(
                f"effort_ladders[{model!r}] has {step!r}, not one of {', '.join(sorted(WIRE_EFFORTS))}"
            )
    if [RANKS[s] for s in ladder] != sorted(RANKS[s] for s in ladder):
        raise ValueError(f"effort_ladders[{model!r}] must list its efforts lowest first, got {ladder}")
    return tuple(ladder)


# --- reading the request ------------------------------------------------------------------------


def _requested(inputs: Mapping[str, Any], default: str | None) -> tuple[str, str]:
    output_config = inputs.get("output_config")
    if isinstance(output_config, Mapping) and output_config.get("effort") is not None:
        return _word("output_config.effort", output_config["effort"]), "output_config"
    effort = inputs.get("reasoning_effort")
    if isinstance(effort, Mapping):  # the /v1/messages adapter's {effort, summary}
        effort = effort.get("effort")
    if effort is not None:
        return _word("reasoning_effort", effort), "reasoning_effort"
    reasoning = inputs.get("reasoning")
    if isinstance(reasoning, Mapping) and reasoning.get("effort") is not None:
        return _word("reasoning.effort", reasoning["effort"]), "reasoning"
    thinking = inputs.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive", "disabled"):
        return _thinking_word(thinking, default), "thinking"
    if default is not None:
        return default, "default_effort"
    return DEFAULT_EFFORT, "default"


def _thinking_word(thinking: Mapping[str, Any], default: str | None) -> str:
    kind = thinking.get("type")
    if kind == "disabled":
        return "none"
    if kind == "adaptive":
        return default or ADAPTIVE_EFFORT
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise BadRequest(f"thinking.budget_tokens {budget!r} is not a whole number")
    return next((word for floor, word in _THINKING_BUDGETS if budget >= floor), "low")


def _word(name: str, value: Any) -> str:
    word = str(value).strip().lower() if isinstance(value, str) else None
    if word not in RANKS:
        raise BadRequest(
            f"{name} {value!r} is not an effort: use one of {', '.join(RANKS)} "
            "(low…max and minimal…xhigh are both accepted)"
        )
    return word
