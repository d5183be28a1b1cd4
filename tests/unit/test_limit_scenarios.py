"""The fake's ``stop``/``max_tokens`` scenarios say what they send (the SDK and proxy tests rely on it)."""

from __future__ import annotations

from functools import cache

import litellm
import pytest

import litellm_conol
from litellm_conol.fake import BUILTINS, long_text
from litellm_conol.fake._library import STOP_SEQUENCE, STOP_SPLIT_ANSWER

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


LIMIT = 60


@cache
def longest_prefix_within(limit: int, model: str = "claude-haiku-4-5") -> str:
    """The reference answer of long_writer under max_tokens=limit: the longest prefix of its text
    with at most ``limit`` tokens of LiteLLM's counter, found by trying every length."""
    text = BUILTINS["long_writer"].final_text

    def count(k: int) -> int:
        return litellm.token_counter(model=model, text=text[:k], count_response_tokens=True)

    lengths = [k for k in range(1, 12 * limit) if count(k) <= limit]
    return text[: max(lengths)]


def test_the_scenarios_say_what_they_send():
    assert BUILTINS["stop_split"].final_text.startswith(STOP_SPLIT_ANSWER + STOP_SEQUENCE)
    assert BUILTINS["long_writer"].final_text == long_text(20000)
    assert litellm.token_counter(model="claude-haiku-4-5", text=longest_prefix_within(LIMIT)) == LIMIT
