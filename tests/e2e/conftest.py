"""The shared end-to-end fixtures: one real LiteLLM proxy (the shipped ``proxy_config.yaml``) for the
whole run, in front of its own fake conol.

- ``proxy_fake``: the ``FakeConol`` behind the shared proxy (session-scoped; not reset).
- ``shipped_proxy``: the proxy process (``support.proxyproc.ProxyProcess``) on the shipped config,
  plus every collected module's ``PROXY_DEPLOYMENTS``, with the test callback that records spend rows
  and the package's usage log.
- ``proxy_deployments``: the deployments the modules added, in the order they were added.
- ``proxy_client``: an ``openai.OpenAI`` client of ``shipped_proxy`` with the master key.
- ``proxy_fake_and_client``: ``(proxy_fake, proxy_client)``, the fake reset for this test.
- ``spend_log``: the JSON-lines file ``support.spend_logger.spend_recorder`` writes in the proxy.
- ``usage_log``: the usage log (``CONOL_USAGE_LOG``) the proxy writes.

A module that needs deployments of its own (other ``litellm_params`` or ``model_info``) declares them
at module level as ``PROXY_DEPLOYMENTS = [{"model_name": …, "litellm_params": {…}}]`` and uses the
shared proxy: a proxy start costs seconds of CPU, a deployment nothing. A deployment whose ``api_key``
is ``fake-conol-token-<name>`` runs on an account of its own, which the shared fake serves from the
start (an account conol's credit error rests, say, so that the default account goes on serving). Only a module that needs other
``litellm_settings``, ``general_settings``, router settings, environment or command-line flags starts
its own (``support.proxyproc.running_proxy``, module-scoped).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import openai
import pytest
from support.proxyproc import MASTER_KEY, ProxyProcess, fake_env, running_proxy, shipped_config

from litellm_conol.fake import DEFAULT_TOKEN, FakeConol

# a model the catalog does not know, made usable by the deployment naming its agentModel
PRIVATE_MODEL = {
    "model_name": "private-model",
    "litellm_params": {"model": "conol/private-model", "agent_model": "vendor/private-1"},
}


def module_deployments(items: Sequence[pytest.Item]) -> list[dict[str, Any]]:
    """Every collected module's ``PROXY_DEPLOYMENTS``, each model name once (a name two modules give
    different deployments is an error: one of them would get the other's)."""
    found: dict[str, dict[str, Any]] = {}
    modules = {id(item.module): item.module for item in items if getattr(item, "module", None) is not None}
    for module in sorted(modules.values(), key=lambda m: m.__name__):
        for deployment in getattr(module, "PROXY_DEPLOYMENTS", []):
            name = deployment["model_name"]
            assert found.setdefault(name, deployment) == deployment, f"two deployments named {name!r}"
    return list(found.values())


def own_accounts(deployments: Sequence[dict[str, Any]]) -> list[str]:
    """The account names of the deployments that run on one of their own (``fake-conol-token-<name>``)."""
    prefix = f"{DEFAULT_TOKEN}-"
    tokens = (deployment["litellm_params"].get("api_key") for deployment in deployments)
    return sorted({token.removeprefix(prefix) for token in tokens if str(token).startswith(prefix)})


@pytest.fixture(scope="session")
def proxy_fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="session")
def spend_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spend") / "spend.jsonl"


@pytest.fixture(scope="session")
def usage_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("usage") / "usage.jsonl"


@pytest.fixture(scope="session")
def proxy_deployments(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return [PRIVATE_MODEL, *module_deployments(request.session.items)]


@pytest.fixture(scope="session")
def shipped_proxy(
    proxy_fake: FakeConol,
    spend_log: Path,
    usage_log: Path,
    proxy_deployments: list[dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ProxyProcess]:
    # The shipped config, plus the test callback that records what spend logs are made of, the
    # package's usage log and the modules' deployments.
    config = shipped_config()
    callbacks = ["support.spend_logger.spend_recorder", "litellm_conol.usage_log.usage_logger"]
    config["litellm_settings"]["callbacks"] = callbacks
    config["model_list"] += proxy_deployments
    for name in own_accounts(proxy_deployments):
        proxy_fake.add_account(name)
    env = {**fake_env(proxy_fake), "SPEND_LOG_FILE": str(spend_log), "CONOL_USAGE_LOG": str(usage_log)}
    with running_proxy(
        config, tmp_path_factory.mktemp("proxy"), env=env, secrets=[proxy_fake.token]
    ) as process:
        yield process


@pytest.fixture
def proxy_client(shipped_proxy: ProxyProcess) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
def proxy_fake_and_client(
    proxy_fake: FakeConol, proxy_client: openai.OpenAI
) -> tuple[FakeConol, openai.OpenAI]:
    """The proxy's fake conol, reset for this test, and an openai client of the proxy."""
    proxy_fake.reset()
    return proxy_fake, proxy_client
