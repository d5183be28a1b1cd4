"""The proxy with the catalog in LiteLLM's model map: /model/info shows capabilities and prices, the
``conol/*`` wildcard lists the catalog on /v1/models, and spend is tokens x price (the catalog's, or a
deployment's ``model_info``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import openai
import pytest
from support.proxyproc import MASTER_KEY, ProxyProcess

from litellm_conol.core.models.catalog import default_catalog

pytestmark = pytest.mark.timeout(240)
PRICED = {"input_cost_per_token": 4e-06, "output_cost_per_token": 8e-06}


PROXY_DEPLOYMENTS = [  # on the shared proxy (tests/e2e/conftest.py), which records spend rows
    {
        "model_name": "priced-haiku",
        "litellm_params": {"model": "conol/claude-haiku-4-5"},
        "model_info": PRICED,
    }
]


@pytest.fixture
def model_map_proxy(shipped_proxy, spend_log):
    return shipped_proxy, spend_log


def _get(proxy: ProxyProcess, path: str) -> dict:
    response = httpx.get(proxy.base_url + path, headers={"Authorization": f"Bearer {MASTER_KEY}"}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _spend_rows(spend: Path, count: int, timeout: float = 30.0) -> list[dict]:
    """The spend rows once ``count`` have been written (the proxy logs after answering)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [json.loads(line) for line in spend.read_text().splitlines()] if spend.exists() else []
        if len(rows) >= count:
            return rows
        time.sleep(0.05)
    raise TimeoutError(f"{count} spend rows not written in {timeout} s")


def test_model_info_shows_the_catalog_capabilities_and_prices(model_map_proxy):
    proxy, _ = model_map_proxy
    rows = {row["model_name"]: row["model_info"] for row in _get(proxy, "/model/info")["data"]}
    haiku = rows["claude-haiku-4-5"]
    assert (haiku["input_cost_per_token"], haiku["output_cost_per_token"]) == (1e-06, 5e-06)
    assert (haiku["max_input_tokens"], haiku["max_output_tokens"]) == (200000, 64000)
    assert haiku["supports_function_calling"] is True and haiku["supports_reasoning"] is True
    assert haiku["supports_vision"] is True and haiku["supports_pdf_input"] is False
    assert "reasoning_effort" in haiku["supported_openai_params"]
    assert rows["priced-haiku"]["input_cost_per_token"] == PRICED["input_cost_per_token"]


def test_the_wildcard_deployment_lists_the_catalog_on_v1_models(model_map_proxy):
    proxy, _ = model_map_proxy
    listed = {row["id"] for row in _get(proxy, "/v1/models")["data"]}
    assert {f"conol/{model.id}" for model in default_catalog().models} <= listed


@pytest.mark.parametrize(
    ("model", "prices"), [("claude-haiku-4-5", (1e-06, 5e-06)), ("priced-haiku", (4e-06, 8e-06))]
)
def test_spend_is_tokens_times_the_catalog_or_deployment_price(model_map_proxy, model, prices):
    proxy, spend = model_map_proxy
    before = len(_spend_rows(spend, 0))
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}])
    row = _spend_rows(spend, before + 1)[before]
    usage = answer.usage
    assert (row["prompt_tokens"], row["completion_tokens"]) == (usage.prompt_tokens, usage.completion_tokens)
    expected = usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]
    assert row["response_cost"] == pytest.approx(expected)
    print(
        f"proxy spend {model}: {row['response_cost']!r} for {usage.prompt_tokens}+{usage.completion_tokens} tokens"
    )
