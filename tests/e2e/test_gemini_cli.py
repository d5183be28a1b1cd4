"""The real Gemini CLI (npm ``@google/gemini-cli``, pinned in ``support.gemini_cli``) through the shipped
proxy on a ``conol/…`` model, as docs/clients.md sets it up: ``GOOGLE_GEMINI_BASE_URL`` (the proxy),
``GEMINI_API_KEY`` (a proxy key), ``-m conol/claude-haiku-4-5``. Its requests:
``:streamGenerateContent`` (LiteLLM's generateContent adapter, reached through the shim in
``provider/litellm_compat.py``). Skips without node and npm (fails under ``CI=true``)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from support.gemini_cli import gemini_binary, run_gemini
from support.proxyproc import MASTER_KEY
from support.spend_logger import spend_rows_after
from support.timing import bound

from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(600)  # the first use installs the CLI from npm

HELLO = BUILTINS["hello"]


@pytest.fixture(scope="module")
def gemini() -> Path:
    return gemini_binary()


def test_gemini_cli_prints_the_conol_answer(gemini, proxy_fake_and_client, shipped_proxy, tmp_path):
    conol, _ = proxy_fake_and_client
    done = run_gemini(gemini, tmp_path, shipped_proxy.base_url, MASTER_KEY, "-p", "Hi")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == HELLO.final_text
    assert len(conol.sessions) == 1


def test_gemini_cli_yolo_runs_a_shell_command_and_answers_with_its_output(
    gemini, proxy_fake_and_client, shipped_proxy, tmp_path
):
    """conol's agent calls run_shell_command; Gemini CLI runs it (``--yolo``) and sends the output back;
    the answer carries it. The loop is one conol session and one follow-up turn (session reuse)."""
    conol, _ = proxy_fake_and_client
    command = quote(json.dumps({"command": "echo loop-gemini | rev"}))
    prompt = f"[[fake:use_tool name=run_shell_command args={command}]] Run it and tell me what it printed."
    done = run_gemini(gemini, tmp_path, shipped_proxy.base_url, MASTER_KEY, "--yolo", "-p", prompt)
    assert done.returncode == 0, done.stderr[-3000:]
    # the command ran in the CLI: only its output holds the reversed word
    assert done.stdout.startswith("The tool returned: ") and "inimeg-pool" in done.stdout
    session = conol.last_session
    assert (len(conol.sessions), session.turns) == (1, 2)
    assert session.messages[-1].startswith("[Tool result #call_run_shell_command: run_shell_command(")
    assert "inimeg-pool" in session.messages[-1]
    assert "run_shell_command" in session.tools


def test_gemini_cli_does_not_retry_a_request_conol_refuses(
    gemini, proxy_fake_and_client, shipped_proxy, tmp_path, spend_log
):
    """A 400 (conol's agent failed in a way a retry repeats) ends the run: one request, one failure."""
    before = spend_log.read_text().count("\n") if spend_log.exists() else 0
    prompt = "[[fake:agent_error_deterministic]] Summarise this folder."
    done = run_gemini(gemini, tmp_path, shipped_proxy.base_url, MASTER_KEY, "-p", prompt)
    assert done.returncode != 0
    assert "prompt is too long" in done.stdout + done.stderr
    rows = spend_rows_after(spend_log, before, 1, bound(10))
    assert [row["outcome"] for row in rows] == ["failure"]
