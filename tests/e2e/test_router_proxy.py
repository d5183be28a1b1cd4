"""Our typed errors drive the Router inside the real proxy: retries on the healthy deployment,
cooldowns, fallbacks (the same setups in process: tests/integration/test_router.py)."""

from __future__ import annotations

import time

import pytest
from support.faults import chat_body, creates, post_chat, proxy_config, stream_chat
from support.proxyproc import running_proxy
from support.timing import bound

import litellm_conol
from litellm_conol.fake import BUILTINS, FakeConol

litellm_conol.register()


pytestmark = pytest.mark.timeout(90)


ANSWER = BUILTINS["done"].final_text


# --- the same through the proxy config ------------------------------------------------------------


@pytest.fixture(scope="module")
def router_proxy(tmp_path_factory):
    with FakeConol() as healthy, FakeConol() as broken:

        def entry(fake: FakeConol, name: str, **params) -> dict:
            return {
                "model_name": name,
                "litellm_params": {
                    "model": "conol/claude-haiku-4-5",
                    "api_base": fake.base_url,
                    "api_key": fake.token,
                    **params,
                },
            }

        model_list = [
            entry(broken, "conol-pair"),
            entry(healthy, "conol-pair"),
            # alone in its group: no retries on it (they would only back off), straight to the fallback
            entry(broken, "conol-primary", num_retries=0),
            entry(healthy, "conol-backup"),
        ]
        router_settings = {
            "num_retries": 6,  # random picks + async cooldowns: see the SDK test above
            "allowed_fails": 1,
            "cooldown_time": 60,
            "retry_after": 0,
            "fallbacks": [{"conol-primary": ["conol-backup"]}],
        }
        config = proxy_config(model_list, router_settings=router_settings)
        with running_proxy(config, tmp_path_factory.mktemp("router-proxy")) as proxy:
            yield healthy, broken, proxy


@pytest.fixture
def through_proxy(router_proxy):
    healthy, broken, proxy = router_proxy
    healthy.reset()
    broken.reset()
    broken.configure(create_status=500)
    return healthy, broken, proxy


def test_proxy_retries_on_the_healthy_deployment_and_cools_the_failing_one(through_proxy):
    _, broken, proxy = through_proxy
    # The proxy makes one LiteLLM Logging object per request and shares it across that request's
    # retries; failure callbacks run once per Logging object, so the Router's allowed_fails counts
    # failed *requests*, not failed attempts. Go on (picks are random) until two requests have
    # failed on the broken deployment: more than allowed_fails (1).
    failed_requests = 0
    for i in range(40):
        before = creates(broken)
        send = stream_chat if i % 2 else post_chat
        outcome = send(proxy.base_url, chat_body("conol-pair", "[[fake:done]]"))
        assert outcome.status == 200, outcome.text[:400]
        content = outcome.content if i % 2 else outcome.body["choices"][0]["message"]["content"]
        assert content == ANSWER  # retried on the healthy deployment
        failed_requests += creates(broken) > before
        if failed_requests >= 2:
            break
    assert failed_requests >= 2
    # The cooldown is written by an async failure callback that may run just after the response (late
    # on a loaded machine), and the proxy has no endpoint to watch for it: wait for the first request
    # that no longer touches the broken deployment, then six more must not touch it either.
    deadline = time.monotonic() + bound(30)
    while True:
        tried = creates(broken)
        assert post_chat(proxy.base_url, chat_body("conol-pair", "[[fake:done]]")).status == 200
        if creates(broken) == tried or time.monotonic() > deadline:
            break
    for i in range(6):
        send = stream_chat if i % 2 else post_chat
        outcome = send(proxy.base_url, chat_body("conol-pair", "[[fake:done]]"))
        assert outcome.status == 200
    assert creates(broken) == tried  # cooled down: no more traffic to it


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
def test_proxy_fallback_to_a_second_model(through_proxy, stream):
    healthy, broken, proxy = through_proxy
    outcome = (stream_chat if stream else post_chat)(
        proxy.base_url, chat_body("conol-primary", "[[fake:done]]")
    )
    assert outcome.status == 200, outcome.text[:400]
    content = outcome.content if stream else outcome.body["choices"][0]["message"]["content"]
    assert content == ANSWER
    assert creates(broken) == 1  # the primary was tried once (num_retries 0 on it), then the fallback
    assert creates(healthy) == 1
