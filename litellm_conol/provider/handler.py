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
from ..core.errors import BadRequest, ConolError
from ..core.models.discovery import Discovered, discovery_settings
from .caller import caller_of
from .chunks import ChunkMaker
from .deployment import deployment_params, in_proxy, is_client_side_copy, operator_connection
from .exchange import Exchange
from .litellm_compat import accept_custom_providers_on_generate_content, announce_attempt
from .model_map import register_model_map
from .params_patch import allow_extra_params
from .pre_call import ensure_pre_call_guard, install_pre_call_guard
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
        if _is_health_check(kwargs.get("litellm_params")):
            # LiteLLM's health check (proxy /health, background checks): check the token, not a paid session.
            request = _request(model, messages, api_base, kwargs)
            await Transport(request.endpoint, shared_client()).check_token()
            return fill_health_response(response, model=request.model)
        with noting(kwargs) as noted:
            request = _attempt(model, messages, api_base, kwargs)
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
            request = _attempt(model, messages, api_base, kwargs)
            exchange = noted.exchange = Exchange(request, messages)
            maker = ChunkMaker(model=request.model)
            async for chunk in exchange.chunks(maker):
                yield chunk
        for chunk in maker.closing(exchange.last.assembler, exchange.fields(), exchange.usage()):
            yield chunk


def _attempt(model: str, messages: list[Any], api_base: str | None, kwargs: dict[str, Any]) -> ConolRequest:
    """The call resolved (:func:`_request`), and LiteLLM's logging object told that an attempt goes
    upstream, as its own providers tell it: the Router tells a retry's failure by that mark
    (docs/litellm-versions.md#the-routers-cooldowns-on-1110)."""
    request = _request(model, messages, api_base, kwargs)
    announce_attempt(kwargs.get("logging_obj"), messages, request.endpoint.base_url)
    return request


def _request(model: str, messages: list[Any], api_base: str | None, kwargs: dict[str, Any]) -> ConolRequest:
    """The call resolved, after the operator/caller boundary (a 400 before any network I/O)."""
    timeout: float | httpx.Timeout | None = kwargs.get("timeout")
    litellm_params = kwargs.get("litellm_params")
    body = original_body(litellm_params)
    api_key: str | None = kwargs.get("api_key")
    try:
        if in_proxy():
            ensure_pre_call_guard()
            if body is None and not is_health_check(litellm_params):
                raise BadRequest(MISSING_SNAPSHOT)
        operator = deployment_params(litellm_params) if body is not None else None
        if body is not None:  # a proxied request: where conol is and its token are the operator's
            api_key, api_base = operator_connection(operator, api_key, api_base)
            body = caller_sent(litellm_params, body)
        params = settle_params(kwargs.get("optional_params") or {}, body, operator)
        if body is not None and is_client_side_copy(litellm_params):
            raise BadRequest(OWN_CREDENTIALS)
    except ConolError as refusal:
        refusal.refused_by = "settings_boundary"  # for the usage log: no session was spent on it
        raise
    request = build_request(
        model=model,
        messages=messages,
        api_key=api_key,
        api_base=api_base,
        optional_params=params,
        timeout=timeout,
        original_body=body,
        discovered=_discovered(api_key, api_base, params),
    )
    caller = caller_of(kwargs)
    if not caller.reusable:  # a proxy without keys: nobody's sessions are told apart, none continued
        request = dataclasses.replace(request, reuse=dataclasses.replace(request.reuse, mode="off"))
    return dataclasses.replace(request, caller=caller.digest())


# A routed call always carries the proxy's record of the request; one without it came in some other
# way (a fallbacks entry LiteLLM merged in can remove it), and nothing then tells the caller's
# settings from the operator's: refused, never read as the SDK's "the code's author is the operator".
MISSING_SNAPSHOT = (
    "this call reached the conol handler inside a proxy without the proxy's record of the request "
    "(proxy_server_request): refused, as the caller's settings could not be told from the operator's"
)


# LiteLLM copies a deployment for a request carrying credentials of its own (api_key, api_base,
# base_url); a conol deployment never takes a caller's (docs/configuration.md#who-sets-what).
OWN_CREDENTIALS = (
    "this request carries credentials of its own (api_key, api_base or base_url): conol's token and "
    "address are set by the proxy operator, not per request; remove them from the request"
)


def caller_sent(litellm_params: Any, body: dict[str, Any]) -> dict[str, Any]:
    """The caller's body, with the credential keys the proxy keeps out of its record of it (LiteLLM
    lists their names in ``proxy_server_request["credential_fields"]``; their values never)."""
    server_request = litellm_params.get("proxy_server_request") if isinstance(litellm_params, dict) else None
    fields = server_request.get("credential_fields") if isinstance(server_request, dict) else None
    names = [name for name in fields or () if isinstance(name, str) and name not in body]
    return {**body, **dict.fromkeys(names)} if names else body


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


def _is_health_check(litellm_params: Any) -> bool:
    """LiteLLM's own health check of the deployment: never a proxied request (those carry the proxy's
    record of the request, whatever their metadata says)."""
    return original_body(litellm_params) is None and is_health_check(litellm_params)


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
install_pre_call_guard()  # in a proxy, the config line naming this handler installs its pre-call hook
