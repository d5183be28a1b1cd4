"""The service files in deploy/: the Dockerfile and the systemd unit start the same proxy, with options
LiteLLM's proxy CLI knows, on the config the image ships; deploy/install.sh installs for real.

No container runtime runs here (`docker` is only a client), so the Dockerfile's install step is a
script, deploy/install.sh, and that script is what is run for real (into a temporary venv).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

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
    for needed in (
        "pyproject.toml",
        "constraints.txt",
        "constraints",
        "README.md",
        "litellm_conol",
        "deploy",
    ):
        assert needed in copied
    env = " ".join(args for instruction, args in steps if instruction == "ENV")
    assert "LITELLM_LOCAL_MODEL_COST_MAP=True" in env
    service = unit_service()
    assert dict(service)["EnvironmentFile"] == "/etc/litellm-conol/env"  # secrets never in the unit
    assert ("Environment", "LITELLM_LOCAL_MODEL_COST_MAP=True") in service


# deploy/install.sh run end to end is a fresh install of every dependency (a minute or more): it runs
# when what it installs from changed since its last passing run, whose inputs' digest
# deploy/install.verified records (the test rewrites it; commit it with the change).
VERIFIED = DEPLOY / "install.verified"
INSTALL_INPUTS = ("deploy", "pyproject.toml", "constraints.txt", "constraints")


def install_inputs_digest(root: Path = ROOT) -> str:
    """sha256 over the files install.sh installs from: deploy/, pyproject.toml and the constraints."""
    digest = hashlib.sha256()
    for name in INSTALL_INPUTS:
        path = root / name
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file() and file.name != VERIFIED.name and "__pycache__" not in file.parts:
                digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def recorded_digest() -> str:
    lines = VERIFIED.read_text().splitlines() if VERIFIED.exists() else []
    return next((line.split()[0] for line in lines if line and not line.startswith("#")), "")


@pytest.mark.timeout(600)
def test_install_script_installs_a_working_proxy(tmp_path):
    digest = install_inputs_digest()
    if digest == recorded_digest() and not os.environ.get("CONOL_VERIFY_INSTALL"):
        pytest.skip(
            "deploy/, pyproject.toml and the constraints are what install.sh last installed from end to end "
            "(deploy/install.verified); CONOL_VERIFY_INSTALL=1 runs it anyway"
        )
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
    VERIFIED.write_text(
        "# sha256 of deploy/, pyproject.toml and the constraints when deploy/install.sh last installed a\n"
        "# working proxy from them (tests/e2e/test_deploy.py: it runs the install again when they change)\n"
        f"{digest}\n"
    )


def test_the_install_inputs_digest_changes_with_each_input_and_nothing_else(tmp_path):
    for name in INSTALL_INPUTS:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, tmp_path / name)
    before = install_inputs_digest(tmp_path)
    assert before == install_inputs_digest()
    (tmp_path / "deploy" / VERIFIED.name).write_text("# another record\n")
    (tmp_path / "README.md").write_text("not an input")
    assert install_inputs_digest(tmp_path) == before
    for name in ("deploy/install.sh", "pyproject.toml", "constraints.txt", "constraints/litellm-1.110.txt"):
        with (tmp_path / name).open("a") as out:
            out.write("\n# changed\n")
        changed = install_inputs_digest(tmp_path)
        assert changed != before, name
        before = changed
