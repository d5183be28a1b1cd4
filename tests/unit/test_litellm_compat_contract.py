"""The LiteLLM internals ``provider/litellm_compat.py`` reads and patches are where it looks.

A LiteLLM release that moves one of them fails here, by name, instead of somewhere downstream as a
refused ``reasoning_effort`` or an unknown price.
"""

from __future__ import annotations

import datetime
import inspect
from enum import Enum
from typing import Any

import litellm
import litellm.main
import litellm.utils
import pytest
from litellm.google_genai.main import GenerateContentHelper
from litellm.litellm_core_utils.litellm_logging import Logging

import litellm_conol
from litellm_conol.provider import litellm_compat as compat

pytestmark = pytest.mark.timeout(60)


def test_the_installed_litellm_is_in_the_supported_range():
    lowest, first_unsupported = compat.SUPPORTED
    assert lowest <= compat.litellm_version()[:2] < first_unsupported


def test_completion_reads_get_optional_params_from_litellm_main_at_call_time():
    source = inspect.getsource(litellm.main.completion)
    assert "get_optional_params(" in source
    # a name looked up in litellm.main's globals, not a local import that a wrap would miss
    assert "import get_optional_params" not in source


def test_get_optional_params_checks_against_the_utils_global_get_supported_openai_params():
    source = inspect.getsource(litellm.utils.get_optional_params)
    assert "get_supported_openai_params(" in source
    assert "get_supported_openai_params(model=model, custom_llm_provider=custom_llm_provider" in source


def test_the_wraps_are_in_place_on_every_name():
    litellm_conol.register()
    for module in compat.optional_params_modules():
        assert compat.is_wrapped(module.get_optional_params), module.__name__
    assert compat.is_wrapped(litellm.utils.get_supported_openai_params)
    assert compat.is_wrapped(litellm.get_supported_openai_params)


def test_register_model_takes_a_dict_of_model_entries():
    parameters = inspect.signature(litellm.register_model).parameters
    assert next(iter(parameters)) == "model_cost"


def test_the_proxy_expands_a_wildcard_through_get_provider_models():
    model_checks = pytest.importorskip("litellm.proxy.auth.model_checks")
    assert "get_provider_models(provider=provider" in inspect.getsource(model_checks)
    assert inspect.signature(model_checks.get_provider_models).parameters.keys() >= {
        "provider",
        "litellm_params",
    }
    # and through it, our wrap lists the catalog for a conol/* deployment
    compat.list_wildcard_models("conol", lambda: ["conol/a", "conol/b"])
    try:
        assert model_checks.get_known_models_from_wildcard("conol/*") == ["conol/a", "conol/b"]
    finally:
        model_checks.get_provider_models = model_checks.get_provider_models.__wrapped__


def test_a_custom_provider_gets_the_generic_openai_like_params():
    """Why the supported-params wrap exists: LiteLLM's list for a custom provider lacks reasoning_effort."""
    original = litellm.utils.get_supported_openai_params.__wrapped__
    params = original(model="claude-haiku-4-5", custom_llm_provider="conol")
    assert "reasoning_effort" not in params and "tools" in params


def test_other_providers_supported_params_are_untouched():
    litellm_conol.register()
    for model, provider in [
        ("gpt-4o", "openai"),
        ("claude-sonnet-4-20250514", "anthropic"),
        ("command-r", "cohere"),
    ]:
        wrapped = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
        assert wrapped == litellm.utils.get_supported_openai_params.__wrapped__(
            model=model, custom_llm_provider=provider
        )


# --- the generateContent shim (docs/litellm-versions.md#the-generatecontent-shim) -------------------

CONTENTS = [{"role": "user", "parts": [{"text": "Hi"}]}]


def _new_logging_obj(model: str, call_type: str, call_id: str) -> Logging:
    """A call's logging object, as LiteLLM's entry points make it before they reach a provider."""
    return Logging(
        model=model,
        messages=[],
        stream=False,
        call_type=call_type,
        start_time=datetime.datetime.now(),
        litellm_call_id=call_id,
        function_id=f"f-{call_id}",
    )


