"""Core pieces → LiteLLM's types: streaming chunks, the final ModelResponse, usage, extra fields.

Usage is conol's ``contextUsage`` where an event carried it (``core.turn_usage`` says how it maps),
otherwise estimated with LiteLLM's own token counter; ``provider_specific_fields`` says which
(``usage``: ``"reported"`` or ``"estimated"``, and ``usage_estimated``). The reasoning share of the
completion tokens is counted as LiteLLM's stream builder counts it, so a streamed and a non-streamed
answer report the same usage.

Chunks look like a first-party provider's: ``_hidden_params`` name the provider, and a chunk that
adds no text has ``delta.content == ""`` (not None), except a tool-call delta (OpenAI's convention:
null content beside tool calls) and the finish chunk.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import litellm
from litellm.types.utils import (
    ChatCompletionDeltaToolCall,
    ChatCompletionMessageToolCall,
    Delta,
    Function,
    Message,
    ModelResponse,
    ModelResponseStream,
    StreamingChoices,
    Usage,
)

from ..core.answer.assembler import (
    Assembler,
    BuiltinToolUse,
    ClientToolCall,
    Piece,
    ReasoningDelta,
    TextDelta,
)
from ..core.protocol.event_fields import ContextUsage, TurnUsage, reported_model, turn_usage
from ..core.protocol.session_info import RunStats, SessionInfo


def new_response_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def finish_reason(assembler: Assembler) -> str:
    if assembler.tool_calls:
        return "tool_calls"
    return "length" if assembler.cut is not None and assembler.cut.reason == "length" else "stop"


def answer_token_counter(model: str) -> Callable[[str], int]:
    """LiteLLM's token counter for ``model``, as ``max_tokens`` counts the answer."""

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text, count_response_tokens=True))

    return count


PROVIDER_NAME = "conol"


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


def turn_usage_of(messages: Sequence[Any], assembler: Assembler) -> TurnUsage:
    """One session's usage: reported where conol sent ``contextUsage`` (the prompt is then not
    counted here at all), else estimated."""
    completion = estimate_completion(assembler)
    context = assembler.context_usage
    if context is not None and context.used_tokens:
        return turn_usage(context, 0, completion)
    return turn_usage(None, litellm.token_counter(messages=list(messages)), completion)


def session_fields(info: SessionInfo | None) -> dict[str, Any]:
    if info is None:
        return {}
    return {
        "session_id": info.session_id,
        "effective_model": info.effective_model,
        "model_downgraded": info.model_downgraded,
    }


def result_fields(
    info: SessionInfo | None,
    assembler: Assembler,
    stats: RunStats,
    *,
    requested: str | None = None,
    usage_reported: bool = False,
) -> dict[str, Any]:
    """Everything a proxy client may want to know beyond the OpenAI fields. ``requested``: the
    ``agentModel`` sent, to tell whether ``contextUsage.modelId`` names another model."""
    fields = session_fields(info) | {
        "usage": "reported" if usage_reported else "estimated",
        "usage_estimated": not usage_reported,
        "builtin_tools": [use.as_dict() for use in assembler.builtin_tools],
        "ended_by": stats.ended_by,
        "status_polls": stats.status_polls,
    }
    fields |= context_fields(assembler.context_usage, requested)
    if assembler.window_resets:
        fields["window_resets"] = assembler.window_resets  # events dropped (their meaning is unknown)
    if assembler.dropped_calls:
        # The model called a tool that tool_choice excluded: not returned, but not hidden either.
        fields["dropped_tool_calls"] = [use.as_dict() for use in assembler.dropped_calls]
    if assembler.tool_calls and assembler.final_text:
        fields["text_with_tool_calls"] = assembler.final_text  # content is null; keep the text
    if assembler.answer.rewritten:
        # Streamed deltas cannot be taken back: say so, and give the final text.
        fields["rewritten"] = True
        fields["final_content"] = assembler.final_text
    return fields


def context_fields(context: ContextUsage | None, requested: str | None) -> dict[str, Any]:
    """What ``contextUsage`` adds: its numbers, and ``modelId`` as the model that ran (a downgrade
    the create answer did not report shows up here)."""
    if context is None:
        return {}
    fields: dict[str, Any] = {
        "context_used_tokens": context.used_tokens,
        "context_window": context.context_window,
    }
    model, other = reported_model(requested or "", context)
    if model is not None:
        fields["effective_model"] = model
        fields["model_reported"] = model
        if requested is not None and other:
            fields["model_downgraded"] = True
    return fields


