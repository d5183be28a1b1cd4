"""The session token never leaks through the real proxy: not into its responses, its logs or its
spend-log rows (``support.spend_logger.spend_rows``)."""

from __future__ import annotations

import json

import httpx
import pytest
from support.echoes import SECRET
from support.faults import AUTH, chat_body, deployment, post_chat, proxy_config, stream_chat
from support.proxyproc import running_proxy

import litellm_conol

litellm_conol.register()


pytestmark = pytest.mark.timeout(120)


def leaks(text: str) -> bool:
    return SECRET in text


def _around(text: str) -> str:
    at = text.find(SECRET)
    return text[max(0, at - 300) : at + 100]


# --- the proxy: error responses, its own logs (detailed debug), spend-log rows ------------------------


@pytest.fixture(scope="module")
def secret_proxy(secret_server, tmp_path_factory):
    directory = tmp_path_factory.mktemp("secret-proxy")
    spend_rows = directory / "spend_rows.jsonl"
    model_list = [
        deployment("conol-env"),  # the token from CONOL_SESSION_TOKEN, as in the shipped config
        deployment("conol-key", api_key=SECRET, api_base=secret_server.base_url),  # the token in the config
        deployment("conol/*", model="conol/*"),
    ]
    # no retries: a failing request would only back off and repeat the same log lines
    config = proxy_config(
        model_list, router_settings={"num_retries": 0}, callbacks=["support.spend_logger.spend_rows"]
    )
    env = {
        "CONOL_API_BASE": secret_server.base_url,
        "CONOL_SESSION_TOKEN": SECRET,
        "SPEND_ROWS_FILE": str(spend_rows),
    }
    with running_proxy(config, directory, env=env, args=["--detailed_debug"]) as proxy:
        yield proxy, spend_rows


def test_no_token_in_proxy_responses_logs_or_spend_logs(secret_fake, secret_proxy):
    proxy, spend_rows = secret_proxy
    shown: list[str] = []
    llm_calls = 0
    requests = [
        ("conol-env", "Hi [[fake:done]]", {}, post_chat),
        ("conol-env", "[[fake:echo_500]]", {}, stream_chat),
        ("conol-env", "[[fake:echo_error_event]]", {}, post_chat),
        ("conol-key", "Hi [[fake:done]]", {}, stream_chat),
        ("conol-key", "[[fake:echo_502_html]]", {}, post_chat),
        ("conol-key", "[[fake:echo_created]]", {}, post_chat),
        ("conol-key", "[[fake:echo_error_event]]", {}, stream_chat),
        ("conol-key", "Hi", {"n": 2}, post_chat),
    ]
    for model, text, extra, send in requests:
        outcome = send(proxy.base_url, chat_body(model, text, **extra))
        shown += [outcome.text, json.dumps(outcome.headers)]
        llm_calls += 1
    outcome = post_chat(proxy.base_url, chat_body("conol/gpt-9000", "Hi"))  # unknown model: 404
    assert outcome.status == 404
    shown.append(outcome.text)
    secret_fake.configure(revoke_token=True)
    outcome = post_chat(proxy.base_url, chat_body("conol-key", "Hi"))
    assert outcome.status == 401
    shown += [outcome.text, json.dumps(outcome.headers)]
    secret_fake.configure(revoke_token=False)
    for path in ("/v1/models", "/v1/model/info", "/health/readiness"):
        response = httpx.get(proxy.base_url + path, headers=AUTH, timeout=30)
        shown.append(response.text)

    for text in shown:
        assert not leaks(text), _around(text)
    assert any("session_token=***" in text for text in shown)  # the echo was passed on, masked
    log = proxy.log()
    assert "DEBUG" in log and len(log) > 10_000  # detailed debug logging really was on
    assert not leaks(log), _around(log)
    rows = spend_rows.read_text().splitlines()
    assert len(rows) >= llm_calls // 2
    assert any('"spend_log":' in row for row in rows), rows[:1]
    for row in rows:
        assert not leaks(row), _around(row)
