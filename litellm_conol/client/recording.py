"""A ``Transport`` that also keeps what conol sent: the raw SSE lines and the status answers, timed.

``litellm-conol doctor`` judges the shapes it saw there; ``litellm-conol record`` writes them to a
file the fake conol replays. The session itself runs exactly as for a chat request (same transport,
same driver): the recording only looks.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from ..core.protocol.wire import CreateSessionBody, CreateSessionResult
from .transport import Transport


@dataclass
class RecordingTransport(Transport):
    """``entries``: ``{"t": seconds since start, <kind>: value}`` with kind ``create`` (the create
    answer's fields we read), ``connect`` (an event stream opened), ``line`` (one SSE line as sent,
    comments included) or ``status`` (a status poll's answer; ``None`` when the poll failed)."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    created: CreateSessionResult | None = None
    started: float = field(default_factory=time.monotonic)

    def _note(self, kind: str, value: Any) -> None:
        self.entries.append({"t": round(time.monotonic() - self.started, 3), kind: value})

    def lines(self) -> list[str]:
        return [entry["line"] for entry in self.entries if "line" in entry]

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        session_id, result = await super().create_session(body)
        self.created = result
        self._note("create", result.model_dump(by_alias=True, exclude_none=True, exclude_unset=True))
        return session_id, result

    async def get_status(self, session_id: str) -> str | None:
        status = await super().get_status(session_id)
        self._note("status", status)
        return status

    @asynccontextmanager
    async def event_stream_body(self, session_id: str) -> AsyncIterator[tuple[AsyncIterator[bytes], Any]]:
        async with super().event_stream_body(session_id) as (chunks, raw_socket):
            self._note("connect", sum("connect" in entry for entry in self.entries) + 1)
            yield self._tee(chunks), raw_socket

    async def _tee(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        pending = bytearray()  # a line in the making (a long answer's snapshot spans many chunks)
        async for chunk in chunks:
            pending += chunk
            if b"\n" in chunk:
                *complete, rest = bytes(pending).split(b"\n")
                pending = bytearray(rest)
                for line in complete:
                    if line.strip():
                        self._note("line", line.rstrip(b"\r").decode(errors="replace"))
            yield chunk
