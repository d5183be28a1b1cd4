"""What one turn of the session-reuse benchmark costs the client, measured where it is spent.

* **Bytes sent**: the JSON bodies of the POSTs conol received in the turn (create, follow-up turn,
  ``/model``), as compact JSON, from the fake's request records.
* **Bytes received**: the body of every event-stream response (``GET …/messages``) as the client's
  transport reads it, counted in the client process where the transport hands the body's chunks to
  the SSE decoder (``client.transport.body_chunks``, wrapped while the benchmark runs): HTTP
  framing removed, nothing decoded (the stream is never compressed: the client asks for identity).
  It is what the client reads, reconnects and replays included, not what the fake wrote (a stream
  the client drops at the end of the answer may have bytes in flight that were never read).
* **CPU**: ``time.process_time()`` of this process (LiteLLM, the provider, the HTTP client: all
  threads) across the ``litellm.acompletion`` call; the fake runs in its own process
  (:class:`FakeProcess`), so its work is never counted as the client's. Its own CPU is read from
  ``/proc/<pid>/task/*/schedstat`` across the same call (nanoseconds on a CPU, every thread; the
  ``stat`` ticks, 10 ms, are coarser than a turn's share).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .procs import ROOT, child_env, stop_group

_LISTENING = re.compile(r"fake conol listening on (\S+) \(token: (\S+)\)")


@dataclass
class FakeProcess:
    """``python -m litellm_conol.fake`` on a free port, driven through its ``/_fake`` endpoints."""

    process: subprocess.Popen[bytes]
    base_url: str
    token: str
    control: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.control = httpx.Client(base_url=self.base_url, timeout=30)

    @classmethod
    def start(cls, timeout: float = 60.0) -> FakeProcess:
        command = [sys.executable, "-m", "litellm_conol.fake", "--port", "0"]
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert process.stdout is not None
        try:
            line = process.stdout.readline().decode()  # its first line says where it listens
            match = _LISTENING.search(line)
            if match is None:
                raise RuntimeError(f"the fake conol did not start: {line!r}")
        except BaseException:
            stop_group(process)
            raise
        return cls(process, match.group(1), match.group(2))

    def stop(self) -> None:
        self.control.close()
        stop_group(self.process)

    @property
    def cpu(self) -> float:
        """Seconds its threads have run on a CPU so far."""
        return cpu_ns(self.process.pid) / 1e9

    def reset(self, **config: Any) -> None:
        """Sessions and records dropped, the config back to its defaults, then ``config`` set."""
        self.control.post("/_fake/reset").raise_for_status()
        if config:
            self.control.post("/_fake/config", json=config).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        return list(self.control.get("/_fake/requests").json()["requests"])

    def session_count(self) -> int:
        return len(self.control.get("/_fake/sessions").json()["sessions"])


def cpu_ns(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):  # a thread that just ended
            total += int((task / "schedstat").read_text().split()[0])
    return total


def body_bytes(record: dict[str, Any]) -> int:
    return len(json.dumps(record["body"], separators=(",", ":"), ensure_ascii=False).encode())


@dataclass
class StreamMeter:
    """Counts the event-stream body bytes the client reads; ``keep``: also keeps each connection's
    chunks (for the offline analysis of what a replay costs to skip)."""

    keep: bool = False
    received: int = 0
    connections: int = 0
    streams: list[list[bytes]] = field(default_factory=list)

    def take(self) -> tuple[int, int, list[list[bytes]]]:
        """Bytes, connections and kept streams since the last take."""
        taken = (self.received, self.connections, self.streams)
        self.received, self.connections, self.streams = 0, 0, []
        return taken

    def wrap(
        self, body_chunks: Callable[[Any], AsyncIterator[bytes]]
    ) -> Callable[[Any], AsyncIterator[bytes]]:
        async def counted(response: Any) -> AsyncIterator[bytes]:
            self.connections += 1
            kept: list[bytes] = []
            if self.keep:
                self.streams.append(kept)
            async for chunk in body_chunks(response):
                self.received += len(chunk)
                if self.keep:
                    kept.append(bytes(chunk))
                yield chunk

        return counted


@contextmanager
def metered(meter: StreamMeter) -> Iterator[StreamMeter]:
    """``meter`` counts every event stream the client opens meanwhile."""
    from litellm_conol.client import transport as _transport

    original = _transport.body_chunks  # type: ignore[attr-defined]
    _transport.body_chunks = meter.wrap(original)  # type: ignore[attr-defined,assignment]
    try:
        yield meter
    finally:
        _transport.body_chunks = original  # type: ignore[attr-defined]
