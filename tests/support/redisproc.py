"""A throwaway ``redis-server`` for tests: a free port, no persistence, always stopped.

``make test`` installs redis-server when it is missing (root + apt); where it cannot be had, the tests
that need it skip with the reason, except under ``CI=true``, where a missing binary fails them (a green
CI must not hide a missing install).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from support.proxyproc import free_port


def require_redis_server() -> str:
    """The redis-server binary's path; skips the test without it (fails it under ``CI=true``)."""
    path = shutil.which("redis-server")
    if path is not None:
        return path
    reason = (
        "redis-server is not installed: `make test` installs it with apt-get when run as root "
        "(apt-get install -y redis-server)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


class RedisServer:
    """``redis-server`` on 127.0.0.1:<free port>, in memory only (``--save '' --appendonly no``)."""

    def __init__(self, binary: str, log_path: Path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            try:
                if self.client.ping():
                    return
            except redis.ConnectionError:
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"redis-server not ready after {timeout} s")

    def kill(self) -> None:
        """Dies at once (SIGKILL), as a crashed server would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
