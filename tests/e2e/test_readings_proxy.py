"""Through the real LiteLLM proxy (a subprocess): every stream framing, and usage reported from
``contextUsage`` versus estimated, with the usage log and the spend (cost) using the same numbers."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from support.proxyproc import MASTER_KEY
from support.usage_log import usage_rows

from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(180)

PRICES = {"input_cost_per_token": 0.000003, "output_cost_per_token": 0.000015}
MODEL = "usage-priced-haiku"


PROXY_DEPLOYMENTS = [  # on the shared proxy (tests/e2e/conftest.py), which writes the usage log
    {"model_name": MODEL, "litellm_params": {"model": "conol/claude-haiku-4-5"}, "model_info": PRICES}
]


@pytest.fixture
def client(proxy_fake, shipped_proxy) -> Iterator[openai.OpenAI]:
    proxy_fake.reset()
    with openai.OpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as c:
        yield c


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@pytest.mark.parametrize("framing", ["sse", "ndjson", "message"])
def test_each_framing_through_the_proxy(client, proxy_fake, framing):
    proxy_fake.configure(framing=framing)
    for shape in ("hello", "stream_events"):
        expected = BUILTINS[shape]
        response = client.chat.completions.create(model=MODEL, messages=chat(f"[[fake:{shape}]]"))
        assert response.choices[0].message.content == expected.final_text
        stream = client.chat.completions.create(model=MODEL, messages=chat(f"[[fake:{shape}]]"), stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == expected.final_text
    connections = [c for s in proxy_fake.sessions.values() for c in s.connections]
    assert len(connections) >= 4 and proxy_fake.config.framing == framing


def cost(prompt: int, completion: int) -> float:
    return prompt * PRICES["input_cost_per_token"] + completion * PRICES["output_cost_per_token"]


def test_usage_reported_versus_estimated_and_the_log_and_spend_agree(client, proxy_fake, usage_log):
    before = len(usage_rows(usage_log, 0))
    estimated = client.chat.completions.create(model=MODEL, messages=chat("[[fake:hello]] one"), user="est")
    proxy_fake.configure(context_usage=True)
    reported = client.chat.completions.create(model=MODEL, messages=chat("[[fake:hello]] two"), user="rep")
    used = proxy_fake.last_session.context_usage["usedTokens"]
    stream = client.chat.completions.create(
        model=MODEL,
        messages=chat("[[fake:hello]] three"),
        user="str",
        stream=True,
        stream_options={"include_usage": True},
    )
    streamed_usage = [c.usage for c in stream if c.usage][-1]
    streamed_used = proxy_fake.last_session.context_usage["usedTokens"]

    est_fields = estimated.choices[0].message.model_extra["provider_specific_fields"]
    rep_fields = reported.choices[0].message.model_extra["provider_specific_fields"]
    assert (est_fields["usage"], est_fields["usage_estimated"]) == ("estimated", True)
    assert (rep_fields["usage"], rep_fields["usage_estimated"]) == ("reported", False)
    assert rep_fields["context_used_tokens"] == used == reported.usage.total_tokens
    assert streamed_usage.total_tokens == streamed_used

    rows = {row["user"]: row for row in usage_rows(usage_log, before + 3)[before:]}
    for user, response_usage, flag in (
        ("est", estimated.usage, True),
        ("rep", reported.usage, False),
        ("str", streamed_usage, False),
    ):
        row = rows[user]
        assert (row["prompt_tokens"], row["completion_tokens"], row["usage_estimated"]) == (
            response_usage.prompt_tokens,
            response_usage.completion_tokens,
            flag,
        ), user
        assert row["cost"] == pytest.approx(
            cost(response_usage.prompt_tokens, response_usage.completion_tokens)
        )
    assert rows["rep"]["effective_model"] == "claude-haiku-4-5"
    assert proxy_fake.token not in usage_log.read_text()
