"""The prompt's tokens when conol reports none (docs/upstream-variants.md#reported-usage-contextusage):
LiteLLM's own token counter, one message at a time, so that each message is counted once while a
conversation grows (remembered by its digest), and attachments counted without ever being fetched
or decoded.

The sum is what ``litellm.token_counter(messages=…)`` gives the whole conversation: that counter
adds each message's count and 3 for the reply's priming. Where it would fetch an image (an
``image_url`` with ``detail: "high"``: a synchronous GET on the event loop, after the paid session)
or decode one, or raise on a part it does not know (after the paid session too), each attachment
is counted at a fixed size instead: 85 tokens for an image at detail ``low`` or ``auto`` (what
LiteLLM 1.108's counter gives it without looking; 1.110's reads an inline image's size to count its
tiles), LiteLLM's default image count (250) for anything else. The
result says how many were counted so (``estimated_attachments``). Counting never fails an answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import litellm
from litellm.constants import DEFAULT_IMAGE_TOKEN_COUNT
from litellm.utils import convert_list_message_to_dict

from ..core.memo import DigestMemo, json_digest

REPLY_PRIMING = 3  # the counter adds it once per count of messages (<|start|>assistant<|message|>)
GLANCED_IMAGE = 85  # LiteLLM 1.108's tokens for an image at detail low or auto (it does not look)
# Parts the counter reads as text (a tool_result's content may hold attachments: it is walked).
TEXT_PARTS = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_use", "tool_reference", "search_result"}
)
# ~270 bytes each: a few hundred conversations of agent turns.
MESSAGE_TOKENS: DigestMemo[tuple[int, int]] = DigestMemo(size=4096)


@dataclass(frozen=True)
class PromptEstimate:
    tokens: int
    estimated_attachments: int  # images and files counted at a fixed size, never looked at


def estimate_prompt(messages: Sequence[Any]) -> PromptEstimate:
    """The prompt's tokens as LiteLLM's counter gives them, each message counted once per process."""
    if litellm.disable_token_counter is True:
        return PromptEstimate(0, 0)
    tokens, attachments = REPLY_PRIMING, 0
    for message in messages:
        counted, found = message_tokens(message)
        tokens, attachments = tokens + counted, attachments + found
    return PromptEstimate(tokens, attachments)


def message_tokens(message: Any) -> tuple[int, int]:
    """(tokens, attachments) of one message; remembered by its digest when it is plain JSON."""
    plain = _as_dict(message)
    digest = json_digest(plain)
    known = MESSAGE_TOKENS.get(digest) if digest is not None else None
    if known is not None:
        return known
    counted = _count(plain)
    if digest is not None:
        MESSAGE_TOKENS.put(digest, counted)
    return counted


def _as_dict(message: Any) -> Any:
    """The message as the counter reads it (a pydantic message becomes its dict, nulls dropped)."""
    try:
        return convert_list_message_to_dict([message])[0]
    except Exception:  # not a message the counter could read: counted roughly below
        return message


def _count(message: Any) -> tuple[int, int]:
    if not isinstance(message, Mapping):
        return _rough(message), 0
    text_only, glanced, other = _without_attachments(message)
    try:
        tokens = int(litellm.token_counter(messages=[text_only], count_response_tokens=True))
    except Exception:  # a part the counter cannot read: never a failed answer for an estimate
        tokens = _rough(text_only)
    return tokens + glanced * GLANCED_IMAGE + other * DEFAULT_IMAGE_TOKEN_COUNT, glanced + other


def _without_attachments(message: Mapping[str, Any]) -> tuple[dict[str, Any], int, int]:
    """The message without its attachments; (that, images at detail low/auto, other attachments)."""
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message), 0, 0
    parts, glanced, other = _text_parts(content)
    return {**message, "content": parts}, glanced, other


def _text_parts(parts: list[Any]) -> tuple[list[Any], int, int]:
    kept: list[Any] = []
    glanced = other = 0
    for part in parts:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if isinstance(part, str) or kind in TEXT_PARTS:
            kept.append(part)
        elif kind == "tool_result" and isinstance(part, Mapping):
            inner = part.get("content")
            if isinstance(inner, list):
                inner, more_glanced, more_other = _text_parts(inner)
                glanced, other = glanced + more_glanced, other + more_other
            kept.append({**part, "content": inner})
        elif _glanced(part, kind):
            glanced += 1
        else:
            other += 1  # an image at detail high, a file, audio, a part the counter does not know
    return kept, glanced, other


def _glanced(part: Any, kind: Any) -> bool:
    """An image the counter counts without looking at it (85 tokens): detail low or auto."""
    if kind == "image":
        return True  # Anthropic's image block: the counter's mode is auto
    if kind != "image_url":
        return False
    image_url = part.get("image_url")
    if isinstance(image_url, str):
        return bool(image_url.strip())
    return isinstance(image_url, Mapping) and image_url.get("detail", "auto") in ("low", "auto")


def _rough(value: Any) -> int:
    """About 4 characters a token, for what the counter cannot read."""
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return len(text) // 4
