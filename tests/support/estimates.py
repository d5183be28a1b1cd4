"""The usage our provider estimates when conol reports none (docs/protocol.md#stream: ``contextUsage``
is single source), so tests can assert exact token counts: LiteLLM's count of the request's messages,
and of the answer's text and reasoning."""

from __future__ import annotations

from typing import Any

import litellm

from litellm_conol.fake import Expected


def estimated_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return int(litellm.token_counter(messages=messages))


def estimated_completion_tokens(expected: Expected) -> int:
    return int(
        litellm.token_counter(text=expected.final_text + expected.final_reasoning, count_response_tokens=True)
    )
