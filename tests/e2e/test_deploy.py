"""The service files in deploy/: the Dockerfile and the systemd unit start the same proxy, with options
LiteLLM's proxy CLI knows, on the config the image ships; deploy/install.sh installs for real.

No container runtime runs here (`docker` is only a client), so the Dockerfile's install step is a
script, deploy/install.sh, and that script is what is run for real (into a temporary venv).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
from support.paths import ROOT

DEPLOY = ROOT / "deploy"


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined, comments dropped."""
    lines = [ln for ln in (DEPLOY / "Dockerfile").read_text().splitlines() if not ln.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if line.strip():
            instruction, _, args = line.strip().partition(" ")
            found.append((instruction.upper(), args.strip()))
    return found


def docker_command() -> list[str]:
    (cmd,) = [args for instruction, args in dockerfile_instructions() if instruction == "CMD"]
    command: list[str] = json.loads(cmd)
    return command


def unit_service() -> list[tuple[str, str]]:
    """(key, value) lines of the unit's [Service] section, in order (keys repeat, e.g. Environment)."""
    section, found = "", []
    for line in (DEPLOY / "litellm-conol.service").read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Service" and line and not line.startswith("#"):
            key, _, value = line.partition("=")
            found.append((key, value))
    return found


def test_docker_and_systemd_start_the_same_proxy_with_options_the_cli_knows():
    from litellm.proxy.proxy_cli import run_server

    docker = docker_command()
    systemd = shlex.split(dict(unit_service())["ExecStart"])
    assert docker[0] == "litellm" and systemd[0] == "/opt/litellm-conol/bin/litellm"
    assert docker[1:] == systemd[1:]
    known = {opt for param in run_server.params for opt in param.opts}
    options = [arg for arg in docker[1:] if arg.startswith("--")]
    assert options and set(options) <= known, set(options) - known
    args = dict(zip(docker[1::2], docker[2::2], strict=True))
    assert args["--config"] == "/etc/litellm-conol/config.yaml"
    assert int(args["--num_workers"]) == 2 and int(args["--timeout_worker_healthcheck"]) >= 30


def test_the_image_installs_with_the_script_and_ships_the_team_config():
    steps = dockerfile_instructions()
    (run,) = [args for instruction, args in steps if instruction == "RUN"]
    assert run.startswith("sh deploy/install.sh /opt/litellm-conol ")
    assert "install -D -m 0644 deploy/team_config.yaml /etc/litellm-conol/config.yaml" in run
    copied = " ".join(args for instruction, args in steps if instruction == "COPY")
    for needed in ("pyproject.toml", "constraints.txt", "README.md", "litellm_conol", "deploy"):
        assert needed in copied
    env = " ".join(args for instruction, args in steps if instruction == "ENV")
    assert "LITELLM_LOCAL_MODEL_COST_MAP=True" in env
    service = unit_service()
    assert dict(service)["EnvironmentFile"] == "/etc/litellm-conol/env"  # secrets never in the unit
    assert ("Environment", "LITELLM_LOCAL_MODEL_COST_MAP=True") in service


@pytest.mark.timeout(600)
def test_install_script_installs_a_working_proxy(tmp_path):
    venv = tmp_path / "venv"
    result = subprocess.run(
        ["sh", str(DEPLOY / "install.sh"), str(venv)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=580,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert f"installed into {venv}" in result.stdout
    assert (venv / "bin" / "litellm").exists()
    models = subprocess.run([venv / "bin" / "litellm-conol", "models"], capture_output=True, text=True)
    assert "conol/claude-haiku-4-5" in models.stdout
