"""What the benchmark's fake servers share: their control endpoints (``/bench/records``,
``/bench/clear``, ``/bench/cpu``), the text a marker may be in, and serving an aiohttp app.

No litellm here: the fakes run in processes of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from litellm_conol.fake import find_marker

from .procs import until_signalled
from .workload import Workload


def message_texts(messages: list[Any]) -> list[str]:
    """The text of every message and text block (tool results included): where a marker may be."""
    out: list[str] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return out


def process_cpu() -> float:
    """This process's CPU seconds (user + system) so far."""
    t = os.times()
    return t.user + t.system


class RecordingFake:
    """A fake that keeps one record per tagged request, served on its control endpoints."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.requests = 0

    def arrived(self, body: dict[str, Any], at: float) -> tuple[Workload, dict[str, Any]]:
        """The workload the request's marker names, and the request's new record (by its tag: one
        per request; a conversation's tag names its last turn)."""
        self.requests += 1
        marker = find_marker(message_texts(body.get("messages") or []))
        params = marker[1] if marker else {}
        tag = params.get("tag") or f"untagged-{self.requests}"
        self.records[tag] = {"tag": tag, "created_at": at, "first_content_at": None}
        return Workload.from_params(params), self.records[tag]

    def add_control_routes(self, app: web.Application) -> None:
        app.router.add_get("/bench/records", self.get_records)
        app.router.add_post("/bench/clear", self.clear)
        app.router.add_get("/bench/cpu", self.cpu)

    async def get_records(self, request: web.Request) -> web.Response:
        return web.Response(
            body=orjson.dumps({"sessions": list(self.records.values()), "requests": self.requests}),
            content_type="application/json",
        )

    async def clear(self, request: web.Request) -> web.Response:
        self.records.clear()
        self.requests = 0
        return web.json_response({"ok": True})

    async def cpu(self, request: web.Request) -> web.Response:
        return web.json_response({"cpu": process_cpu(), "pid": os.getpid()})


async def start_site(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    """``app`` listening on ``host:port`` (0: a free one); the runner and the port."""
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    return runner, int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]


async def serve_app(app: web.Application, host: str, port: int) -> None:
    """Serve ``app``, print ``READY <port>``, until SIGINT or SIGTERM."""
    runner, bound = await start_site(app, host, port)
    print(f"READY {bound}", flush=True)
    try:
        await until_signalled()
    finally:
        await runner.cleanup()


def run_main(prog: str, serve: Callable[[str, int], Awaitable[None]]) -> None:
    """``python -m <prog> [--host H] [--port P]``: run ``serve(host, port)``."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port))
