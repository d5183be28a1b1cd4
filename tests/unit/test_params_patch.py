"""The one LiteLLM patch (``provider/params_patch.py``): on LiteLLM's call path for ``conol``, and a
pass-through for every other provider (same results, same errors)."""

from __future__ import annotations

import copy
from typing import Any

import litellm
import litellm.main
import pytest
from litellm.types.utils import ModelResponse
from litellm.utils import UnsupportedParamsError

import litellm_conol
from litellm_conol.provider import params_patch as _params_patch
from litellm_conol.provider.handler import ConolLLM

pytestmark = pytest.mark.timeout(30)

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def wrapped() -> Any:
    litellm_conol.register()
    function = litellm.main.get_optional_params
    assert getattr(function, "_litellm_conol_wrapped", False) is True
    return function


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What LiteLLM hands the conol handler's ``completion``, which answers without a session."""
    calls: list[dict[str, Any]] = []

    def completion(
        self: ConolLLM, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ):
        calls.append({"model": model, "messages": messages, **kwargs})
        response = ModelResponse()
        response.choices[0].message.content = "captured"  # type: ignore[union-attr]
        return response

    monkeypatch.setattr(ConolLLM, "completion", completion)
    return calls


# --- on LiteLLM's call path -------------------------------------------------------------------------


def test_register_installs_the_wrap_once(wrapped):
    litellm_conol.register()
    _params_patch.allow_extra_params()
    assert litellm.main.get_optional_params is wrapped  # idempotent: not wrapped twice
    assert getattr(wrapped.__wrapped__, "_litellm_conol_wrapped", False) is False


def test_reasoning_effort_reaches_the_conol_handler(wrapped, captured):
    response = litellm.completion(
        model="conol/claude-haiku-4-5", messages=MESSAGES, reasoning_effort="high", api_key="tok"
    )

    assert response.choices[0].message.content == "captured"
    [call] = captured
    assert call["model"] == "claude-haiku-4-5"
    assert call["optional_params"]["reasoning_effort"] == "high"


def test_thinking_and_both_token_limits_reach_the_conol_handler_as_sent(wrapped, captured):
    litellm.completion(
        model="conol/claude-haiku-4-5",
        messages=MESSAGES,
        thinking={"type": "enabled", "budget_tokens": 2048},
        max_tokens=50,
        max_completion_tokens=30,
        api_key="tok",
    )

    [call] = captured
    params = call["optional_params"]
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert (params["max_tokens"], params["max_completion_tokens"]) == (50, 30)


def test_without_the_wrap_litellm_refuses_reasoning_effort_for_conol(wrapped):
    # why the patch exists: the original (once get_supported_openai_params lists reasoning_effort for
    # conol) accepts it but drops it, mapping a custom provider's params as an OpenAI-like API's
    params = wrapped.__wrapped__(
        model="claude-haiku-4-5", custom_llm_provider="conol", reasoning_effort="high"
    )
    assert "reasoning_effort" not in params


# --- every other provider: untouched ----------------------------------------------------------------

OTHER_PROVIDER_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("gpt-4o", "openai", {"temperature": 0.2, "max_tokens": 10, "stop": ["x"]}),
    ("o3-mini", "openai", {"reasoning_effort": "high", "max_completion_tokens": 64}),
    ("o3-mini", "openai", {"max_tokens": 50, "max_completion_tokens": 30}),
    ("gpt-4o", "openai", {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}),
    ("claude-3-5-sonnet-20241022", "anthropic", {"max_tokens": 100, "top_p": 0.9, "stop": "END"}),
    ("claude-sonnet-4-20250514", "anthropic", {"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    ("claude-sonnet-4-20250514", "anthropic", {"reasoning_effort": "low", "max_tokens": 2000}),
    ("gemini-2.0-flash", "gemini", {"temperature": 0.1, "max_tokens": 5, "n": 1}),
    ("gemini-2.5-pro", "gemini", {"reasoning_effort": "medium"}),
    ("anthropic.claude-3-5-sonnet-20240620-v1:0", "bedrock_converse", {"max_tokens": 10, "temperature": 0.3}),
    ("my-deployment", "azure", {"temperature": 0.5, "max_tokens": 7, "api_version": "2024-06-01"}),
    ("mistral-large-latest", "mistral", {"temperature": 0.4, "max_tokens": 9}),
    # refused by LiteLLM: the same error with and without the wrap
    ("gemini-2.0-flash", "gemini", {"logit_bias": {"1": 2}}),
    ("command-r", "cohere_chat", {"logit_bias": {"1": 2}}),
    # another custom provider (registered by the fixture below) is not let through as conol is
    ("my-model", "otherco", {"reasoning_effort": "high"}),
    ("my-model", "otherco", {"temperature": 0.3}),
    # drop_params and allowed_openai_params behave the same
    ("command-r", "cohere_chat", {"logit_bias": {"1": 2}, "drop_params": True}),
    ("gemini-2.0-flash", "gemini", {"logit_bias": {"1": 2}, "allowed_openai_params": ["logit_bias"]}),
]


@pytest.fixture
def other_custom_provider(monkeypatch: pytest.MonkeyPatch) -> str:
    """A second custom provider, registered as ``custom_llm_setup`` would, undone afterwards."""
    monkeypatch.setattr(litellm, "_custom_providers", [*litellm._custom_providers, "otherco"])
    monkeypatch.setattr(litellm, "provider_list", [*litellm.provider_list, "otherco"])
    return "otherco"


def _outcome(function: Any, kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "result", function(**copy.deepcopy(kwargs))
    except Exception as exc:  # compared by type and message
        return "error", (type(exc), str(exc))


@pytest.mark.parametrize(
    ("model", "provider", "params"),
    OTHER_PROVIDER_CASES,
    ids=[f"{provider}-{model}-{'-'.join(params)}" for model, provider, params in OTHER_PROVIDER_CASES],
)
def test_other_providers_get_identical_results_and_errors(
    wrapped, other_custom_provider, model, provider, params
):
    kwargs = {"model": model, "custom_llm_provider": provider, "messages": MESSAGES, **params}

    with_wrap = _outcome(wrapped, kwargs)
    without_wrap = _outcome(wrapped.__wrapped__, kwargs)

    assert with_wrap == without_wrap


def test_the_cases_cover_both_results_and_refusals(wrapped, other_custom_provider):
    kinds = {
        _outcome(wrapped, {"model": m, "custom_llm_provider": p, "messages": MESSAGES, **params})[0]
        for m, p, params in OTHER_PROVIDER_CASES
    }
    assert kinds == {"result", "error"}
    for provider, params in (
        ("cohere_chat", {"logit_bias": {"1": 2}}),
        ("otherco", {"reasoning_effort": "high"}),
    ):
        kind, (error_type, message) = _outcome(
            wrapped, {"model": "m", "custom_llm_provider": provider, **params}
        )
        assert (kind, error_type) == ("error", UnsupportedParamsError)
        assert f"{provider} does not support parameters: ['{next(iter(params))}']" in message