def _setup(setup: Any, model: str) -> Any:
    """LiteLLM's generateContent set-up for ``model``, as its entry points call it."""
    logging_obj = _new_logging_obj(model, "agenerate_content", "call-1")
    return setup(model=model, contents=CONTENTS, litellm_logging_obj=logging_obj)


def test_the_generate_content_setup_looks_the_provider_up_in_the_enum_where_the_shim_is_on():
    """The version guard and LiteLLM's code agree: where the set-up converts the provider's name to
    LlmProviders before looking for a native config, the shim is installed; elsewhere it is not."""
    setup = GenerateContentHelper.setup_generate_content_call
    source = inspect.getsource(getattr(setup, "__wrapped__", setup))
    assert ("provider=litellm.LlmProviders(custom_llm_provider)" in source) is (
        compat.generate_content_refuses_custom_providers()
    )
    litellm_conol.register()
    assert compat.is_wrapped(GenerateContentHelper.setup_generate_content_call)
    assert compat.is_wrapped(litellm.LlmProviders._missing_)


def test_without_the_shim_a_custom_provider_fails_the_generate_content_setup():
    """What the shim is for, on this LiteLLM: the bare set-up refuses ``conol/…`` (the proxy's 500)."""
    litellm_conol.register()
    original = GenerateContentHelper.setup_generate_content_call.__wrapped__
    with pytest.raises(ValueError, match="'conol' is not a valid LlmProviders"):
        _setup(original, "conol/claude-haiku-4-5")


def test_with_the_shim_a_custom_provider_takes_litellms_completion_adapter():
    litellm_conol.register()
    result = _setup(GenerateContentHelper.setup_generate_content_call, "conol/claude-haiku-4-5")
    assert result.generate_content_provider_config is None  # LiteLLM's generateContent → completion adapter
    assert (result.model, result.custom_llm_provider) == ("claude-haiku-4-5", "conol")
    assert result.litellm_params.custom_llm_provider == "conol"


@pytest.mark.parametrize(
    ("model", "native"),
    [("gemini/gemini-2.5-flash", True), ("openai/gpt-4o", False), ("anthropic/claude", False)],
)
def test_the_shim_leaves_built_in_providers_as_litellm_sets_them_up(model: str, native: bool):
    litellm_conol.register()
    wrapped = _setup(GenerateContentHelper.setup_generate_content_call, model)
    bare = _setup(GenerateContentHelper.setup_generate_content_call.__wrapped__, model)
    assert type(wrapped.generate_content_provider_config) is type(bare.generate_content_provider_config)
    assert (wrapped.generate_content_provider_config is not None) is native
    assert (wrapped.model, wrapped.custom_llm_provider) == (bare.model, bare.custom_llm_provider)


def test_outside_the_setup_a_custom_provider_is_still_not_an_llm_provider():
    litellm_conol.register()
    with pytest.raises(ValueError, match="'conol' is not a valid LlmProviders"):
        litellm.LlmProviders("conol")
    assert litellm.LlmProviders("openai") is litellm.LlmProviders.OPENAI


def test_on_a_litellm_that_accepts_custom_providers_the_shim_touches_nothing(monkeypatch: pytest.MonkeyPatch):
    """Outside the guarded lines (LiteLLM fixed the lookup) nothing is wrapped, and the guard holds both
    ends of the range we checked."""
    assert compat.generate_content_refuses_custom_providers((1, 108, 7))
    assert compat.generate_content_refuses_custom_providers((1, 110, 2))
    assert not compat.generate_content_refuses_custom_providers((1, 111, 0))
    assert not compat.generate_content_refuses_custom_providers((1, 107, 9))
    litellm_conol.register()
    bare_setup = GenerateContentHelper.setup_generate_content_call.__wrapped__
    monkeypatch.setattr(GenerateContentHelper, "setup_generate_content_call", staticmethod(bare_setup))
    monkeypatch.setattr(litellm.LlmProviders, "_missing_", classmethod(Enum._missing_.__func__))
    monkeypatch.setattr(compat, "litellm_version", lambda: (1, 111, 0))
    assert compat.accept_custom_providers_on_generate_content() is False
    assert not compat.is_wrapped(GenerateContentHelper.setup_generate_content_call)
    assert not compat.is_wrapped(litellm.LlmProviders._missing_)


