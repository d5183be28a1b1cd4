"""The proxy's pre-call hook (provider/pre_call.py): which fallbacks entries it refuses before routing,
in every shape LiteLLM reads them, the caller it captures, and where it is installed. Through the real
proxy on each route: tests/e2e/test_boundary_proxy.py."""

from __future__ import annotations

import sys
from types import ModuleType

import litellm
import pytest

from litellm_conol import BadRequest
from litellm_conol.core.config.settings_table import SETTINGS
from litellm_conol.provider import pre_call
from litellm_conol.provider.caller import CAPTURED_KEY, Caller, CapturedCaller
from litellm_conol.provider.deployment import PROXY_SERVER_MODULE
from litellm_conol.provider.pre_call import (
    REFUSED_IN_FALLBACKS,
    ConolPreCallGuard,
    check_fallbacks,
    install_pre_call_guard,
)

NOT_THE_CALLERS = sorted(name for name, s in SETTINGS.items() if s.scope != "request")


def shapes(entry: dict) -> list[dict]:
    """``entry`` as each of the three fields, plain and in a model group, and nested in another entry."""
    bodies = [{field: [entry]} for field in pre_call.FALLBACK_FIELDS]
    bodies.append({"fallbacks": [{"claude-haiku-4-5": ["deepseek-v4-pro", entry]}]})
    bodies.append({"fallbacks": [{"model": "deepseek-v4-pro", "fallbacks": [entry]}]})
    bodies.append({"router_settings_override": {"fallbacks": [entry]}})
    return bodies


@pytest.mark.parametrize("key", REFUSED_IN_FALLBACKS)
def test_an_entry_carrying_the_request_credentials_identity_or_deployment_is_refused(key):
    for body in shapes({"model": "claude-haiku-4-5", key: None}):
        with pytest.raises(BadRequest) as caught:
            check_fallbacks(body)
        refusal = "is set by the proxy operator" if key in SETTINGS else "is not allowed in a fallbacks entry"
        assert caught.value.message.startswith(f"`{key}` {refusal}"), body


@pytest.mark.parametrize("name", NOT_THE_CALLERS)
def test_an_entry_carrying_an_operator_or_narrow_option_is_refused_naming_it(name):
    for where in ("top", "extra_body"):
        entry = (
            {"model": "claude-haiku-4-5", name: 1}
            if where == "top"
            else {"model": "m", "extra_body": {name: 1}}
        )
        for body in shapes(entry):
            with pytest.raises(BadRequest) as caught:
                check_fallbacks(body)
            assert caught.value.message.startswith(f"`{name}` "), body
            assert caught.value.status_code == 400


def test_model_names_and_entries_with_per_request_options_stay_allowed():
    allowed = [
        {"fallbacks": ["deepseek-v4-pro", "gpt-5.6-luna"]},
        {"fallbacks": [{"claude-haiku-4-5": ["deepseek-v4-pro"]}]},
        {"fallbacks": [{"model": "deepseek-v4-pro", "timezone": "Asia/Tokyo", "max_tokens": 50}]},
        {
            "context_window_fallbacks": [
                {"model": "deepseek-v4-pro", "messages": [{"role": "user", "content": "x"}]}
            ]
        },
        {"fallbacks": None, "extra_body": {"fallbacks": "not read by LiteLLM"}},
        {},
    ]
    for body in allowed:
        check_fallbacks(body)


async def test_the_hook_refuses_before_routing_and_captures_the_caller():
    guard = ConolPreCallGuard()
    auth = {"user_api_key_hash": "h", "user_api_key_team_id": "t", "user_api_key_user_id": "u"}
    data = {"model": "m", "user": "alice", "metadata": dict(auth), "fallbacks": ["deepseek-v4-pro"]}
    assert await guard.async_pre_call_hook(None, None, data, "acompletion") is data
    captured = data["metadata"][CAPTURED_KEY]
    assert isinstance(captured, CapturedCaller)
    assert captured.caller == Caller(proxied=True, key_hash="h", team_id="t", user_id="u", end_user="alice")
    on_messages = {"model": "m", "metadata": {"user_id": "bob"}, "litellm_metadata": dict(auth)}
    await guard.async_pre_call_hook(None, None, on_messages, "anthropic_messages")
    assert CAPTURED_KEY in on_messages["litellm_metadata"] and CAPTURED_KEY not in on_messages["metadata"]
    with pytest.raises(BadRequest, match="^`metadata` is not allowed in a fallbacks entry"):
        await guard.async_pre_call_hook(
            None, None, {**data, "fallbacks": [{"model": "x", "metadata": {}}]}, "x"
        )


