"""``python -m litellm_conol.fake`` as a process: it prints its address and serves."""

from __future__ import annotations

import subprocess
import sys
import threading

import httpx

from litellm_conol.fake import COOKIE_NAME


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
