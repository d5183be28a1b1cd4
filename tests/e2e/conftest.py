"""The shared end-to-end fixtures: one real LiteLLM proxy (the shipped ``proxy_config.yaml``) for the
whole run, in front of its own fake conol.

- ``proxy_fake``: the ``FakeConol`` behind the shared proxy (session-scoped; not reset).
- ``shipped_proxy``: the proxy process (``support.proxyproc.ProxyProcess``) on the shipped config.
- ``proxy_client``: an ``openai.OpenAI`` client of ``shipped_proxy`` with the master key.
- ``proxy_fake_and_client``: ``(proxy_fake, proxy_client)``, the fake reset for this test.
- ``spend_log``: the JSON-lines file ``support.spend_logger.spend_recorder`` writes in the proxy.
"""

from pathlib import Path

import openai
import pytest
from support.proxyproc import MASTER_KEY, fake_env, running_proxy, shipped_config

from litellm_conol.fake import FakeConol


@pytest.fixture(scope="session")
def proxy_fake():
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="session")
def spend_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spend") / "spend.jsonl"


@pytest.fixture(scope="session")
def shipped_proxy(proxy_fake, spend_log, tmp_path_factory):
    # The shipped config, plus only a test callback that records what spend logs are made of.
    config = shipped_config()
    config["litellm_settings"]["callbacks"] = ["support.spend_logger.spend_recorder"]
    # a model the catalog does not know, made usable by the deployment naming its agentModel
    config["model_list"].append(
        {
            "model_name": "private-model",
            "litellm_params": {"model": "conol/private-model", "agent_model": "vendor/private-1"},
        }
    )
    env = {**fake_env(proxy_fake), "SPEND_LOG_FILE": str(spend_log)}
    with running_proxy(
        config, tmp_path_factory.mktemp("proxy"), env=env, secrets=[proxy_fake.token]
    ) as process:
        yield process


@pytest.fixture
def proxy_client(shipped_proxy):
    with openai.OpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
def proxy_fake_and_client(proxy_fake, proxy_client):
    """The proxy's fake conol, reset for this test, and an openai client of the proxy."""
    proxy_fake.reset()
    return proxy_fake, proxy_client
