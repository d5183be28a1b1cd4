"""``python -m litellm_conol.fake`` as a process: it prints its address and serves."""

from __future__ import annotations

import subprocess
import sys
import threading

import httpx

from litellm_conol.fake import BUILTINS, COOKIE_NAME


def test_cli_prints_its_address_and_serves() -> None:
    cmd = [sys.executable, "-m", "litellm_conol.fake", "--port", "0", "--token", "cli-token"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(proc.stdout.readline() if proc.stdout else ""))
        reader.start()
        reader.join(15)
        assert first and first[0].startswith("fake conol listening on http://127.0.0.1:"), first
        assert "(token: cli-token)" in first[0]
        url = first[0].split()[4]
        response = httpx.get(url + "/api/auth/get-session", cookies={COOKIE_NAME: "cli-token"}, timeout=5)
        assert response.status_code == 200
    finally:
        proc.terminate()
        assert proc.wait(10) == 0


def test_both_programs_list_the_same_scenarios() -> None:
    """``--list-scenarios`` as a process, from ``litellm-conol fake`` and ``python -m litellm_conol.fake``."""
    programs = [
        [sys.executable, "-m", "litellm_conol.cli", "fake"],
        [sys.executable, "-m", "litellm_conol.fake"],
    ]
    outputs = [
        subprocess.run(
            [*program, "--list-scenarios"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
        for program in programs
    ]
    expected = [f"{scenario.name:22} {scenario.description}" for scenario in BUILTINS.values()]
    assert [output.splitlines() for output in outputs] == [expected, expected]
    assert expected[0].startswith("hello                  thinking x3, answer x6, committed log")