# --- streaming ----------------------------------------------------------------------------------


@dataclass
class ChunkMaker:
    """Makes every chunk of one stream, all with the same id and creation time."""

    model: str
    response_id: str = field(default_factory=new_response_id)
    # set by the first chunk, not before the session exists: LiteLLM's stream wrapper stamps the
    # chunks it builds itself with the time it first sees a chunk, and every chunk must agree
    created: int = 0
    last_tool_index: int | None = None  # the index of the last client tool call streamed, if any
    content_sent: str = ""  # the answer's text as the client got it (session reuse binds this)

    def chunk(
        self, delta: Delta, *, finish: str | None = None, fields: dict[str, Any] | None = None
    ) -> ModelResponseStream:
        if not self.created:
            self.created = int(time.time())
        if delta.content:
            self.content_sent += delta.content
        chunk = ModelResponseStream(
            id=self.response_id,
            created=self.created,
            model=self.model,
            choices=[StreamingChoices(index=0, delta=delta, finish_reason=finish)],
            provider_specific_fields=fields,
        )
        chunk._hidden_params["custom_llm_provider"] = PROVIDER_NAME
        return chunk

    def for_pieces(self, pieces: Sequence[Piece], assembler: Assembler) -> list[ModelResponseStream]:
        return [self.for_piece(piece, assembler) for piece in pieces]

    def fields_only(self, fields: dict[str, Any]) -> ModelResponseStream:
        """A chunk that carries ``fields`` and adds nothing to the answer.

        After a client tool call its delta continues that call (its index, no id, no name, empty
        arguments) rather than being empty: LiteLLM's ``/v1/messages`` adapter opens a new content
        block whenever a chunk's kind changes and takes an empty delta for text, so an empty delta
        after a ``tool_use`` block would end the turn with an empty text block, which the Anthropic
        API refuses when a client sends the turn back. Every consumer that merges tool-call deltas
        by index (openai SDK, LangChain, openai-agents, LiteLLM's ``/v1/responses`` bridge) adds
        nothing for an empty continuation.
        """
        if self.last_tool_index is None:
            return self.chunk(Delta(content=""), fields=fields)
        continuation = ChatCompletionDeltaToolCall(
            index=self.last_tool_index, function=Function(arguments="")
        )
        return self.chunk(Delta(content=None, tool_calls=[continuation]), fields=fields)

    def for_piece(self, piece: Piece, assembler: Assembler) -> ModelResponseStream:
        if isinstance(piece, TextDelta):
            if assembler.tool_calls:
                # After a client tool call the content must stay null (OpenAI convention).
                return self.fields_only({"text_with_tool_calls": piece.text})
            return self.chunk(Delta(content=piece.text))
        if isinstance(piece, ReasoningDelta):
            return self.chunk(Delta(content="", reasoning_content=piece.text))
        if isinstance(piece, ClientToolCall):
            self.last_tool_index = piece.index
            return self.chunk(Delta(content=None, tool_calls=[_delta_tool_call(piece)]))
        return self.fields_only({"builtin_tool": _builtin(piece)})

    def opening(self, info: SessionInfo) -> ModelResponseStream:
        """The first chunk: the assistant role and the conol session, as soon as it exists."""
        return self.chunk(Delta(content="", role="assistant"), fields=session_fields(info))

    def closing(
        self, assembler: Assembler, fields: dict[str, Any], usage: Usage
    ) -> list[ModelResponseStream]:
        """The result's fields and usage, then the finish reason.

        LiteLLM's stream wrapper swallows a custom provider's content-less finish chunk (it emits
        its own), so what must reach the client rides on a chunk of its own before it.
        """
        summary = self.fields_only(fields)
        summary.usage = usage
        # LiteLLM assembles a stream for its callbacks (spend logs, loggers) from the chunks, keeping
        # no chunk-level fields but the last chunk's hidden ``provider_specific_fields``: there the
        # streamed result's fields (session id, …) reach callbacks as they do for a non-streamed one.
        summary._hidden_params["provider_specific_fields"] = fields
        return [summary, self.chunk(Delta(content=None), finish=finish_reason(assembler))]


def _delta_tool_call(call: ClientToolCall) -> ChatCompletionDeltaToolCall:
    return ChatCompletionDeltaToolCall(
        id=call.id,
        type="function",
        index=call.index,
        function=Function(name=call.name, arguments=call.arguments),
    )


def _builtin(use: BuiltinToolUse) -> dict[str, Any]:
    return use.as_dict()


# --- non-streaming ------------------------------------------------------------------------------


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
