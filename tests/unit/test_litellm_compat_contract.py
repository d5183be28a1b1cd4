"""The LiteLLM internals ``provider/litellm_compat.py`` reads and patches are where it looks.

A LiteLLM release that moves one of them fails here, by name, instead of somewhere downstream as a
refused ``reasoning_effort`` or an unknown price.
"""

from __future__ import annotations

import inspect

import litellm
import litellm.main
import litellm.utils
import pytest

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
