"""The team deployment, end to end: the shipped deploy/team_config.yaml, unchanged, in the real LiteLLM
proxy with two workers, against the fake conol.

One proxy for the module (as a team would run it: `--num_workers 2`): friendly names, the fallback
from one conol model to another, health checks that create no conol session, the usage log callback
(user, tokens, cost from the config's prices, session id), and 200 concurrent streams over both workers.
(The health-check probe in process and fork safety: tests/integration/test_health_check.py.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from support.chat import user
from support.paths import ROOT
from support.proxyproc import MASTER_KEY, ProxyProcess
from support.usage_log import usage_rows

from litellm_conol.fake import BUILTINS, FakeConol

# The first test also pays for the proxy's start: three processes importing LiteLLM on 2 cores.
pytestmark = pytest.mark.timeout(180)


TEAM_CONFIG = ROOT / "deploy" / "team_config.yaml"


CONFIG = yaml.safe_load(TEAM_CONFIG.read_text())


DEPLOYMENTS = {d["model_name"]: d for d in CONFIG["model_list"]}


WORKERS = 2


# uvicorn's supervisor kills a worker that does not answer its ping within 5 s (its default), and a
# worker cannot answer while it imports LiteLLM, which takes longer than that on a loaded machine:
# without this, the second worker was killed and restarted in a loop and one worker served everything.
WORKER_ARGS = ["--num_workers", str(WORKERS), "--timeout_worker_healthcheck", "60"]


def agent_model(name: str) -> str:
    """The agentModel conol receives for a friendly name of the team config."""
    from litellm_conol.core.models.catalog import default_catalog

    return default_catalog().resolve(DEPLOYMENTS[name]["litellm_params"]["model"]).agent_model


@pytest.fixture(scope="module")
def team_fake(proxy_fake):
    """The session's fake conol (conftest), reset by every test that uses it."""
    return proxy_fake


@pytest.fixture(scope="module")
def usage_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("usage") / "usage.jsonl"


@pytest.fixture(scope="module")
def team_proxy(team_fake, usage_log, tmp_path_factory):
    multiproc = tmp_path_factory.mktemp("prometheus")  # the config's prometheus callback, two workers
    env = {
        "CONOL_API_BASE": team_fake.base_url,
        "CONOL_SESSION_TOKEN": team_fake.token,  # chat's other two accounts fall back to it
        "CONOL_USAGE_LOG": str(usage_log),
        "PROMETHEUS_MULTIPROC_DIR": str(multiproc),
    }
    log = tmp_path_factory.mktemp("team") / "proxy.log"
    process = ProxyProcess(config=TEAM_CONFIG, env=env, log_path=log, args=WORKER_ARGS)
    try:
        process.wait_ready()
        process.wait_for_workers(WORKERS)
        yield process
    finally:
        process.stop()


