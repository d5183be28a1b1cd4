"""The LiteLLM ``CustomLLM`` for ``conol/<model>``: thin wiring of options, driver and mapping.

All four entry points share one implementation: ``_run`` yields LiteLLM streaming chunks;
``astreaming`` passes them on, ``acompletion`` folds the same run into a ModelResponse, and the
sync pair runs those on a background loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import ModelResponse, ModelResponseStream

from ._assembler import Assembler
from ._cutter import AnswerCutter
from ._driver import SessionInfo, SessionRun
from ._errors import BadRequest, ModelDowngraded
from ._options import ConolRequest, build_request, is_health_check
from ._registration import allow_extra_params
from ._sync import iterate_sync, run_sync
from ._transformation import (
    ChunkMaker,
    answer_token_counter,
    estimate_usage,
    fill_health_response,
    fill_model_response,
    result_fields,
)
from ._transport import Transport, shared_client


class ConolLLM(CustomLLM):  # type: ignore[misc]
    """conol.ai as a LiteLLM provider."""

    # -- the four entry points LiteLLM calls --

    def completion(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> ModelResponse:
        return run_sync(self.acompletion(model, messages, api_base, **kwargs))

    def streaming(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> Iterator[ModelResponseStream]:
        return iterate_sync(self.astreaming(model, messages, api_base, **kwargs))

    async def acompletion(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> ModelResponse:
        request = _request(model, messages, api_base, kwargs)
        response: ModelResponse = kwargs.get("model_response") or ModelResponse()
        if is_health_check(kwargs.get("litellm_params")):
            # LiteLLM's health check (proxy /health, background checks): check the token, not a paid session.
            await Transport(request.endpoint, shared_client()).check_token()
            return fill_health_response(response, model=request.model)
        run = _session_run(request, await _cutter(request))
        async for _ in _chunks(request, run):
            pass  # the run's assembler accumulates the answer
        return fill_model_response(
            response,
            model=request.model,
            assembler=run.assembler,
            info=run.info,
            stats=run.stats,
            usage=estimate_usage(messages, run.assembler),
        )

    async def astreaming(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> AsyncIterator[ModelResponseStream]:
        request = _request(model, messages, api_base, kwargs)
        run = _session_run(request, await _cutter(request))
        maker = ChunkMaker(model=request.model)
        async for chunk in _chunks(request, run, maker):
            yield chunk
        fields = result_fields(run.info, run.assembler, run.stats)
        for chunk in maker.closing(run.assembler, fields, estimate_usage(messages, run.assembler)):
            yield chunk


def _request(model: str, messages: list[Any], api_base: str | None, kwargs: dict[str, Any]) -> ConolRequest:
    timeout: float | httpx.Timeout | None = kwargs.get("timeout")
    return build_request(
        model=model,
        messages=messages,
        api_key=kwargs.get("api_key"),
        api_base=api_base,
        optional_params=kwargs.get("optional_params") or {},
        timeout=timeout,
    )


def _session_run(request: ConolRequest, cutter: AnswerCutter | None) -> SessionRun:
    return SessionRun(
        transport=Transport(
            request.endpoint, shared_client(), max_concurrent_polls=request.max_concurrent_polls
        ),
        body=request.body,
        assembler=Assembler(
            client_tools=request.client_tools,
            dropped_tools=request.dropped_tools,
            expose_builtins=request.builtin_tools == "expose",
            max_tool_calls=request.max_tool_calls,
            cutter=cutter,
        ),
        timing=request.timing,
        timeout=request.timeout,
    )


async def _cutter(request: ConolRequest) -> AnswerCutter | None:
    """``stop`` / ``max_tokens`` of the request, if any. The token counter's first use loads the
    model's tokenizer (Claude's: ~0.3 s): done off the event loop, not to stall every stream."""
    limits = request.limits
    if not limits.requested:
        return None
    counter = None
    if limits.max_tokens is not None:
        counter = answer_token_counter(request.model)
        await asyncio.to_thread(counter, "")
    return AnswerCutter(limits.stop, limits.max_tokens, counter)


async def _chunks(
    request: ConolRequest, run: SessionRun, maker: ChunkMaker | None = None
) -> AsyncIterator[ModelResponseStream]:
    """Drive the session; yield chunks when a ``maker`` is given; enforce what conol does not."""
    opened = False
    async for pieces in run.pieces():
        if not opened:  # the session was just created
            opened = True
            _check_model(request, run.info)
            if maker is not None and run.info is not None:
                yield maker.opening(run.info)
        elif maker is not None:
            for chunk in maker.for_pieces(pieces, run.assembler):
                yield chunk
    if request.tool_choice_required and not run.assembler.tool_calls:
        raise BadRequest("tool_choice is 'required' but the model answered without calling a tool")


def _check_model(request: ConolRequest, info: SessionInfo | None) -> None:
    if request.strict_model and info is not None and info.model_downgraded:
        raise ModelDowngraded(
            f"conol ran {info.effective_model!r} instead of {request.body.agent_model!r} "
            "(model downgraded) and strict_model is on"
        )


conol_llm = ConolLLM()
allow_extra_params()  # wherever the handler is used (SDK or proxy), reasoning_effort passes LiteLLM
