"""The reference answers of the ``stop`` / ``max_tokens`` tests (every tier uses the same ones), and
reading a chunk stream into text, finish reason and ids."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import litellm

from litellm_conol.fake import BUILTINS


@cache
def longest_prefix_within(limit: int, model: str = "claude-haiku-4-5") -> str:
    """The reference answer of long_writer under max_tokens=limit: the longest prefix of its text
    with at most ``limit`` tokens of LiteLLM's counter, found by trying every length."""
    text = BUILTINS["long_writer"].final_text

    def count(k: int) -> int:
        return litellm.token_counter(model=model, text=text[:k], count_response_tokens=True)

    lengths = [k for k in range(1, 12 * limit) if count(k) <= limit]
    return text[: max(lengths)]


def collect(chunks: Iterable[Any]) -> tuple[str, str | None, set[str]]:
    """A stream's text, its finish reason and the set of chunk ids it used."""
    content: list[str] = []
    finish: str | None = None
    ids: set[str] = set()
    for chunk in chunks:
        ids.add(chunk.id)
        if not chunk.choices:
            continue
        content.append(chunk.choices[0].delta.content or "")
        finish = chunk.choices[0].finish_reason or finish
    return "".join(content), finish, ids
