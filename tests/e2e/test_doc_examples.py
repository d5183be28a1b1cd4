"""The example outputs on the pages come from the commands shown beside them: each ``<!-- example: NAME
-->`` (to ``<!-- /example -->``) marks a page's commands and their output blocks, and a test here runs those commands
against the bundled fake and compares. The only changes: a free port instead of the documented one
(8765, 4000), and what differs on every run is read as a placeholder (timings, ports, ids, dates, the
doctor's random words). A block's ``…`` stands for whatever the page leaves out.

Not run here: the Claude Code and Codex outputs of docs/tutorial.md (npm programs this suite does not
install; tests/e2e/test_clients.py drives those front doors with the SDKs), and the usage-log line of
docs/team-deployment.md (a format, with the keys of a team the fake has no database for).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.paths import ROOT
from support.proxyproc import free_port, interrupt, offline_env, wait_until_live
from support.timing import bound

from litellm_conol import cli

pytestmark = pytest.mark.timeout(180)

EXAMPLE = re.compile(r"<!-- example: ([a-z-]+) -->(.*?)<!-- /example -->", re.DOTALL)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
RUNNERS = {"tutorial", "doctor-reuse", "doctor-modes", "models-refresh"}
PLACEHOLDERS = [
    (re.compile(r"\b\d+\.\d+ s\b"), "<seconds> s"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"), "<time>"),
    (re.compile(r"\b(zebra|wx)[0-9a-f]{6}\b"), r"\1<hex>"),
    (re.compile(r"after \d+ poll\(s\)"), "after <n> poll(s)"),
]


def page_examples() -> dict[str, list[tuple[str, str]]]:
    """NAME → the fenced blocks (language, text) between its markers."""
    pages = [path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))]
    return {
        match.group(1): FENCE.findall(match.group(2)) for page in pages for match in EXAMPLE.finditer(page)
    }


EXAMPLES = page_examples()


def normal(text: str) -> str:
    for pattern, placeholder in PLACEHOLDERS:
        text = pattern.sub(placeholder, text)
    return text


def line_matches(documented: str, printed: str) -> bool:
    """One line, a ``…`` in the page standing for any text."""
    pieces = [re.escape(piece) for piece in normal(documented).split("…")]
    return re.fullmatch(".*".join(pieces), normal(printed)) is not None


def shows(documented: str, printed: str, *, whole: bool) -> bool:
    """``whole``: the page's block is the output, line for line; else its lines appear in the output
    in order (a line ``…`` marks the gap)."""
    wanted = [line for line in documented.splitlines() if line.strip() != "…"]
    lines = printed.splitlines()
    if whole:
        return len(wanted) == len(lines) and all(map(line_matches, wanted, lines))
    position = 0
    for line in wanted:
        position = next((i + 1 for i in range(position, len(lines)) if line_matches(line, lines[i])), -1)
        if position < 0:
            return False
    return True


def commands(block: str) -> list[list[str]]:
    return [shlex.split(re.sub(r"\s#\s.*$", "", line)) for line in block.splitlines() if line.strip()]


@dataclass
class Started:
    """A program the page starts in a terminal of its own; ``output``: what it printed, once stopped."""

    process: subprocess.Popen[bytes]
    output: str = ""


@contextmanager
def running(
    argv: list[str], serving: Callable[[subprocess.Popen[bytes]], None], **popen: Any
) -> Iterator[Started]:
    """``argv`` started, once ``serving`` saw it serve; stopped (Ctrl-C) on the way out."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, **popen
    )
    started = Started(process)
    try:
        serving(process)
    except (AssertionError, RuntimeError) as failure:  # what it printed says why it did not serve
        raise AssertionError(f"{failure}; it printed:\n{interrupt(process)[-4000:]}") from failure
    try:
        yield started
    finally:
        started.output = interrupt(process)


