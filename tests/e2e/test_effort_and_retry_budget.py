"""Effort, retry budget and tool hygiene through the real LiteLLM proxy against the fake conol: the
anthropic SDK on ``/v1/messages`` with Claude-Code-shaped requests, the openai SDK on chat and
``/v1/responses``, each with its DEFAULT retry settings where the budget is measured."""

from __future__ import annotations

import anthropic
import openai
import pytest
from support.proxyproc import MASTER_KEY

pytestmark = pytest.mark.timeout(180)

DEFERRED = {
    "name": "mcp__search__lookup",
    "description": "Deferred tool: never call this tool; load it with tool search first.",
    "input_schema": {"type": "object", "properties": {}},
    "defer_loading": True,
}
BASH = {
    "name": "Bash",
    "description": "Run a shell command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    },
}


# an account of its own for the credit error: the account rests afterwards (every request to it
# refused until its refill), the default account's tests go on
SPENT_TOKEN = "fake-conol-token-spent"
PROXY_DEPLOYMENTS = [  # on the shared proxy (tests/e2e/conftest.py)
    {"model_name": "spent", "litellm_params": {"model": "conol/claude-haiku-4-5", "api_key": SPENT_TOKEN}},
    {
        "model_name": "capped",
        "litellm_params": {"model": "conol/gpt-5.6-luna", "max_effort": "medium", "default_effort": "low"},
    },
]


@pytest.fixture
def fake(proxy_fake):
    return proxy_fake


@pytest.fixture
def proxy(shipped_proxy):
    return shipped_proxy


@pytest.fixture
def claude(fake, proxy):
    fake.reset()
    # the SDK's default retries (2), as Claude Code's own loop retries what the SDK would
    with anthropic.Anthropic(base_url=proxy.base_url, api_key=MASTER_KEY, timeout=60) as client:
        yield client


@pytest.fixture
def oai(fake, proxy):
    fake.reset()
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, timeout=60) as client:
        yield client


def claude_code(client, model: str, text: str, **extra):
    """A request shaped as Claude Code sends it: streamed, system with cache_control, thinking
    enabled with its default budget, metadata, a real tool and a deferred placeholder tool."""
    params = {
        "model": model,
        "max_tokens": 32000,
        "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
        "thinking": {"type": "enabled", "budget_tokens": 31999},
        "metadata": {"user_id": "user_1_account_2_session_3"},
        "tools": [BASH, DEFERRED],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        **extra,
    }
    with client.messages.stream(**params) as stream:
        return stream.get_final_message()


def created(fake) -> list[dict]:
    return [r.body for r in fake.requests if r.method == "POST" and r.path == "/api/sessions"]


# --- effort -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model, effort",
    [("conol/gpt-5.6-luna", "max"), ("conol/claude-haiku-4-5", "high"), ("conol/glm-5.2", "high")],
)
def test_claude_codes_default_budget_is_the_top_step_of_each_models_ladder(claude, fake, model, effort):
    # glm-5.2 is no claude name: the adapter would have made it reasoning_effort "high" on its own
    claude_code(claude, model, "Hi [[fake:done]]")
    assert fake.last_session.effort == effort


@pytest.mark.parametrize("model", ["conol/claude-haiku-4-5", "conol/glm-5.2"])
def test_output_config_effort_is_read_from_the_original_request(claude, fake, model):
    extra = {"thinking": {"type": "adaptive"}, "extra_body": {"output_config": {"effort": "low"}}}
    claude_code(claude, model, "Hi [[fake:done]]", **extra)
    assert fake.last_session.effort == "low"
    claude_code(claude, model, "Hi again [[fake:done]]", thinking={"type": "adaptive"})
    assert fake.last_session.effort == "high"  # adaptive with no effort: the documented default


def test_a_deployments_max_effort_caps_and_a_request_cannot_lift_it(claude, fake):
    claude_code(claude, "capped", "Hi [[fake:done]]")
    assert fake.last_session.effort == "medium"
    with pytest.raises(
        anthropic.BadRequestError, match="`max_effort` is set by the proxy operator, not per request"
    ):
        claude_code(claude, "capped", "Hi [[fake:done]]", extra_body={"max_effort": "max"})
    assert len(fake.sessions) == 1