@pytest.fixture
def team(team_fake, team_proxy):
    team_fake.reset()
    with openai.OpenAI(base_url=team_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        yield team_fake, client
    team_fake.reset()  # the session's fake: no fault (dead token, failing creates) outlives the test


def creates(fake: FakeConol) -> list[tuple[str, int | None]]:
    """(agentModel, HTTP status) of every create-session request the fake received, in order."""
    return [(r.body["agentModel"], r.status) for r in fake.requests if r.path == "/api/sessions"]


def test_a_friendly_name_gives_the_exact_answer(team):
    fake, client = team
    response = client.chat.completions.create(model="chat", messages=user("[[fake:done]] hello team"))
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert creates(fake) == [(agent_model("chat"), 201)]
    fields = response.choices[0].message.model_extra["provider_specific_fields"]
    assert fields["session_id"] == fake.last_session.id


def test_reasoning_falls_back_to_chat_when_its_model_keeps_failing(team):
    fake, client = team
    retries = CONFIG["router_settings"]["num_retries"]
    assert CONFIG["router_settings"]["fallbacks"][0] == {"reasoning": ["chat"]}
    # conol is unavailable for exactly the first try and the retries of `reasoning`.
    fake.configure(create_status=503, create_fail_times=1 + retries)
    raw = client.chat.completions.with_raw_response.create(
        model="reasoning", messages=user("[[fake:done]] fall back")
    )
    response = raw.parse()
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert creates(fake) == [(agent_model("reasoning"), 503)] * (1 + retries) + [(agent_model("chat"), 201)]
    assert raw.headers["x-litellm-attempted-fallbacks"] == "1"
    assert raw.headers["x-litellm-model-group"] == "chat"


def health(shipped_proxy: ProxyProcess) -> dict[str, Any]:
    response = httpx.get(
        f"{shipped_proxy.base_url}/health", headers={"Authorization": f"Bearer {MASTER_KEY}"}, timeout=60
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_ten_health_checks_create_no_conol_session(team, team_proxy):
    fake, _ = team
    results = [health(team_proxy) for _ in range(10)]
    expected = sorted(d["litellm_params"]["model"] for d in CONFIG["model_list"])
    for result in results:
        assert sorted(e["model"] for e in result["healthy_endpoints"]) == expected
        assert result["unhealthy_endpoints"] == []
    assert creates(fake) == []
    paths = [r.path for r in fake.requests]
    assert paths == ["/api/auth/get-session"] * (10 * len(expected))


def test_a_request_claiming_the_health_check_account_still_gets_a_real_answer(team):
    fake, client = team
    claim = {
        "user_api_key_team_id": "litellm-internal-health-check",
        "tags": ["litellm-internal-health-check"],
    }
    response = client.chat.completions.create(
        model="chat",
        messages=user("[[fake:done]] not a probe"),
        extra_body={"metadata": claim, "litellm_metadata": claim},
    )
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert creates(fake) == [(agent_model("chat"), 201)]


def test_a_dead_token_makes_every_deployment_unhealthy(team, team_proxy):
    fake, _ = team
    fake.configure(revoke_token=True)
    result = health(team_proxy)
    assert result["healthy_endpoints"] == []
    assert result["unhealthy_count"] == len(CONFIG["model_list"])
    for endpoint in result["unhealthy_endpoints"]:
        assert "invalid or expired" in endpoint["error"]
        assert fake.token not in json.dumps(endpoint)
    assert creates(fake) == []


def cost(name: str, prompt_tokens: int, completion_tokens: int) -> float:
    info = DEPLOYMENTS[name]["model_info"]
    return prompt_tokens * info["input_cost_per_token"] + completion_tokens * info["output_cost_per_token"]


def test_the_usage_log_has_user_tokens_cost_and_session(team, usage_log):
    fake, client = team
    before = len(usage_rows(usage_log, 0))
    response = client.chat.completions.create(
        model="chat", messages=user("[[fake:done]] spend"), user="alice"
    )
    session = fake.last_session.id
    stream = client.chat.completions.create(
        model="reasoning",
        messages=user("[[fake:done]] spend streamed"),
        user="bob",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    streamed_usage = chunks[-1].usage
    streamed_session = fake.last_session.id
    rows = usage_rows(usage_log, before + 2)[before:]
    assert len(rows) == 2, rows
    by_user = {row["user"]: row for row in rows}
    alice, bob = by_user["alice"], by_user["bob"]

    usage = response.usage
    assert (alice["model_group"], alice["model"], alice["stream"]) == (
        "chat",
        "conol/claude-haiku-4-5",
        False,
    )
    assert (alice["prompt_tokens"], alice["completion_tokens"]) == (
        usage.prompt_tokens,
        usage.completion_tokens,
    )
    assert alice["cost"] == cost("chat", usage.prompt_tokens, usage.completion_tokens)  # same float ops
    assert alice["cost"] > 0
    assert (alice["session_id"], alice["usage_estimated"], alice["outcome"]) == (session, True, "success")
    # what the request spent and who asked (the master key's hash is LiteLLM's own name for it)
    assert {k: alice[k] for k in ("sessions_created", "followup_turns", "session_reused", "refused_by")} == {
        "sessions_created": 1,
        "followup_turns": 0,
        "session_reused": False,
        "refused_by": None,
    }
    assert alice["session_reuse_reason"] == "no earlier turn to continue"
    assert (alice["key_hash"], alice["team_id"]) == ("litellm_proxy_master_key", None)

    assert (bob["model_group"], bob["model"], bob["stream"]) == ("reasoning", "conol/deepseek-v4-pro", True)
    assert (bob["prompt_tokens"], bob["completion_tokens"]) == (
        streamed_usage.prompt_tokens,
        streamed_usage.completion_tokens,
    )
    assert bob["cost"] == cost("reasoning", streamed_usage.prompt_tokens, streamed_usage.completion_tokens)
    assert fake.token not in usage_log.read_text()
    assert (bob["session_id"], bob["effective_model"], bob["outcome"]) == (
        streamed_session,
        agent_model("reasoning"),
        "success",
    )
    assert (bob["sessions_created"], bob["followup_turns"], bob["refused_by"]) == (1, 0, None)


async def _one_stream(proxy_client: openai.AsyncOpenAI, text: str) -> str:
    stream = await proxy_client.chat.completions.create(model="fast", messages=user(text), stream=True)
    parts = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
    return "".join(parts)


def test_200_concurrent_streams_over_two_workers_are_exact(team, team_proxy, usage_log):
    fake, _ = team
    before = len(usage_rows(usage_log, 0))
    texts = [f"[[fake:echo]] stream {i} of 200" for i in range(200)]

    async def run() -> list[str]:
        async with openai.AsyncOpenAI(
            base_url=team_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=90
        ) as client:
            return await asyncio.wait_for(
                asyncio.gather(*(_one_stream(client, t) for t in texts)), timeout=100
            )

    answers = asyncio.run(run())
    assert answers == texts  # conol's echo scenario answers each with its own prompt, exactly
    assert len(creates(fake)) == 200
    rows = usage_rows(usage_log, before + 200)[before:]
    assert len(rows) == 200
    assert sorted(row["session_id"] for row in rows) == sorted(fake.sessions)
    workers = {row["pid"] for row in rows}
    assert len(workers) == WORKERS, (
        f"requests per worker: {[sum(r['pid'] == w for r in rows) for w in workers]}"
    )
