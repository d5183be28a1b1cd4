"""The non-streamed answers: the ``ModelResponse`` of a finished exchange, and the health check's."""

from __future__ import annotations

import time
from typing import Any

from litellm.types.utils import ChatCompletionMessageToolCall, Function, Message, ModelResponse, Usage

from ..core.answer.assembler import Assembler
from .result_fields import PROVIDER_NAME, finish_reason


def fill_health_response(response: ModelResponse, *, model: str) -> ModelResponse:
    """The answer to LiteLLM's health check: the token is alive; no session ran, no tokens used."""
    fields = {"health_check": "session token alive (GET /api/auth/get-session); no session created"}
    response.choices[0].message = Message(content="", role="assistant", provider_specific_fields=fields)
    response.choices[0].finish_reason = "stop"
    response.model = model
    response.created = int(time.time())
    response.usage = Usage(prompt_tokens=0, completion_tokens=0, total_tokens=0)
    return response


def fill_model_response(
    response: ModelResponse,
    *,
    model: str,
    assembler: Assembler,
    fields: dict[str, Any],
    usage: Usage,
    content: str | None = None,
) -> ModelResponse:
    """``content``: the answer to return instead of the assembled text (the validated JSON)."""
    tool_calls = [
        ChatCompletionMessageToolCall(
            id=call.id, type="function", function=Function(name=call.name, arguments=call.arguments)
        )
        for call in assembler.tool_calls
    ]
    message = Message(
        content=None if tool_calls else (assembler.final_text if content is None else content),
        role="assistant",
        tool_calls=tool_calls or None,
        reasoning_content=assembler.final_reasoning or None,
        provider_specific_fields=fields,
    )
    choice = response.choices[0]
    choice.message = message
    choice.finish_reason = finish_reason(assembler)
    response.model = model
    response.created = int(time.time())
    response.usage = usage
    response._hidden_params["custom_llm_provider"] = PROVIDER_NAME
    response._hidden_params["usage_estimated"] = fields.get("usage_estimated", True)
    response._hidden_params["conol"] = fields
    return response
