"""Every LiteLLM internal the provider reads or patches, in one place (supported: 1.108 to 1.110).

LiteLLM moves its internals between releases. What we touch, and why:

* ``litellm.main.get_optional_params``: where ``completion()`` looks the params mapping up at call
  time; and its public names ``litellm.utils.`` / ``litellm.get_optional_params`` (``_params_patch``
  wraps all three: the same function).
* ``litellm.utils.get_supported_openai_params`` (and the ``litellm.`` re-export): LiteLLM's own
  ``get_optional_params`` and ``get_model_info`` call it as a global of ``litellm.utils``; a custom
  provider gets the generic OpenAI-like list, without ``reasoning_effort``.
* ``litellm.register_model``: public, but its keyword arguments changed across releases.
* ``litellm.proxy.auth.model_checks.get_provider_models``: how the proxy expands a wildcard
  deployment (``conol/*``) on ``/v1/models`` and ``/model/info``; it knows built-in providers only.
* ``Logging.model_call_details`` (the ``logging_obj`` a handler is passed): the dict every callback
  receives as ``kwargs``, on success and on failure alike; the usage log's fields ride in it.
* ``Logging.pre_call``: what LiteLLM's own providers call before each upstream request. It marks the
  attempt (``current_attempt_api_call_start_time`` from 1.110), and by that mark LiteLLM 1.110's Router
  tells a retry's failure from the request's first, already logged one: only a marked retry's failure
  cools its deployment when the proxy shares one logging object across a request's retries
  (docs/litellm-versions.md#the-routers-cooldowns-on-1110).
* ``litellm.google_genai.main.GenerateContentHelper.setup_generate_content_call`` and
  ``LlmProviders._missing_``: the generateContent routes (``/v1beta/models/…:generateContent``,
  ``:streamGenerateContent``: Gemini CLI) convert the provider's name to the ``LlmProviders`` enum
  before they look for a native Gemini config, and a ``custom_provider_map`` name is not in the enum:
  ``ValueError``, a 500. Inside that one call, a registered custom provider reads as LiteLLM's generic
  ``custom`` provider (no native config), so LiteLLM takes its own generateContent → completion
  adapter, as it does for every built-in provider without one
  (docs/litellm-versions.md#the-generatecontent-shim).

``tests/unit/test_litellm_compat_contract.py`` fails loudly when a LiteLLM release moves one of them.
"""

from __future__ import annotations

import contextvars
import functools
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from types import ModuleType
from typing import Any

import litellm
import litellm.main
import litellm.utils

SUPPORTED = ((1, 108), (1, 111))  # [lowest, first unsupported) (major, minor)
# The LiteLLM lines whose generateContent set-up refuses a custom provider (checked: 1.108.7, 1.110.2).
GENERATE_CONTENT_REFUSES_CUSTOM = ((1, 108), (1, 111))  # [lowest, first fixed) (major, minor)
_WRAPPED = "_litellm_conol_wrapped"
_PROXY_MODEL_CHECKS = "litellm.proxy.auth.model_checks"


def litellm_version() -> tuple[int, ...]:
    """LiteLLM's installed version as numbers (``1.110.2`` → ``(1, 110, 2)``)."""
    parts = metadata.version("litellm").split(".")
    return tuple(int(p) for p in parts[:3] if p.isdigit())


def optional_params_modules() -> tuple[ModuleType, ...]:
    """Where ``get_optional_params`` is looked up: first the module ``completion()`` reads it from at
    call time, then the public names (one function in all three)."""
    return (litellm.main, litellm.utils, litellm)


def is_wrapped(function: Callable[..., Any]) -> bool:
    return bool(getattr(function, _WRAPPED, False))


def mark_wrapped(function: Callable[..., Any]) -> None:
    setattr(function, _WRAPPED, True)


def extend_supported_params(provider: str, extra: tuple[str, ...]) -> None:
    """Make ``get_supported_openai_params`` list ``extra`` for ``provider``. Idempotent.

    Wrapped where LiteLLM's own functions look it up (``litellm.utils``) and on ``litellm`` (the
    public name); every other provider's answer is untouched.
    """
    original = litellm.utils.get_supported_openai_params
    if is_wrapped(original):
        return

    @functools.wraps(original)
    def get_supported_openai_params(*args: Any, **kwargs: Any) -> list[str] | None:
        params: list[str] | None = original(*args, **kwargs)
        if params is None or not _is_provider(provider, args, kwargs):
            return params
        return [*params, *(p for p in extra if p not in params)]

    mark_wrapped(get_supported_openai_params)
    litellm.utils.get_supported_openai_params = get_supported_openai_params
    litellm.get_supported_openai_params = get_supported_openai_params


