"""One session driven for an exchange: its ``SessionRun``, its ``stop``/``max_tokens`` cutter, and its
chunks, with what conol does not enforce checked on the way (``strict_model``, a required tool call).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from litellm.types.utils import ModelResponseStream

from ..client.driver import SessionRun
from ..client.follow_up import SessionStart
from ..client.pool import shared_client
from ..client.transport import Transport
from ..core.answer.assembler import Assembler
from ..core.answer.cutter import AnswerCutter
from ..core.config.options import ConolRequest
from ..core.errors import BadRequest, ModelDowngraded
from ..core.protocol.event_fields import ContextUsage, reported_model
from ..core.protocol.session_info import SessionInfo
from ..core.protocol.wire import CreateSessionBody
from .chunks import ChunkMaker
from .transcript import answer_begun, release_transcript
from .usage import answer_token_counter


def session_run(
    request: ConolRequest,
    body: CreateSessionBody,
    cutter: AnswerCutter | None = None,
    start: SessionStart | None = None,
) -> SessionRun:
    return SessionRun(
        transport=Transport(
            request.endpoint, shared_client(), max_concurrent_polls=request.max_concurrent_polls
        ),
        body=body,
        assembler=Assembler(
            client_tools=request.client_tools,
            dropped_tools=request.dropped_tools,
            expose_builtins=request.builtin_tools == "expose",
            max_tool_calls=request.max_tool_calls,
            cutter=cutter,
        ),
        timing=request.timing,
        timeout=request.timeout,
        start=start,
        record=request.reuse.mode == "auto",
    )


async def answer_cutter(request: ConolRequest) -> AnswerCutter | None:
    """A fresh cutter for ``stop`` / ``max_tokens`` of the request (one per session), if any. The
    token counter's first use loads the model's tokenizer (Claude's: ~0.3 s): done off the event
    loop, not to stall every stream."""
    limits = request.limits
    if not limits.requested:
        return None
    counter = None
    if limits.max_tokens is not None:
        counter = answer_token_counter(request.model)
        await asyncio.to_thread(counter, "")
    return AnswerCutter(limits.stop, limits.max_tokens, counter)


async def session_chunks(
    request: ConolRequest,
    run: SessionRun,
    maker: ChunkMaker | None = None,
    *,
    hold_calls: bool = False,
) -> AsyncIterator[ModelResponseStream]:
    """Drive one session; yield chunks when a ``maker`` is given; enforce what conol does not.

    ``hold_calls``: client tool calls are not streamed (they are validated when the turn ends).
    """
    # The opening chunk waits for the first content: an agent that fails before saying anything
    # then fails before the proxy's first chunk, and the proxy answers with the error's HTTP status
    # (which SDKs and Codex decide retries by) rather than a 200 stream ending in an error event.
    opened = announced = released = False
    async for pieces in run.pieces():
        if not opened:  # the session was just created
            opened = True
            _check_model(request, run.info)
            continue
        if request.strict_model and run.assembler.context_usage is not None:
            _check_reported_model(request, run.assembler.context_usage)
        if maker is not None and run.info is not None:
            chunks = maker.for_pieces(pieces, hold_calls=hold_calls)
            if chunks and not announced:
                announced = True
                yield maker.opening(run.info)
            for chunk in chunks:
                yield chunk
        if not released and (released := answer_begun(run.assembler)):
            release_transcript(request, run)  # after the first chunks: not on the way to the client
    if request.strict_model and run.assembler.context_usage is not None:
        _check_reported_model(request, run.assembler.context_usage)  # one that came with no text
    if maker is not None and run.info is not None and not announced:
        yield maker.opening(run.info)
    if request.tool_choice_required and not run.assembler.tool_calls:
        raise BadRequest("tool_choice is 'required' but the model answered without calling a tool")


def _check_model(request: ConolRequest, info: SessionInfo | None) -> None:
    if request.strict_model and info is not None and info.model_downgraded:
        raise ModelDowngraded(
            f"conol ran {info.effective_model!r} instead of {request.body.agent_model!r} "
            "(model downgraded) and strict_model is on"
        )


def _check_reported_model(request: ConolRequest, context: ContextUsage) -> None:
    """strict_model: ``contextUsage.modelId`` naming another model is a downgrade too, found as soon
    as an event says so (the create answer may not)."""
    model, other = reported_model(request.body.agent_model, context)
    if other:
        raise ModelDowngraded(
            f"conol reports running {model!r} instead of {request.body.agent_model!r} "
            "(contextUsage.modelId) and strict_model is on"
        )
