"""Start the real LiteLLM proxy as a subprocess for end-to-end tests, and always clean it up."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import yaml

from support.paths import ROOT, TESTS

MASTER_KEY = "sk-test-master"

# Configs name test modules (``support.spend_logger.spend_recorder``, ``support.caller_kwargs``) as
# callbacks and handlers, and LiteLLM imports them by dotted path inside the proxy process: so every
# proxy gets ``tests/`` on its PYTHONPATH. It costs nothing where a config names none: nothing at the top
# of ``tests/`` shadows a package the proxy imports. (``litellm_conol`` comes from the working tree
# already: the proxy runs with ``python -m`` in the repository.)
_PROXY_PYTHONPATH = [str(TESTS)]


def _ephemeral_floor() -> int:
    """The lowest port the kernel hands to outgoing connections (Linux's default when unreadable)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A local port nobody listens on (bound then released): for a server to take, or for a client to
    be refused on. Drawn from below the ephemeral range: a port the kernel picked (``bind(0)``) can
    be handed to another process's outgoing connection before our server binds it, and the server
    then fails to start (seen under three test workers)."""
    floor = _ephemeral_floor()
    for _ in range(200):
        port = random.randrange(10000, max(10001, floor))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def wait_until_live(base_url: str, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Until the proxy at ``base_url`` answers its liveness probe; fails if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"proxy exited with {process.returncode}")
        try:
            if httpx.get(f"{base_url}/health/liveliness", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"proxy not ready after {timeout} s")


class ProxyProcess:
    def __init__(self, *, config: Path, env: dict[str, str], log_path: Path, args: list[str] | None = None):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        inherited = [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []
        full_env = {
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_MASTER_KEY": MASTER_KEY,
            "PYTHONPATH": os.pathsep.join([*_PROXY_PYTHONPATH, *inherited]),
            **env,
        }
        command = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config)]
        command += ["--host", "127.0.0.1", "--port", str(self.port), *(args or [])]
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command,
            env=full_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 120.0) -> None:
        try:
            wait_until_live(self.base_url, self.process, timeout)
        except (RuntimeError, TimeoutError) as exc:
            self.stop()
            raise type(exc)(f"{exc}:\n{self.log()[-4000:]}") from None

    def wait_for_workers(self, count: int, timeout: float = 90.0) -> None:
        """Until ``count`` workers have started (each logs uvicorn's startup line once)."""
        deadline = time.monotonic() + timeout
        while self.log().count("Application startup complete.") < count:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise TimeoutError(f"{count} workers did not start:\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self._log.close()


def offline_env(**extra: str) -> dict[str, str]:
    """This environment without conol's or the proxy key's variables (as on a fresh machine: the CLI
    then runs offline against the bundled fake), with LiteLLM's local cost map, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONOL_", "LITELLM_MASTER"))}
    return {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def interrupt(process: subprocess.Popen[bytes]) -> str:
    """Ctrl-C to a process started in a session of its own (and its children), killed if it is still
    there 20 s later; what it printed (its stdout, piped)."""
    with suppress(ProcessLookupError):  # the group too when the leader is gone: its children may be there
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)
    assert process.stdout is not None
    return process.stdout.read().decode(errors="replace")


def shipped_config() -> dict[str, Any]:
    """The shipped ``proxy_config.yaml`` as data, for a test to add deployments or callbacks to."""
    config: dict[str, Any] = yaml.safe_load((ROOT / "proxy_config.yaml").read_text())
    return config


def fake_env(fake: Any) -> dict[str, str]:
    """The environment that points the shipped config's deployments at a fake conol."""
    return {"CONOL_API_BASE": fake.base_url, "CONOL_SESSION_TOKEN": fake.token}


@contextmanager
def running_proxy(
    config: dict[str, Any],
    directory: Path,
    *,
    env: dict[str, str] | None = None,
    args: list[str] | None = None,
    secrets: Sequence[str] = (),
) -> Iterator[ProxyProcess]:
    """A ready proxy on ``config`` (written to ``config.yaml`` in ``directory``, its log to
    ``proxy.log`` beside it) started with the extra command-line ``args``, stopped on the way out; then
    its log must hold none of ``secrets`` (the check names how many leaked, never the secret)."""
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    process = ProxyProcess(config=path, env=env or {}, log_path=directory / "proxy.log", args=args)
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()
    log = process.log_path.read_text(errors="replace")
    leaked = sum(secret in log for secret in secrets)
    assert leaked == 0, f"{leaked} secret(s) in the proxy log {process.log_path}"
