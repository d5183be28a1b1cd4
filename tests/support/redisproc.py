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
from collections.abc import Sequence
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
    """``redis-server`` on 127.0.0.1:<free port>, in memory only (``--save '' --appendonly no``).

    ``config``: lines of a redis.conf read first (``rename-command GETDEL ""``, ``user …``);
    ``admin``: ``(user, password)`` the test's own client logs in with when the config needs one.
    """

    def __init__(
        self,
        binary: str,
        log_path: Path,
        *,
        config: Sequence[str] = (),
        admin: tuple[str, str] | None = None,
    ):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        command = [binary]
        if config:
            conf = log_path.with_suffix(".conf")
            conf.write_text("".join(line + "\n" for line in config))
            command.append(str(conf))
        command += ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        username, password = admin or (None, None)
        self.client = redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=2, username=username, password=password
        )

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            try:
                if self.client.ping():
                    return
            except (redis.ConnectionError, redis.AuthenticationError):
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
