"""Child processes (fakes, proxy, SDK workers) and what /proc says about them (CPU, RSS, descriptors).

Every child starts in its own session (process group) and is killed as a group, always.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


def child_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1", **extra}
    env.pop("CONOL_SESSION_TOKEN", None)
    env.pop("CONOL_API_BASE", None)
    return env


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    ready_line: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        stop_group(self.process)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then SIGKILL what is left after 10 s."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
    # anything the child left behind in its group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def start_ready(name: str, module: str, args: list[str], out_dir: Path, timeout: float = 60.0) -> Child:
    """Start ``python -m module args`` and wait for its ``READY ...`` line on stdout."""
    log_path = out_dir / f"{name}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the child owns it; closed when we return
    process = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=log,
        start_new_session=True,
    )
    log.close()
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    buffer = b""
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: {log_path.read_text()[-2000:]}")
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                buffer += chunk
                for line in buffer.decode(errors="replace").splitlines():
                    if line.startswith("READY"):
                        return Child(name, process, log_path, line.split()[1:])
        raise TimeoutError(f"{name} not ready after {timeout} s")
    except BaseException:
        stop_group(process)
        raise


# --- /proc ------------------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2 :].split()  # fields from `state` (field 3) on


def group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(_stat_fields(int(entry))[2]) == pgid:
                    pids.append(int(entry))
    return pids


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (all its threads)."""
    f = _stat_fields(pid)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def group_cpu_seconds(pgid: int) -> float:
    total = 0.0
    for pid in group_pids(pgid):
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def group_rss_kb(pgid: int) -> int:
    total = 0
    for pid in group_pids(pgid):
        with contextlib.suppress(OSError):
            total += rss_kb(pid)
    return total


def fd_counts(pid: int) -> dict[str, int]:
    """Open descriptors of ``pid``: all, and how many are sockets."""
    base = f"/proc/{pid}/fd"
    total = sockets = 0
    for fd in os.listdir(base):
        total += 1
        with contextlib.suppress(OSError):
            if os.readlink(f"{base}/{fd}").startswith("socket:"):
                sockets += 1
    return {"fds": total, "sockets": sockets}


def group_fd_counts(pgid: int) -> dict[str, int]:
    total = {"fds": 0, "sockets": 0}
    for pid in group_pids(pgid):
        with contextlib.suppress(OSError):
            for key, value in fd_counts(pid).items():
                total[key] += value
    return total


async def until_signalled() -> None:
    """Wait for SIGINT or SIGTERM: how the fake servers are told to stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