@contextmanager
def bundled_fake(argv: list[str], port: int, env: dict[str, str]) -> Iterator[None]:
    """``litellm-conol fake …`` as the page gives it, on ``port``, until it answers."""
    assert argv[:2] == ["litellm-conol", "fake"], argv
    command = [sys.executable, "-m", "litellm_conol.cli", *argv[1:], "--port", str(port)]

    def answering(process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + bound(30)
        while time.monotonic() < deadline:
            assert process.poll() is None, "the fake exited"
            try:
                httpx.get(f"http://127.0.0.1:{port}/_fake/config", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise TimeoutError(f"the fake on port {port} did not answer")

    with running(command, answering, env=env):
        yield


def doctor_output(argv: list[str], port: int, capsys: pytest.CaptureFixture[str]) -> str:
    """``litellm-conol doctor …`` as the page gives it, in this process, against ``port``."""
    assert argv[:2] == ["litellm-conol", "doctor"], argv
    cli.main([arg.replace("127.0.0.1:8765", f"127.0.0.1:{port}") for arg in argv[1:]])
    return capsys.readouterr().out


def test_every_marked_example_is_run_here() -> None:
    assert sorted(EXAMPLES) == sorted(RUNNERS)


@pytest.mark.parametrize("variant", ["as documented", "create ignored"])
def test_doctor_reuse_against_the_bundled_fake(variant: str, capsys: pytest.CaptureFixture[str]) -> None:
    (_, shell), (_, report), (_, pinned) = EXAMPLES["doctor-reuse"]
    (fake, doctor) = commands(shell)
    extra = ["--create-model", "ignore"] if variant == "create ignored" else []
    port = free_port()
    with bundled_fake(fake + extra, port, offline_env()):
        printed = doctor_output(doctor, port, capsys)
    if not extra:
        assert shows(report, printed, whole=True), printed
    else:
        assert shows(pinned, printed, whole=False), printed


@pytest.mark.parametrize("block", [1, 2, 3])
def test_doctor_against_the_fake_in_each_mode(block: int, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = EXAMPLES["doctor-modes"]
    (fake, doctor) = commands(blocks[0][1])
    page = (ROOT / "docs" / "upstream-variants.md").read_text(encoding="utf-8")
    extra = {1: [], 2: ["--framing", "ndjson", "--context-usage"], 3: ["--balance", "zero"]}[block]
    assert f"`{' '.join(extra)}`" in page or not extra  # the page names the flags of each variant
    port = free_port()
    with bundled_fake(fake + extra, port, offline_env()):
        printed = doctor_output(doctor, port, capsys)
    assert shows(blocks[block][1], printed, whole=block == 1), printed


def test_models_refresh_against_the_bundled_fake(tmp_path: Path) -> None:
    ((_, console),) = EXAMPLES["models-refresh"]
    command, *output = console.splitlines()
    port = free_port()
    env = offline_env(CONOL_API_BASE=f"http://127.0.0.1:{port}", CONOL_SESSION_TOKEN="fake-conol-token")
    argv = shlex.split(command.removeprefix("$ "))
    with bundled_fake(["litellm-conol", "fake"], port, env):
        result = subprocess.run(
            [sys.executable, "-m", "litellm_conol.cli", *argv[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    assert shows("\n".join(output), result.stdout, whole=False), result.stdout
    assert json.loads((tmp_path / "conol-models.json").read_text())["models"]


def json_shows(documented: Any, printed: Any) -> bool:
    """Every key and value the page shows is in the answer (lists item by item)."""
    if isinstance(documented, dict):
        return isinstance(printed, dict) and all(
            key in printed and json_shows(value, printed[key]) for key, value in documented.items()
        )
    if isinstance(documented, list):
        return (
            isinstance(printed, list)
            and len(documented) == len(printed)
            and all(map(json_shows, documented, printed))
        )
    if isinstance(documented, str):
        return isinstance(printed, str) and line_matches(documented, printed)
    return bool(documented == printed)


def test_the_tutorial_serve_curl_and_sdk_steps(tmp_path: Path) -> None:
    blocks = dict(enumerate(EXAMPLES["tutorial"]))
    (make,), (serve,), banner = commands(blocks[0][1]), commands(blocks[1][1]), blocks[2][1]
    assert make == ["make", "run"] and serve == ["litellm-conol", "serve"]
    port = free_port()
    argv = [sys.executable, "-m", "litellm_conol.cli", "serve", "--port", str(port)]
    live = partial(wait_until_live, f"http://127.0.0.1:{port}")
    with running(argv, live, cwd=ROOT, env=offline_env()) as serve:
        curl = commands(blocks[3][1].replace("\\\n", " "))[0]
        answered = subprocess.run(
            [arg.replace(":4000", f":{port}") for arg in curl], capture_output=True, text=True, timeout=60
        )
        assert json_shows(json.loads(blocks[4][1]), json.loads(answered.stdout)), answered.stdout
        script = tmp_path / "first.py"
        script.write_text(blocks[5][1].replace(":4000", f":{port}"))
        printed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
        assert printed.stdout == blocks[6][1], printed.stderr
    output = serve.output.lstrip("\n")  # the banner, then LiteLLM's log
    assert shows(banner, "\n".join(output.splitlines()[: len(banner.splitlines())]), whole=True), output
