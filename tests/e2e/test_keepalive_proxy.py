"""Silent agent turns through a load balancer that cuts idle connections: the shipped config's SSE
keepalive (docs/team-deployment.md#idle-timeouts-and-keepalive) keeps them alive on all three front
doors, and without it the same turn through the same relay is cut.

The proxies run the shipped ``proxy_config.yaml`` with only its keepalive interval changed (15 s → 1 s,
LiteLLM's minimum) and conol pointed at the fake; the relay cuts after ``IDLE_CUT`` s of silence while
conol works silently for twice that (the fake's ``stall_before_first`` with conol's own pings:
the session runs, the stream carries nothing else, then the answer comes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import openai
import pytest
import yaml
from support.chat import MODEL
from support.paths import ROOT
from support.proxyproc import MASTER_KEY, ProxyProcess, fake_env, running_proxy, shipped_config
from support.relay import IdleCuttingRelay, idle_cutting_relay
from support.timing import bound

from litellm_conol.fake import BUILTINS, FakeConol

pytestmark = pytest.mark.timeout(240)

SHIPPED_INTERVAL = 15
TEST_INTERVAL = 1
IDLE_CUT = bound(3.0)  # the relay closes a connection after this much silence either way
SILENCE = 2 * IDLE_CUT  # conol works silently this long
SILENT_FIRST = f"[[fake:stall_before_first seconds={SILENCE:g} pings=1]]"
SILENT_MID = f"[[fake:stall_mid seconds={SILENCE:g}]]"
HELLO = BUILTINS["hello"].final_text
MID_TEXT = BUILTINS["stall_mid"].final_text


def keepalive_config(interval: float | None) -> dict[str, Any]:
    """The shipped config with its keepalive intervals set to ``interval`` (None: LiteLLM's default,
    off, on every deployment)."""
    config = shipped_config()
    for deployment in config["model_list"]:
        params = deployment["litellm_params"]
        assert params.pop("keepalive_seconds") == SHIPPED_INTERVAL
        if interval is not None:
            params["keepalive_seconds"] = interval
    settings = config["litellm_settings"]
    if interval is not None:
        settings["anthropic_sse_ping_interval_seconds"] = interval
    return config


def test_the_shipped_configs_ping_every_15_s() -> None:
    """``litellm-conol serve`` runs the bundled ``proxy_config.yaml`` (this file); the team config too."""
    assert (ROOT / "litellm_conol" / "proxy_config.yaml").resolve() == (ROOT / "proxy_config.yaml").resolve()
    for path in (ROOT / "proxy_config.yaml", ROOT / "deploy" / "team_config.yaml"):
        config = yaml.safe_load(path.read_text())
        intervals = {
            d["model_name"]: d["litellm_params"].get("keepalive_seconds") for d in config["model_list"]
        }
        assert set(intervals.values()) == {SHIPPED_INTERVAL}, (path.name, intervals)
        assert config["litellm_settings"]["anthropic_sse_ping_interval_seconds"] == SHIPPED_INTERVAL
        assert "sse_keepalive_ping_interval_seconds" not in config["litellm_settings"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


def _proxy(fake: FakeConol, directory: Any, interval: float | None) -> Iterator[ProxyProcess]:
    with running_proxy(
        keepalive_config(interval), directory, env=fake_env(fake), secrets=[fake.token]
    ) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def keepalive_proxy(fake: FakeConol, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    yield from _proxy(fake, tmp_path_factory.mktemp("keepalive"), TEST_INTERVAL)


@pytest.fixture(scope="module")
def quiet_proxy(fake: FakeConol, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    """The same config with the keepalive off (LiteLLM's default)."""
    yield from _proxy(fake, tmp_path_factory.mktemp("no-keepalive"), None)


# --- the three front doors, each read to its answer text -------------------------------------------


def _openai(relay: IdleCuttingRelay) -> openai.OpenAI:
    return openai.OpenAI(base_url=relay.base_url, api_key=MASTER_KEY, max_retries=0, timeout=bound(60))


def chat_text(relay: IdleCuttingRelay, prompt: str) -> str:
    with _openai(relay) as client:
        stream = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": prompt}], stream=True
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def messages_text(relay: IdleCuttingRelay, prompt: str) -> str:
    with (
        anthropic.Anthropic(
            base_url=relay.base_url, api_key=MASTER_KEY, max_retries=0, timeout=bound(60)
        ) as client,
        client.messages.stream(
            model=MODEL, max_tokens=256, messages=[{"role": "user", "content": prompt}]
        ) as stream,
    ):
        return "".join(stream.text_stream)


def responses_text(relay: IdleCuttingRelay, prompt: str) -> str:
    with _openai(relay) as client:
        events = client.responses.create(model=MODEL, input=prompt, stream=True)
        return "".join(e.delta for e in events if e.type == "response.output_text.delta")


Door = Callable[[IdleCuttingRelay, str], str]
DOORS: dict[str, Door] = {"chat": chat_text, "messages": messages_text, "responses": responses_text}


def survives(fake: FakeConol, proxy: ProxyProcess, door: Door, prompt: str) -> str:
    """The answer of ``prompt`` through a relay that cuts ``IDLE_CUT`` s of silence; the turn was
    silent longer than that and the relay cut nothing."""
    fake.reset()
    with idle_cutting_relay(proxy.port, IDLE_CUT) as relay:
        started = time.monotonic()
        text = door(relay, prompt)
        elapsed = time.monotonic() - started
    assert relay.counts.cuts == 0
    assert elapsed >= SILENCE  # conol's silence (not a bound: the fake sleeps this long before answering)
    assert len(fake.sessions) == 1
    return text


@pytest.mark.parametrize("door", DOORS)
def test_a_turn_silent_before_its_first_byte_survives_the_idle_cut(
    fake: FakeConol, keepalive_proxy: ProxyProcess, door: str
) -> None:
    assert survives(fake, keepalive_proxy, DOORS[door], SILENT_FIRST) == HELLO


@pytest.mark.parametrize("door", ["chat", "messages"])
def test_a_turn_silent_mid_answer_survives_the_idle_cut(
    fake: FakeConol, keepalive_proxy: ProxyProcess, door: str
) -> None:
    """After the first byte chat completions (and /v1/responses, through the same generator) ping
    with the deployment's keepalive_seconds, /v1/messages with anthropic_sse_ping_interval_seconds."""
    assert survives(fake, keepalive_proxy, DOORS[door], SILENT_MID) == MID_TEXT


def test_without_the_keepalive_the_same_turn_is_cut(fake: FakeConol, quiet_proxy: ProxyProcess) -> None:
    """The control: the proxy sends nothing while conol works, the relay cuts, the client sees a
    connection error (not an HTTP status: nothing had been sent)."""
    fake.reset()
    with idle_cutting_relay(quiet_proxy.port, IDLE_CUT) as relay:
        started = time.monotonic()
        with pytest.raises(openai.APIConnectionError):
            chat_text(relay, SILENT_FIRST)
        elapsed = time.monotonic() - started
        assert relay.counts.cut.wait(bound(1.0))
    assert relay.counts.cuts == 1
    assert elapsed < SILENCE  # cut during the silence, before any answer
    assert len(fake.sessions) == 1  # the request reached conol: the cut, nothing else, ended it