def test_openai_chat_and_responses_efforts(oai, fake):
    oai.chat.completions.create(
        model="conol/gpt-5.6-luna",
        messages=[{"role": "user", "content": "Hi [[fake:done]]"}],
        reasoning_effort="xhigh",
    )
    assert fake.last_session.effort == "max"
    oai.responses.create(
        model="conol/gpt-5.6-luna", input="Hi [[fake:done]]", reasoning={"effort": "minimal"}
    )
    assert fake.last_session.effort == "low"
    oai.responses.create(model="capped", input="Hi [[fake:done]]")
    assert fake.last_session.effort == "low"  # the deployment's default_effort


# --- tool hygiene -----------------------------------------------------------------------------------


def test_a_deferred_tool_never_reaches_conol_and_schemas_carry_no_foreign_keys(claude, fake):
    claude_code(claude, "conol/claude-haiku-4-5", "Hi [[fake:done]]")
    (body,) = created(fake)
    assert [tool["name"] for tool in body["tools"]] == ["Bash"]
    assert body["tools"][0]["input_schema"] == BASH["input_schema"]


# --- retry budget -----------------------------------------------------------------------------------


def test_out_of_credits_is_a_429_and_every_retry_is_refused_without_a_session(claude, fake):
    # a 429 (docs/team-deployment.md#several-accounts): the Router's retries (this name has one
    # deployment) all meet the resting account, which refuses them without a session; the stream was
    # opened by then (LiteLLM's /v1/messages), so the client reads it as a rate_limit_error event
    with pytest.raises(anthropic.APIStatusError) as caught:
        claude_code(claude, "spent", "Fix the bug [[fake:out_of_credits]]")
    error = caught.value.body["error"]
    assert error["type"] == "rate_limit_error"
    assert "refused without starting a conol session" in error["message"]
    assert "rests until its refill in" in error["message"]
    assert len(fake.sessions) == 1
    # any request to that account, not only the same one, until the refill
    with pytest.raises(anthropic.APIStatusError, match="rests until its refill"):
        claude_code(claude, "spent", "Something else [[fake:done]]")
    assert len(fake.sessions) == 1


def test_an_unexplained_failure_costs_two_sessions_over_anthropic(claude, fake):
    with pytest.raises(anthropic.BadRequestError, match="failed the same way"):
        claude_code(claude, "conol/claude-haiku-4-5", "Refactor it [[fake:agent_error_unexplained]]")
    assert len(fake.sessions) == 2  # the Router's retry ran the second; the 400 stopped everyone
    with pytest.raises(anthropic.BadRequestError, match="refused without starting a conol session"):
        claude_code(claude, "conol/claude-haiku-4-5", "Refactor it [[fake:agent_error_unexplained]]")
    assert len(fake.sessions) == 2


def test_an_unexplained_failure_costs_two_sessions_over_openai_chat(oai, fake):
    text = "Write tests [[fake:agent_error_unexplained]]"
    with pytest.raises(openai.BadRequestError, match="failed the same way"):
        stream = oai.chat.completions.create(
            model="conol/gpt-5.6-luna", messages=[{"role": "user", "content": text}], stream=True
        )
        for _ in stream:
            pass
    assert len(fake.sessions) == 2


def test_an_unexplained_failure_costs_two_sessions_over_responses_with_codexs_stream_retries(oai, fake):
    # LiteLLM's /v1/responses bridge answers 200 with one response.failed event; Codex retries such a
    # stream (stream_max_retries, default 5): 6 attempts here
    codes, messages = [], []
    for _ in range(6):
        events = list(
            oai.responses.create(
                model="conol/gpt-5.6-luna", input="Fix CI [[fake:agent_error_unexplained]]", stream=True
            )
        )
        assert [e.type for e in events] == ["response.failed"]
        codes.append(events[-1].response.error.code)
        messages.append(events[-1].response.error.message)
    assert codes == ["server_error"] + ["invalid_request_error"] * 5
    assert "failed the same way" in messages[1]
    assert all("refused without starting a conol session" in m for m in messages[2:])
    assert len(fake.sessions) == 2


def test_a_transient_failure_stays_a_retryable_500(oai, fake):
    with pytest.raises(openai.InternalServerError, match="overloaded"):
        oai.with_options(max_retries=0).chat.completions.create(
            model="conol/gpt-5.6-luna",
            messages=[{"role": "user", "content": "Hi [[fake:agent_error_transient]]"}],
            extra_headers={"x-litellm-num-retries": "0"},
        )
    assert len(fake.sessions) == 1
