"""Core pieces → LiteLLM's streaming chunks, all of one stream with the same id and creation time.

Chunks look like a first-party provider's: ``_hidden_params`` name the provider, and a chunk that
adds no text has ``delta.content == ""`` (not None), except a tool-call delta (OpenAI's convention:
null content beside tool calls) and the finish chunk.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from litellm.types.utils import (
    ChatCompletionDeltaToolCall,
    Delta,
    Function,
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
from ..core.protocol.session_info import SessionInfo
from .result_fields import PROVIDER_NAME, finish_reason, session_fields


def new_response_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


@dataclass
class ChunkMaker:
    """Makes every chunk of one stream, all with the same id and creation time."""

    model: str
    response_id: str = field(default_factory=new_response_id)
    # set by the first chunk, not before the session exists: LiteLLM's stream wrapper stamps the
    # chunks it builds itself with the time it first sees a chunk, and every chunk must agree
    created: int = 0
    last_tool_index: int | None = None  # the index of the last client tool call streamed, if any
    # A client tool call has come (streamed or held), in the order of the pieces: text after it is
    # not content. The assembler cannot say: it has taken a whole batch of queued events before its
    # pieces get here, and text that came before the call in that batch is content.
    calls_seen: bool = False
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

    def for_pieces(self, pieces: Sequence[Piece], *, hold_calls: bool = False) -> list[ModelResponseStream]:
        """The chunks of ``pieces``, in order; ``hold_calls``: client tool calls are not streamed
        (they are validated when the turn ends) but still end the content."""
        chunks = []
        for piece in pieces:
            if hold_calls and isinstance(piece, ClientToolCall):
                self.calls_seen = True
                continue
            chunks.append(self.for_piece(piece))
        return chunks

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

    def for_piece(self, piece: Piece) -> ModelResponseStream:
        if isinstance(piece, TextDelta):
            if self.calls_seen:
                # After a client tool call the content must stay null (OpenAI convention).
                return self.fields_only({"text_with_tool_calls": piece.text})
            return self.chunk(Delta(content=piece.text))
        if isinstance(piece, ReasoningDelta):
            return self.chunk(Delta(content="", reasoning_content=piece.text))
        if isinstance(piece, ClientToolCall):
            self.calls_seen = True
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
