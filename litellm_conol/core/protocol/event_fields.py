"""Reading the event fields other clients saw (docs/protocol.md#stream): ``contextUsage``, the text of
``assistant`` and ``stream_event`` events, ``windowReset``, and what usage a turn reports.

Each is one source's reading, never checked live, so everything here is tolerant: a value of an
unexpected type is ``None`` (or empty), never an error, and the event it rode on is read all the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_IMAGE_TYPES = frozenset({"image", "image_url", "input_image"})
_TEXT_KEYS = ("text", "content", "output", "result")


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """``contextUsage {usedTokens, contextWindow, modelId}``: how full the session's context is after
    the turn so far (prompt, conol's own preamble and tools, and the answer), and the model that ran."""

    used_tokens: int | None = None
    context_window: int | None = None
    model_id: str | None = None

    def merged(self, newer: ContextUsage) -> ContextUsage:
        """Later events win, field by field; a field a later event leaves out keeps its value."""
        return ContextUsage(
            newer.used_tokens if newer.used_tokens is not None else self.used_tokens,
            newer.context_window if newer.context_window is not None else self.context_window,
            newer.model_id or self.model_id,
        )


def read_context_usage(raw: Any) -> ContextUsage | None:
    """``contextUsage`` as sent; ``None`` when it holds nothing readable."""
    if not isinstance(raw, dict):
        return None
    usage = ContextUsage(
        _count(raw.get("usedTokens")), _count(raw.get("contextWindow")), _name(raw.get("modelId"))
    )
    return usage if usage != ContextUsage() else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def _name(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def is_window_reset(value: Any) -> bool:
    """``windowReset: true`` (also ``1`` or ``"true"``): other clients drop such an event whole
    (docs/protocol.md#stream)."""
    return value is True or value == 1 or (isinstance(value, str) and value.lower() == "true")


def event_text(value: Any) -> str:
    """The text of an ``assistant`` / ``stream_event`` field: a string, a list of parts (joined), or a
    part (``text``, ``content``, ``output`` or ``result``); image parts and other values are no text.

    It never strips whitespace: a delta's leading space is part of the answer."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for item in value if (text := event_text(item)))
    if not isinstance(value, dict) or value.get("type") in _IMAGE_TYPES:
        return ""
    for key in _TEXT_KEYS:
        text = event_text(value.get(key))
        if text:
            return text
    return ""


def is_reasoning_delta(value: Any) -> bool:
    """A ``stream_event`` delta that is reasoning (``{"type": "thinking_delta", "thinking": …}``)."""
    return isinstance(value, dict) and ("thinking" in value or "thinking" in str(value.get("type", "")))


def reasoning_text(value: Any) -> str:
    thinking = value.get("thinking") if isinstance(value, dict) else None
    return thinking if isinstance(thinking, str) else event_text(value)


# --- usage: reported where conol says it, estimated otherwise ----------------------------------------


@dataclass(frozen=True, slots=True)
class TurnUsage:
    prompt_tokens: int
    completion_tokens: int
    reported: bool

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def turn_usage(context: ContextUsage | None, prompt_estimate: int, completion_estimate: int) -> TurnUsage:
    """One turn's usage. With a reported ``usedTokens`` (the context after the turn: everything conol
    put before the model, and the answer) the total is that number; conol does not split it, so the
    completion stays the estimate of the answer (capped at the total) and the prompt is the rest.
    Without one (or with 0, which no real turn uses), both are the estimates."""
    used = context.used_tokens if context is not None else None
    if not used:
        return TurnUsage(prompt_estimate, completion_estimate, reported=False)
    completion = min(completion_estimate, used)
    return TurnUsage(used - completion, completion, reported=True)


def reported_model(requested: str, context: ContextUsage | None) -> tuple[str | None, bool]:
    """(``contextUsage.modelId``, whether it is another model than ``requested``): the model that
    actually ran, a downgrade signal the create answer may not give (it names the model only on a
    downgrade, docs/protocol.md#models-and-downgrades). Ids are compared without their vendor prefix and case:
    ``deepseek/deepseek-v4-pro`` ran as ``deepseek-v4-pro`` is no downgrade."""
    reported = context.model_id if context is not None else None
    if reported is None:
        return None, False
    return reported, _bare(reported) != _bare(requested)


def _bare(model: str) -> str:
    return model.rsplit("/", 1)[-1].lower()
