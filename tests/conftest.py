import os

# Before anything imports litellm: never fetch the cost map from the network (it stalls for seconds).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.pop("CONOL_SESSION_TOKEN", None)  # tests pass credentials explicitly
os.environ.pop("CONOL_API_BASE", None)


# --- end to end: one real LiteLLM proxy (shipped proxy_config.yaml) for the whole run -------------

from pathlib import Path

import openai
import pytest
import yaml
from proxyproc import MASTER_KEY, ROOT, ProxyProcess

from litellm_conol.fake import FakeConol


@pytest.fixture(scope="session")
def e2e_fake():
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="session")
def spend_log(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spend") / "spend.jsonl"


@pytest.fixture(scope="session")
def proxy(e2e_fake, spend_log, tmp_path_factory):
    # The shipped config, plus only a test callback that records what spend logs are made of.
    config = yaml.safe_load((ROOT / "proxy_config.yaml").read_text())
    config["litellm_settings"]["callbacks"] = ["spend_logger.spend_recorder"]
    # a model the catalog does not know, made usable by the deployment naming its agentModel
    config["model_list"].append(
        {
            "model_name": "private-model",
            "litellm_params": {"model": "conol/private-model", "agent_model": "vendor/private-1"},
        }
    )
    path = tmp_path_factory.mktemp("proxy") / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {
        "CONOL_API_BASE": e2e_fake.base_url,
        "CONOL_SESSION_TOKEN": e2e_fake.token,
        "SPEND_LOG_FILE": str(spend_log),
        "PYTHONPATH": str(ROOT / "tests"),
    }
    process = ProxyProcess(config=path, env=env, log_path=path.with_suffix(".log"))
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()


@pytest.fixture
def client(proxy):
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
def e2e(e2e_fake, client):
    """The proxy's fake conol, reset for this test, and an openai client of the proxy."""
    e2e_fake.reset()
    return e2e_fake, client
