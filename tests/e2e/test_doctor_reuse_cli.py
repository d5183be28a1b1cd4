"""``litellm-conol doctor --reuse`` against the fake in each upstream reading: follow-ups that work
(turn 2 recalls turn 1's word), pinning by create or by ``/model``, follow-ups refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from litellm_conol import cli
from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(120)


def doctor(fake: FakeConol) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "litellm_conol.cli", "doctor", "--reuse", "--no-models"]
    command += ["--api-base", fake.base_url, "--token", fake.token, "--model", "claude-haiku-4-5"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=100, check=False)


def squeezed(line: str) -> str:
    """A report line without its column padding (the outcome column fits ABSENT)."""
    return " ".join(line.split())


@pytest.mark.parametrize(
    ("config", "code", "followup", "pinning", "settings"),
    [
        (
            {},
            0,
            "PASS  followup",
            "create: create honours agentModel",
            ["session_reuse: auto", "model_pinning: create"],
        ),
        (
            {"create_model": "ignore"},
            0,
            "PASS  followup",
            "pin: create ran 'deepseek/deepseek-v4-flash'; /model pins it",
            ["session_reuse: auto", "model_pinning: pin"],
        ),
        (
            {"followup_status": 405},
            1,
            "FAIL  followup",
            "create: create honours agentModel",
            ["session_reuse: off", "model_pinning: create"],
        ),
    ],
)
def test_doctor_reuse_in_each_upstream_reading(config, code, followup, pinning, settings, capsys):
    # in process (one process per reading would spend its time importing LiteLLM; the next test
    # runs the CLI as a process)
    with FakeConol(default_scenario="recall") as fake:
        fake.configure(**config)
        args = ["doctor", "--reuse", "--no-models", "--api-base", fake.base_url, "--token", fake.token]
        returncode = cli.main([*args, "--model", "claude-haiku-4-5"])
    out, err = capsys.readouterr()
    result = subprocess.CompletedProcess(args, returncode, out, err)
    lines = result.stdout.splitlines()
    assert result.returncode == code, result.stdout + result.stderr
    assert squeezed(lines[0]).startswith(squeezed(followup))
    if code == 0:
        assert "turn 2 recalled the word from turn 1 ('zebra" in lines[0]
    else:
        assert "(405)" in lines[0]
    assert squeezed(lines[1]).startswith("PASS pinning claude-haiku-4-5") and lines[1].endswith(pinning)
    assert lines[-2:] == settings
    assert fake.token not in result.stdout


def test_the_recall_check_fails_when_turn_two_forgets(monkeypatch):
    # a follow-up answered 2xx that does not continue the conversation is not a working follow-up
    with FakeConol(default_scenario="hello") as fake:
        result = doctor(fake)
    assert result.returncode == 1
    assert squeezed(result.stdout.splitlines()[0]).startswith("FAIL followup")
    assert "did not recall" in result.stdout
    assert result.stdout.splitlines()[-2] == "session_reuse: off"
