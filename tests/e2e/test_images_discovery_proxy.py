"""Images and discovery end to end through the real LiteLLM proxy (a subprocess) against the fake
conol: the openai SDK with a data: URL, the anthropic SDK with a base64 image block, ``/v1/responses``
with ``input_image``, the SSRF refusal with image_fetch on, ``models --refresh`` and ``doctor`` in each
reading of the fake, as subprocesses."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys

import anthropic
import openai
import pytest
from support.proxyproc import MASTER_KEY, fake_env, running_proxy

from litellm_conol import cli as litellm_conol_cli
from litellm_conol.fake import AGENT_SERVER_KEY, FakeConol

pytestmark = pytest.mark.timeout(180)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()
DATA_URL = f"data:image/png;base64,{PNG_B64}"
MODEL = "conol/claude-haiku-4-5"


@pytest.fixture(scope="module")
def fake():
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    config = {
        "model_list": [
            {"model_name": "conol/*", "litellm_params": {"model": "conol/*", "discovery": "startup"}},
            {
                "model_name": "fetching",
                "litellm_params": {"model": "conol/claude-haiku-4-5", "image_fetch": "public"},
            },
        ],
        "litellm_settings": {
            "custom_provider_map": [{"provider": "conol", "custom_handler": "litellm_conol.conol_llm"}],
            "telemetry": False,
        },
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
    }
    secrets = [fake.token, AGENT_SERVER_KEY]
    with running_proxy(
        config, tmp_path_factory.mktemp("proxy"), env=fake_env(fake), secrets=secrets
    ) as process:
        yield process


@pytest.fixture
def reset(fake):
    fake.reset()
    return fake


def assert_one_upload_and_the_turn_names_it(fake: FakeConol, text: str) -> None:
    uploads = [r for r in fake.requests if r.path == "/api/assets"]
    assert len(uploads) == 1 and uploads[0].headers["content-type"] == "image/png"
    assert [a.sha256 for a in fake.assets.values()] == [hashlib.sha256(PNG).hexdigest()]
    create = [r for r in fake.requests if r.path == "/api/sessions"][-1].body
    image = {"type": "image", "content": "/api/assets/asset_1", "mediaType": "image/png"}
    assert create["messages"][-2:] == [{"type": "text", "content": text}, image]


def test_openai_sdk_with_an_image_data_url(proxy, reset):
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        response = client.chat.completions.create(
            model=MODEL,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this? [[fake:echo]]"},
                        {"type": "image_url", "image_url": {"url": DATA_URL}},
                    ],
                }
            ],
        )
    assert response.choices[0].message.content == "What is this? [[fake:echo]]"
    assert_one_upload_and_the_turn_names_it(reset, "What is this? [[fake:echo]]")


def test_anthropic_sdk_with_a_base64_image_block(proxy, reset):
    with anthropic.Anthropic(
        base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as claude:
        message = claude.messages.create(
            model=MODEL,
            max_tokens=256,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Describe it. [[fake:echo]]"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
                        },
                    ],
                }
            ],
        )
    assert [block.text for block in message.content if block.type == "text"] == ["Describe it. [[fake:echo]]"]
    assert_one_upload_and_the_turn_names_it(reset, "Describe it. [[fake:echo]]")


def test_responses_with_input_image(proxy, reset):
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        response = client.responses.create(
            model=MODEL,
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "And this? [[fake:echo]]"},
                        {"type": "input_image", "image_url": DATA_URL},
                    ],
                }
            ],
        )
    assert response.output_text == "And this? [[fake:echo]]"
    assert_one_upload_and_the_turn_names_it(reset, "And this? [[fake:echo]]")


def test_an_internal_image_url_is_refused_by_the_fetching_deployment_and_nothing_leaves(proxy, reset):
    url = f"{reset.base_url}/api/billing/balance"  # the fake stands in for an internal service
    with (
        openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client,
        pytest.raises(openai.BadRequestError) as caught,
    ):
        client.chat.completions.create(
            model="fetching",
            messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
        )
    assert "ConolException - image_url: image URL refused: not a public http(s) image" in str(caught.value)
    assert reset.requests == []


def test_an_image_for_a_text_only_model_is_refused_once_discovery_knows(proxy, reset):
    """``discovery: startup``: a deployment's first request starts it in the background (this one,
    unless an earlier test's did), and requests go on meanwhile; once known, it decides."""
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        client.chat.completions.create(
            model="conol/deepseek-v4-flash", messages=[{"role": "user", "content": "hi"}]
        )
        image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": DATA_URL}}]}]
        reset.reset()
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="conol/deepseek-v4-flash", messages=image)
    said = str(caught.value)
    assert "conol/deepseek-v4-flash does not take image input (per conol's agent-servers list)" in said
    assert reset.requests == []