def test_registering_the_catalog_prints_nothing(capsys, monkeypatch):
    """LiteLLM's ``register_model`` prints its provider list for each key it cannot map to a built-in
    provider; registering the catalog must not write that at every import (and debug output stays
    as the user set it)."""
    entries = {f"conol/quiet-model-{n}": {"litellm_provider": "conol", "mode": "chat"} for n in range(3)}
    monkeypatch.setattr(litellm, "suppress_debug_info", False)
    for key in entries:
        monkeypatch.delitem(litellm.model_cost, key, raising=False)
    compat.register_models(entries)
    assert capsys.readouterr().out == ""
    assert litellm.suppress_debug_info is False
    assert set(entries) <= set(litellm.model_cost)
    for key in entries:
        litellm.model_cost.pop(key)


# --- the attempt mark (docs/litellm-versions.md#the-routers-cooldowns-on-1110) ---------------------

TOKEN = "secret-session-token"


def _logging_obj() -> Logging:
    """A call's logging object, as ``completion()`` hands it to a provider."""
    logging_obj = _new_logging_obj("conol/claude-haiku-4-5", "acompletion", "call-2")
    logging_obj.update_environment_variables(
        litellm_params={"litellm_call_id": "call-2", "api_key": TOKEN}, optional_params={}, model="x"
    )
    return logging_obj


def test_pre_call_is_what_litellms_providers_call_with_the_input_and_the_api_base():
    parameters = inspect.signature(Logging.pre_call).parameters
    assert list(parameters)[:5] == ["self", "input", "api_key", "model", "additional_args"]


def test_announcing_an_attempt_stamps_it_without_the_token():
    logging_obj = _logging_obj()
    messages = [{"role": "user", "content": "hi"}]
    compat.announce_attempt(logging_obj, messages, "https://conol.example")
    details = logging_obj.model_call_details
    assert isinstance(details["api_call_start_time"], datetime.datetime)
    assert (details["input"], details["api_key"]) == (messages, "")
    assert details["litellm_params"]["api_base"] == "https://conol.example"
    assert TOKEN not in repr(details["additional_args"])
    compat.announce_attempt(None, messages, "https://conol.example")  # no logging object: nothing


@pytest.mark.skipif(compat.litellm_version()[:2] < (1, 110), reason="LiteLLM 1.110's attempt mark")
def test_each_attempt_gets_a_mark_of_its_own_that_the_router_reads_to_cool_a_retrys_deployment():
    from litellm.router_utils import fallback_event_handlers

    logging_obj = _logging_obj()
    compat.announce_attempt(logging_obj, [], "https://conol.example")
    first = logging_obj.model_call_details["current_attempt_api_call_start_time"]
    logging_obj.model_call_details |= {
        "has_logged_async_failure": True,
        "async_failure_logged_attempt": first,
    }
    blocked = fallback_event_handlers._failure_callbacks_blocked_logging_object
    # the first attempt's failure is the one logged: nothing more to record for it
    assert blocked({"litellm_logging_obj": logging_obj}) is None
    compat.announce_attempt(logging_obj, [], "https://conol.example")
    assert logging_obj.model_call_details["current_attempt_api_call_start_time"] != first
    # a retry's failure the shared logging object skips: the Router records it (its cooldown)
    assert blocked({"litellm_logging_obj": logging_obj}) is logging_obj
