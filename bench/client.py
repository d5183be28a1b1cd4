"""What every benchmark client records per request, and running many at a fixed concurrency.

No litellm here: the SDK worker and the proxy load generator both use it.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Sample:
    tag: str
    start: float
    first: float | None = None  # first chunk with content (time.time())
    end: float | None = None  # the response is complete (iterator exhausted / body ended)
    chars: int = 0
    ok: bool = False  # the streamed text is exactly the workload's text
    error: str | None = None
    chunks: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


OneRequest = Callable[[str], Awaitable[Sample]]


async def run_many(one: OneRequest, tags: list[str], concurrency: int) -> list[Sample]:
    """Run ``one(tag)`` for every tag, at most ``concurrency`` at a time; errors become samples."""
    queue = list(reversed(tags))
    out: list[Sample] = []

    async def worker() -> None:
        while queue:
            tag = queue.pop()
            try:
                out.append(await one(tag))
            except Exception as exc:  # a failed request is a result, not a crash
                out.append(Sample(tag, time.time(), error=f"{type(exc).__name__}: {str(exc)[:300]}"))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(tags)))))
    return out


def control(url: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(url + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def records(url: str, clear: bool = True) -> dict[str, dict[str, Any]]:
    """The fake's per-request records by tag (then cleared, so the fake's memory stays flat)."""
    data = control(url, "/bench/records")
    if clear:
        control(url, "/bench/clear", "POST")
    return {r["tag"]: r for r in data["sessions"] if r.get("tag")}
