"""The LiteLLM ``CustomLLM`` for ``conol/<model>``: thin wiring of options, exchange and mapping.

All four entry points share one implementation: an :class:`~._exchange.Exchange` (the session,
and any repair turns) yields LiteLLM streaming chunks; ``astreaming`` passes them on,
``acompletion`` folds the same run into a ModelResponse, and the sync pair runs those on a
background loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import ModelResponse, ModelResponseStream

from ..client.discovery import discovery_cache
from ..client.pool import shared_client
from ..client.transport import Transport
from ..core.config.boundary import settings_of, settle_params
from ..core.config.options import ConolRequest, build_request, is_health_check, request_endpoint
from ..core.errors import ConolError
from ..core.models.discovery import Discovered, discovery_settings
from .caller import caller_of
from .chunks import ChunkMaker
from .deployment import deployment_params
from .exchange import Exchange
from .litellm_compat import accept_custom_providers_on_generate_content, announce_attempt
from .model_map import register_model_map
from .params_patch import allow_extra_params
from .response import fill_health_response, fill_model_response
from .sync import iterate_sync, run_sync
from .usage_fields import noting


class ConolLLM(CustomLLM):  # type: ignore[misc]
    """conol.ai as a LiteLLM provider: the ``CustomLLM`` behind ``conol/<model>``.

    LiteLLM calls its four entry points (``completion``, ``streaming``, ``acompletion``,
    ``astreaming``); each turns the request into conol sessions and the answer into a LiteLLM
    response or chunks. Use the shared instance ``conol_llm`` rather than making another.
    """

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
        response: ModelResponse = kwargs.get("model_response") or ModelResponse()
        if is_health_check(kwargs.get("litellm_params")):
            # LiteLLM's health check (proxy /health, background checks): check the token, not a paid session.
            request = _request(model, messages, api_base, kwargs)
            await Transport(request.endpoint, shared_client()).check_token()
            return fill_health_response(response, model=request.model)
        with noting(kwargs) as noted:
            request = _request(model, messages, api_base, kwargs)
            announce_attempt(kwargs.get("logging_obj"), messages, request.endpoint.base_url)
            exchange = noted.exchange = Exchange(request, messages)
            async for _ in exchange.chunks():
                pass  # each run's assembler accumulates its answer
        return fill_model_response(
            response,
            model=request.model,
            assembler=exchange.last.assembler,
            fields=exchange.fields(),
            usage=exchange.usage(),
            content=exchange.content,
        )

    async def astreaming(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> AsyncIterator[ModelResponseStream]:
        with noting(kwargs) as noted:
            request = _request(model, messages, api_base, kwargs)
            announce_attempt(kwargs.get("logging_obj"), messages, request.endpoint.base_url)
            exchange = noted.exchange = Exchange(request, messages)
            maker = ChunkMaker(model=request.model)
            async for chunk in exchange.chunks(maker):
                yield chunk
        for chunk in maker.closing(exchange.last.assembler, exchange.fields(), exchange.usage()):
            yield chunk


def _request(model: str, messages: list[Any], api_base: str | None, kwargs: dict[str, Any]) -> ConolRequest:
    """The call resolved, after the operator/caller boundary (a 400 before any network I/O)."""
    timeout: float | httpx.Timeout | None = kwargs.get("timeout")
    litellm_params = kwargs.get("litellm_params")
    body = original_body(litellm_params)
    try:
        params = settle_params(
            kwargs.get("optional_params") or {},
            body,
            deployment_params(litellm_params) if body is not None else None,
        )
    except ConolError as refusal:
        refusal.refused_by = "settings_boundary"  # for the usage log: no session was spent on it
        raise
    request = build_request(
        model=model,
        messages=messages,
        api_key=kwargs.get("api_key"),
        api_base=api_base,
        optional_params=params,
        timeout=timeout,
        original_body=body,
        discovered=_discovered(kwargs.get("api_key"), api_base, params),
    )
    return dataclasses.replace(request, caller=caller_of(kwargs).digest())


def original_body(litellm_params: Any) -> dict[str, Any] | None:
    """The request body as the client sent it to the proxy; ``None`` outside the proxy.

    The proxy keeps it in ``litellm_params["proxy_server_request"]["body"]`` (LiteLLM 1.108), before
    its ``/v1/messages`` adapter drops ``output_config`` and rewrites ``thinking`` for non-Claude names.
    """
    if not isinstance(litellm_params, dict):
        return None
    server_request = litellm_params.get("proxy_server_request")
    body = server_request.get("body") if isinstance(server_request, dict) else None
    return body if isinstance(body, dict) else None


def _discovered(api_key: str | None, api_base: str | None, params: dict[str, Any]) -> Discovered | None:
    """What run-time discovery knows now (``discovery: startup | interval``); never waits for it."""
    mode, interval = discovery_settings(settings_of(params))
    if mode == "off":
        return None
    endpoint = request_endpoint(api_key, api_base)
    return discovery_cache.current(endpoint, shared_client(), mode, interval)


conol_llm = ConolLLM()
"""The handler instance: ``custom_handler: litellm_conol.conol_llm`` in a proxy's
``custom_provider_map``; ``register()`` installs it for SDK use."""
allow_extra_params()  # wherever the handler is used (SDK or proxy), reasoning_effort passes LiteLLM
register_model_map()  # and LiteLLM knows the catalog's models: capabilities, estimated prices
accept_custom_providers_on_generate_content()  # and Gemini CLI's routes reach LiteLLM's adapter
