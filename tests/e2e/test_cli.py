"""The CLI as a process: its help, the catalog, the fake command serving the protocol (`litellm-conol
serve`, the README's run command, offline: tests/e2e/test_doc_examples.py runs the tutorial's steps)."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest
from support.proxyproc import free_port, interrupt, offline_env

pytestmark = pytest.mark.timeout(150)
CLI = [sys.executable, "-m", "litellm_conol.cli"]


def test_help_and_models():
    help_text = subprocess.run(
        [*CLI, "--help"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    assert "serve" in help_text and "fake" in help_text and "models" in help_text
    serve_help = subprocess.run(
        [*CLI, "serve", "--help"], capture_output=True, text=True, timeout=30, check=True
    )
    assert "--port" in serve_help.stdout
    models = subprocess.run([*CLI, "models"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert "conol/claude-haiku-4-5" in models and "agentModel=deepseek/deepseek-v4-pro" in models
    assert len(models.strip().splitlines()) == 15


def test_fake_command_serves_the_protocol():
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "fake", "--port", str(port), "--token", "t0k"],
        env=offline_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/auth/get-session", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert r.status_code == 401  # no cookie
        ok = httpx.get(
            f"http://127.0.0.1:{port}/api/auth/get-session",
            cookies={"__Secure-better-auth.session_token": "t0k"},
            timeout=5,
        )
        assert ok.status_code == 200
    finally:
        output = interrupt(process)
    assert f"listening on http://127.0.0.1:{port}" in output