def test_the_hook_is_what_litellm_calls_a_pre_call_hook():
    """LiteLLM runs ``async_pre_call_hook`` only when the class itself defines it."""
    assert "async_pre_call_hook" in vars(ConolPreCallGuard)


def test_it_is_installed_once_and_only_in_a_proxy_process(monkeypatch):
    monkeypatch.setattr(litellm, "callbacks", [])
    monkeypatch.delitem(sys.modules, PROXY_SERVER_MODULE, raising=False)
    assert install_pre_call_guard() is False and litellm.callbacks == []
    monkeypatch.setitem(sys.modules, PROXY_SERVER_MODULE, ModuleType(PROXY_SERVER_MODULE))
    assert install_pre_call_guard() is True
    assert install_pre_call_guard() is False
    assert litellm.callbacks == [pre_call.pre_call_guard]


def test_register_installs_it_in_a_proxy_process(monkeypatch):
    import litellm_conol

    monkeypatch.setattr(litellm, "callbacks", ["langfuse"])
    monkeypatch.setitem(sys.modules, PROXY_SERVER_MODULE, ModuleType(PROXY_SERVER_MODULE))
    litellm_conol.register()
    assert litellm.callbacks == ["langfuse", pre_call.pre_call_guard]


# --- a percent-encoded image, refused before LiteLLM writes the request out --------------------------

LONG = "data:image/png," + "%00" * 30_000  # 90,000 characters of percent-encoding


class StandInRouter:
    def get_model_list(self, model_name: str) -> list[dict]:
        models = {"claude-haiku-4-5": "conol/claude-haiku-4-5", "gpt-4o": "openai/gpt-4o"}
        return [{"litellm_params": {"model": models[model_name]}}] if model_name in models else []


@pytest.fixture
def proxy_router(monkeypatch):
    module = ModuleType(PROXY_SERVER_MODULE)
    module.llm_router = StandInRouter()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, PROXY_SERVER_MODULE, module)


@pytest.mark.parametrize(
    "body, where",
    [
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": LONG}}]}]},
            "messages[0]",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": LONG}}]}
                ]
            },
            "messages[0]",
        ),
        ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": LONG}]}]}, "input[0]"),
        ({"input": [{"type": "input_image", "image_url": "  " + LONG}]}, "input[0]"),
    ],
)
async def test_a_long_percent_encoded_image_for_a_conol_model_is_refused_before_routing(
    proxy_router, body, where
):
    with pytest.raises(BadRequest) as caught:
        await ConolPreCallGuard().async_pre_call_hook(None, None, {"model": "claude-haiku-4-5", **body}, "x")
    assert caught.value.message == (
        f"{where}.content has an image in a data: URL that is not base64 and 90,000 characters long; such "
        "data is taken up to 65,536 characters: send the image base64-encoded (data:image/png;base64,…)"
    )


async def test_other_models_and_other_images_pass_the_hook(proxy_router):
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": LONG}}]}
    for data in (
        {"model": "gpt-4o", "messages": [image]},  # not ours to refuse
        {"model": "unknown", "messages": [image]},
        {
            "model": "conol/claude-haiku-4-5",
            "messages": [{"role": "user", "content": "data:image/png," + "%00" * 9}],
        },
        {
            "model": "claude-haiku-4-5",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 90_000}}
                    ],
                }
            ],
        },
        {
            "model": "claude-haiku-4-5",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "data:image/png," + "%00" * 100}}],
                }
            ],
        },
    ):
        await ConolPreCallGuard().async_pre_call_hook(None, None, data, "x")


@pytest.mark.parametrize("where", ["metadata", "litellm_metadata"])
async def test_a_request_tagging_its_spend_logs_with_conols_key_is_refused_other_tags_pass(where):
    guard = ConolPreCallGuard()
    tagged = {"model": "m", where: {"spend_logs_metadata": {"team": "a", "conol": {"sessions_created": 0}}}}
    with pytest.raises(BadRequest, match=r"^`spend_logs_metadata\.conol` is written by the conol provider"):
        await guard.async_pre_call_hook(None, None, tagged, "acompletion")
    other = {"model": "m", where: {"spend_logs_metadata": {"team": "a"}}}
    assert await guard.async_pre_call_hook(None, None, other, "acompletion") is other
