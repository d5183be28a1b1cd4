"""End to end: the real LiteLLM proxy (subprocess, shipped proxy_config.yaml) → our handler → the fake
conol, driven by the real openai SDK."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest
import yaml
from support.chat import user
from support.estimates import estimated_completion_tokens, estimated_prompt_tokens
from support.paths import ROOT
from support.proxyproc import MASTER_KEY

from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(120)


def test_non_streamed_answer_is_exact(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    expected = BUILTINS["hello"]
    response = client.chat.completions.create(model="conol/claude-haiku-4-5", messages=user("Hi"))
    message = response.choices[0].message
    assert message.content == expected.final_text
    assert message.model_extra["reasoning_content"] == expected.final_reasoning
    assert response.choices[0].finish_reason == "stop"
    fields = message.model_extra["provider_specific_fields"]
    assert fields["session_id"] == fake.last_session.id
    assert fields["usage_estimated"] is True
    assert response.usage.completion_tokens > 0 and response.usage.prompt_tokens > 0
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (
        estimated_prompt_tokens(user("Hi")),
        estimated_completion_tokens(expected),
    )


def test_short_model_name_from_the_config(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    response = client.chat.completions.create(model="deepseek-v4-pro", messages=user("[[fake:done]]"))
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert fake.last_session.model == "deepseek/deepseek-v4-pro"


def test_streamed_answer_is_exact_with_one_id(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    expected = BUILTINS["hello"]
    stream = client.chat.completions.create(model="conol/claude-haiku-4-5", messages=user("Hi"), stream=True)
    content, reasoning, ids, finish = [], [], set(), None
    for chunk in stream:
        ids.add(chunk.id)
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        reasoning.append((delta.model_extra or {}).get("reasoning_content") or "")
        finish = chunk.choices[0].finish_reason or finish
    assert "".join(content) == expected.final_text
    assert "".join(reasoning) == expected.final_reasoning
    assert finish == "stop"
    assert len(ids) == 1


def test_first_chunk_arrives_before_the_upstream_finished(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    # 20 snapshots 50 ms apart: a buffering provider would deliver nothing until the last one.
    text = "[[fake:long chars=2000 snapshots=20 delay=0.05]]"
    stream = client.chat.completions.create(model="conol/claude-haiku-4-5", messages=user(text), stream=True)
    first_content_at = None
    pieces = []
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            first_content_at = first_content_at or time.time()
            pieces.append(chunk.choices[0].delta.content)
    session = fake.last_session
    assert "".join(pieces) == session.expected.final_text
    upstream_last_event = max(event.time for event in session.events)
    assert first_content_at < upstream_last_event
    # and the first content is not stuck behind a long prefix of events either
    assert first_content_at < session.events[len(session.events) // 2].time


@pytest.mark.parametrize("effort, agent_effort", [("high", "high"), ("minimal", "low"), ("medium", "medium")])
def test_reasoning_effort_works_through_the_shipped_config(proxy_fake_and_client, effort, agent_effort):
    fake, client = proxy_fake_and_client
    client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=user("[[fake:done]]"), reasoning_effort=effort
    )
    assert fake.last_session.effort == agent_effort


def test_options_in_extra_body_reach_conol(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=user("[[fake:done]]"), extra_body={"timezone": "Europe/Kyiv"}
    )
    assert fake.last_session.timezone == "Europe/Kyiv"


def test_unknown_model_is_404(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    with pytest.raises(openai.NotFoundError, match="gpt-9000"):
        client.chat.completions.create(model="conol/gpt-9000", messages=user("Hi"))
    assert fake.requests == []


def test_agent_error_is_an_error_not_an_answer(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    # the proxy's Router retries the 500; the same failure again is deterministic: a 400 (effort-and-retries.md)
    with pytest.raises(openai.BadRequestError, match="upstream model crashed"):
        client.chat.completions.create(model="conol/claude-haiku-4-5", messages=user("[[fake:error]]"))


def test_agent_error_mid_stream_reaches_the_client_as_an_error(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    stream = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=user("Mid-stream [[fake:error]]"), stream=True
    )
    received = []
    with pytest.raises(openai.APIError, match="upstream model crashed"):
        for chunk in stream:
            if chunk.choices:
                received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) == "I will try to answer, but"


def test_spend_log_records_estimated_usage(proxy_fake_and_client, spend_log):
    _, client = proxy_fake_and_client
    before = spend_log.read_text().count("\n") if spend_log.exists() else 0
    response = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=user("[[fake:done]] spend")
    )
    streamed = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=user("[[fake:done]] spend streamed"), stream=True
    )
    for _ in streamed:
        pass
    deadline = time.monotonic() + 10
    rows: list[dict] = []
    while time.monotonic() < deadline:
        lines = spend_log.read_text().splitlines() if spend_log.exists() else []
        rows = [json.loads(line) for line in lines[before:]]
        if len(rows) >= 2:
            break
        time.sleep(0.1)
    assert len(rows) == 2, rows
    by_stream = {bool(row["stream"]): row for row in rows}
    assert by_stream[False]["outcome"] == "success"
    assert by_stream[False]["prompt_tokens"] == response.usage.prompt_tokens
    assert by_stream[False]["completion_tokens"] == response.usage.completion_tokens
    assert by_stream[True]["completion_tokens"] > 0 and by_stream[True]["prompt_tokens"] > 0
    assert (by_stream[True]["prompt_tokens"], by_stream[True]["completion_tokens"]) == (
        estimated_prompt_tokens(user("[[fake:done]] spend streamed")),
        estimated_completion_tokens(BUILTINS["done"]),
    )


def test_health_of_the_shipped_config_is_green_and_creates_no_session(
    proxy_fake_and_client, shipped_proxy, proxy_deployments
):
    """/health probes every deployment of the shipped config, the `conol/*` wildcard included (through
    its health_check_model), and the modules' own: each probe is a token check, never a paid session."""
    fake, _ = proxy_fake_and_client
    answer = httpx.get(
        f"{shipped_proxy.base_url}/health", headers={"Authorization": f"Bearer {MASTER_KEY}"}, timeout=60
    ).json()
    assert answer["unhealthy_endpoints"] == []
    shipped = yaml.safe_load((ROOT / "proxy_config.yaml").read_text())["model_list"]
    probed = [
        (d.get("model_info") or {}).get("health_check_model") or d["litellm_params"]["model"] for d in shipped
    ]
    healthy = [e["model"] for e in answer["healthy_endpoints"]]
    added = [d["litellm_params"]["model"] for d in proxy_deployments]
    assert sorted(healthy) == sorted(probed + added)
    assert [r.path for r in fake.requests] == ["/api/auth/get-session"] * len(healthy)
