"""The handler's own checks inside a proxy (provider/handler.py, provider/deployment.py), behind the
pre-call hook: a call without the proxy's record of the request is refused, never read as the SDK's;
the operator's deployment is found by ``model_info`` (the original's, for LiteLLM's client-side
credential copy) and nothing of the merge is taken when it is not found; the token and address are
the deployment's; a body's credentials are refused, named. A stand-in Router plays the proxy's."""

from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import litellm
import pytest

from litellm_conol import BadRequest
from litellm_conol.provider.deployment import PROXY_SERVER_MODULE
from litellm_conol.provider.handler import MISSING_SNAPSHOT, OWN_CREDENTIALS, _request

DEPLOYMENTS = {
    "dep-1": {
        "model": "conol/claude-haiku-4-5",
        "api_key": "operator-token",
        "api_base": "https://conol.operator.test",
        "image_fetch": "public",
        "max_images": 3,
    },
}


class StandInRouter:
    def get_deployment(self, model_id: str) -> Any:
        params = DEPLOYMENTS.get(model_id)
        return None if params is None else SimpleNamespace(litellm_params=dict(params))


@pytest.fixture
def proxy(monkeypatch):
    """This process as a proxy serving DEPLOYMENTS (its pre-call hook installed in a fresh list)."""
    module = ModuleType(PROXY_SERVER_MODULE)
    module.llm_router = StandInRouter()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, PROXY_SERVER_MODULE, module)
    monkeypatch.setattr(litellm, "callbacks", [])
    monkeypatch.setenv("CONOL_SESSION_TOKEN", "environment-token")


def call(
    *,
    body: dict[str, Any] | None,
    model_info: dict[str, Any] | None = None,
    optional_params: dict[str, Any] | None = None,
    credential_fields: tuple[str, ...] = (),
    api_key: str | None = "merged-token",
    metadata: dict[str, Any] | None = None,
) -> Any:
    litellm_params: dict[str, Any] = {
        "model_info": model_info or {"id": "dep-1"},
        "metadata": metadata or {"user_api_key_hash": "k"},
    }
    if body is not None:
        litellm_params["proxy_server_request"] = {
            "url": "http://proxy/v1/chat/completions",
            "body": body,
            "credential_fields": credential_fields,
        }
    kwargs = {"litellm_params": litellm_params, "optional_params": optional_params or {}, "api_key": api_key}
    return _request(
        "conol/claude-haiku-4-5", [{"role": "user", "content": "hi"}], "http://merged.test", kwargs
    )


def test_inside_a_proxy_a_call_without_the_request_record_is_refused(proxy):
    """A fallbacks entry's ``proxy_server_request: null`` made it read as the SDK: every option taken."""
    with pytest.raises(BadRequest) as caught:
        call(body=None, optional_params={"redis_url": "redis://evil:1"})
    assert (caught.value.message, caught.value.refused_by) == (MISSING_SNAPSHOT, "settings_boundary")


def test_a_health_check_carries_no_request_record_and_is_not_refused(proxy):
    health = {"user_api_key_team_id": "litellm-internal-health-check"}
    request = call(body=None, metadata=health)
    assert request.endpoint.token == "merged-token"  # what LiteLLM passed for its own probe


def test_a_proxied_call_runs_on_the_deployments_token_and_address(proxy):
    """Not the merge's: a fallbacks entry's ``api_key: null`` made it the environment's."""
    for api_key in ("merged-token", None, ""):
        request = call(body={"model": "m"}, api_key=api_key)
        assert (request.endpoint.token, request.endpoint.base_url) == (
            "operator-token",
            "https://conol.operator.test",
        )


def test_the_original_deployment_is_found_for_a_client_side_credential_copy_and_refused(proxy):
    copy = {"id": "copy-9", "original_model_id": "dep-1"}
    with pytest.raises(BadRequest) as caught:
        call(body={"model": "m"}, model_info=copy, optional_params={"max_images": 2})
    assert caught.value.message == OWN_CREDENTIALS


def test_a_body_api_key_the_proxy_keeps_out_of_its_record_is_refused_naming_it(proxy):
    with pytest.raises(BadRequest) as caught:
        call(body={"model": "m"}, credential_fields=("api_key",))
    assert caught.value.message.startswith("`api_key` is set by the proxy operator, not per request")


def test_without_the_deployment_nothing_in_the_merge_is_taken(proxy):
    merged = {
        "image_fetch": "public",
        "max_images": 1,
        "agent_model": "x-ai/grok-4.3",
        "timezone": "Asia/Tokyo",
    }
    request = call(body={"model": "m"}, model_info={"id": "gone"}, optional_params=merged)
    assert (request.image_limits.fetch, request.image_limits.max_images) == ("off", 20)
    assert request.body.agent_model != "x-ai/grok-4.3" and request.body.timezone == "Asia/Tokyo"
    assert request.endpoint.token == "environment-token"


def test_the_deployments_values_win_and_a_narrow_one_is_checked_on_what_the_call_uses(proxy):
    request = call(
        body={"model": "m", "max_images": 2}, optional_params={"max_images": 2, "image_fetch": "off"}
    )
    assert (request.image_limits.fetch, request.image_limits.max_images) == ("public", 2)
    with pytest.raises(BadRequest, match="this deployment allows 3, the request asked for 100"):
        call(body={"model": "m", "max_images": 1}, optional_params={"max_images": 100})


def test_the_pre_call_hook_is_put_back_when_something_replaced_the_callbacks(proxy, caplog):
    from litellm_conol.provider.pre_call import pre_call_guard

    call(body={"model": "m"})
    assert litellm.callbacks == [pre_call_guard]
    assert "litellm-conol's pre-call guard was not in litellm.callbacks: installed it now" in caplog.text