def _is_provider(provider: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    named = kwargs.get("custom_llm_provider")
    if named is None and len(args) > 1:
        named = args[1]
    if named is not None:
        return bool(named == provider)
    model = kwargs.get("model", args[0] if args else "")
    return isinstance(model, str) and model.startswith(f"{provider}/")


def register_models(entries: Mapping[str, Mapping[str, Any]]) -> None:
    """Add model-map entries (``conol/<id>`` → fields) that LiteLLM does not have yet.

    Existing keys are left alone: a user's own ``register_model`` (or a proxy deployment's
    ``model_info``, registered under its deployment id) keeps precedence over the catalog.
    """
    missing = {key: dict(value) for key, value in entries.items() if key not in litellm.model_cost}
    if not missing:
        return
    # register_model looks each key up among LiteLLM's built-in providers first, and a miss prints
    # "Provider List: …" unless debug info is suppressed: one red line per model at every import.
    shown = litellm.suppress_debug_info
    litellm.suppress_debug_info = True
    try:
        litellm.register_model(missing)
    finally:
        litellm.suppress_debug_info = shown


def list_wildcard_models(provider: str, models: Callable[[], list[str]]) -> None:
    """Let a proxy wildcard deployment (``conol/*``) list ``models()`` (``conol/<id>`` names).

    LiteLLM expands a wildcard from its map of built-in providers only; a custom provider gets
    nothing. Done only when the proxy is loaded (the handler is imported by the proxy's config).
    """
    module = sys.modules.get(_PROXY_MODEL_CHECKS)
    if module is None:
        return
    original = getattr(module, "get_provider_models")  # noqa: B009  (a module mypy does not follow)
    if is_wrapped(original):
        return

    @functools.wraps(original)
    def get_provider_models(*args: Any, **kwargs: Any) -> list[str] | None:
        if kwargs.get("provider", args[0] if args else None) == provider:
            return models()
        result: list[str] | None = original(*args, **kwargs)
        return result

    mark_wrapped(get_provider_models)
    setattr(module, "get_provider_models", get_provider_models)  # noqa: B010


def call_details(logging_obj: Any) -> dict[str, Any] | None:
    """The dict LiteLLM hands every callback of this call as ``kwargs`` (success or failure);
    ``None`` when the call has no logging object of that shape."""
    details = getattr(logging_obj, "model_call_details", None)
    return details if isinstance(details, dict) else None


def announce_attempt(logging_obj: Any, messages: list[Any], api_base: str) -> None:
    """Tell the call's logging object that an attempt goes upstream now, as LiteLLM's own providers
    do: its start time, the input and the (masked) base URL, and a fresh attempt mark for the Router.
    Never the token: ``api_key`` is left empty. Nothing happens without a logging object."""
    pre_call = getattr(logging_obj, "pre_call", None)
    if callable(pre_call) and call_details(logging_obj) is not None:
        pre_call(input=messages, api_key="", additional_args={"api_base": api_base})


_IN_GENERATE_CONTENT_SETUP = contextvars.ContextVar("litellm_conol_generate_content_setup", default=False)


def generate_content_refuses_custom_providers(version: tuple[int, ...] | None = None) -> bool:
    """Whether this LiteLLM's generateContent set-up turns a custom provider's name into a 500."""
    lowest, first_fixed = GENERATE_CONTENT_REFUSES_CUSTOM
    return lowest <= (version or litellm_version())[:2] < first_fixed


def accept_custom_providers_on_generate_content() -> bool:
    """On the LiteLLM lines that need it, let ``custom_provider_map`` providers through the
    generateContent set-up's enum lookup (see the module docstring). Idempotent; elsewhere nothing is
    touched. Returns whether the shim is in place."""
    if not generate_content_refuses_custom_providers():
        return False
    from litellm.google_genai.main import GenerateContentHelper

    _read_custom_providers_as_generic()
    original = GenerateContentHelper.setup_generate_content_call
    if is_wrapped(original):
        return True

    @functools.wraps(original)
    def setup_generate_content_call(*args: Any, **kwargs: Any) -> Any:
        token = _IN_GENERATE_CONTENT_SETUP.set(True)
        try:
            return original(*args, **kwargs)
        finally:
            _IN_GENERATE_CONTENT_SETUP.reset(token)

    mark_wrapped(setup_generate_content_call)
    GenerateContentHelper.setup_generate_content_call = staticmethod(setup_generate_content_call)
    return True


def _read_custom_providers_as_generic() -> None:
    """``LlmProviders(<a registered custom provider>)`` is ``LlmProviders.CUSTOM`` inside the
    generateContent set-up, and a ``ValueError`` everywhere else, as before."""
    providers = litellm.LlmProviders
    original = providers._missing_
    if is_wrapped(original):
        return

    def _missing_(cls: type[Any], value: object) -> Any:
        if _IN_GENERATE_CONTENT_SETUP.get() and value in litellm._custom_providers:
            return cls.CUSTOM
        return original(value)

    mark_wrapped(_missing_)
    providers._missing_ = classmethod(_missing_)