# --- the CLI ---------------------------------------------------------------------------------------


def cli(fake: FakeConol, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CONOL_SESSION_TOKEN": fake.token}
    env["CONOL_API_BASE"] = fake.base_url
    return subprocess.run(
        [sys.executable, "-m", "litellm_conol.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_models_refresh_writes_a_catalog_file_the_extra_setting_reads(reset, tmp_path):
    out = tmp_path / "models.json"
    done = cli(reset, "models", "--refresh", "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "+ conol/claude-fable-5           agentModel=claude-fable-5 (vision, efforts low-medium-high-xhigh)"
    )
    assert "~ conol/deepseek-v4-flash        efforts: high-max -> high-xhigh" in lines
    assert lines[-1] == f"wrote 16 models to {out}; use them with CONOL_MODELS_EXTRA={out}"
    text = out.read_text()
    assert AGENT_SERVER_KEY not in text + done.stdout + done.stderr
    assert reset.token not in done.stdout + done.stderr
    env_models = subprocess.run(
        [sys.executable, "-m", "litellm_conol.cli", "models"],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CONOL_MODELS_EXTRA": str(out)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert env_models.stdout.splitlines()[-1].split() == ["conol/claude-fable-5", "agentModel=claude-fable-5"]
    assert json.loads(text)["models"][0]["id"] == "gpt-5.6-luna"


def test_models_refresh_without_the_endpoint_keeps_the_packaged_catalog(reset, tmp_path):
    reset.configure(agent_servers="absent")
    done = cli(reset, "models", "--refresh", "--out", str(tmp_path / "m.json"))
    assert done.returncode == 1 and not (tmp_path / "m.json").exists()
    assert done.stdout == (
        "conol offers no model list here (GET /api/agent-servers: 404); the packaged catalog stays\n"
    )


DOCTOR_MODES = {
    "faithful": ({}, "PASS", "PASS"),
    "assets absent": ({"assets": "absent"}, "ABSENT", "PASS"),
    "agent-servers absent": ({"agent_servers": "absent"}, "PASS", "ABSENT"),
    "agent-servers under agentServers": ({"agent_servers": "agentServers"}, "PASS", "PASS"),
    "agent-servers as strings": ({"agent_servers": "strings"}, "PASS", "PASS"),
    "asset_renamed drift": ({"drift": "asset_renamed"}, "FAIL", "PASS"),
    "agent_servers_renamed drift": ({"drift": "agent_servers_renamed"}, "PASS", "FAIL"),
    "uploads fail 503": ({"asset_status": 503}, "FAIL", "PASS"),
}


@pytest.mark.parametrize("mode", list(DOCTOR_MODES))
def test_doctor_reports_assets_and_discovery_in_each_mode(reset, mode, capsys):
    config, assets, discovery = DOCTOR_MODES[mode]
    reset.configure(**config)
    reset.set_default_scenario("agent")  # calls the tool it is given (the tool_call check), else says hello
    # in process (the CLI as a process is the refresh tests' and test_cli's): a process per mode
    # would spend its time importing LiteLLM
    code = litellm_conol_cli.main(
        ["doctor", "--no-models", "--api-base", reset.base_url, "--token", reset.token]
    )
    out, err = capsys.readouterr()
    lines = {line.split()[1]: line for line in out.splitlines()[:-1]}
    print(f"--- doctor against the fake, {mode}:\n{out}")
    assert lines["assets"].split()[0] == assets and lines["discovery"].split()[0] == discovery
    assert code == (1 if "FAIL" in (assets, discovery) else 0)
    assert reset.token not in out + err and AGENT_SERVER_KEY not in out + err
