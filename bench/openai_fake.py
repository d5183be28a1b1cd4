"""A minimal OpenAI-compatible chat-completions server that streams a ``Workload`` (bench/workload.py).

``python -m bench.openai_fake`` prints ``READY <port>`` once listening. ``POST /v1/chat/completions``
streams the workload named by the ``[[fake:bench ...]]`` marker in the messages: ``lead`` s after the
request, the pieces ``delay`` s apart (silence of ``hold`` s after the first), then a finish chunk
and ``data: [DONE]``, written together (one event, as the conol ``done`` workload does). Without
``stream`` the same timing ends in one JSON body.

``GET /bench/records``, ``POST /bench/clear``, ``GET /bench/cpu`` as in ``bench.conol_fake``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from litellm_conol.fake import find_marker

from .procs import until_signalled
from .workload import Workload


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content if isinstance(p, dict)]
    return out


class OpenAIFake:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.requests = 0

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for prefix in ("", "/v1"):
            app.router.add_post(prefix + "/chat/completions", self.chat)
        app.router.add_get("/bench/records", self.get_records)
        app.router.add_post("/bench/clear", self.clear)
        app.router.add_get("/bench/cpu", self.cpu)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        arrived = time.time()
        self.requests += 1
        body = orjson.loads(await request.read())
        marker = find_marker(_texts(body.get("messages") or []))
        params = marker[1] if marker else {}
        work = Workload.from_params(params)
        tag = params.get("tag") or f"untagged-{self.requests}"
        rec: dict[str, Any] = {"tag": tag, "created_at": arrived, "first_content_at": None}
        self.records[tag] = rec
        rid, created, model = f"chatcmpl-{uuid.uuid4().hex}", int(arrived), str(body.get("model"))
        pieces = work.pieces()
        if not body.get("stream"):
            await asyncio.sleep(work.lead + work.hold + work.delay * (len(pieces) - 1))
            rec["done_at"] = time.time()
            return web.Response(
                body=orjson.dumps(_completion(rid, created, model, work.text)),
                content_type="application/json",
            )
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            await asyncio.sleep(work.lead)
            for i, piece in enumerate(pieces):
                if i:
                    await asyncio.sleep(work.hold if i == 1 and work.hold > 0 else work.delay)
                delta: dict[str, Any] = (
                    {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
                )
                now = time.time()  # taken before the write, like the conol fake's event times
                if rec["first_content_at"] is None:
                    rec["first_content_at"] = now
                rec["last_content_at"] = now
                await response.write(_sse(_chunk(rid, created, model, delta, None)))
            tail = _sse(_chunk(rid, created, model, {}, "stop"))
            if include_usage:
                usage = {
                    "prompt_tokens": 20,
                    "completion_tokens": work.chars // 4,
                    "total_tokens": 20 + work.chars // 4,
                }
                tail += _sse({**_chunk(rid, created, model, {}, None), "choices": [], "usage": usage})
            rec["done_at"] = time.time()
            await response.write(tail + b"data: [DONE]\n\n")
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            rec["closed_by"] = "client"
            raise
        return response

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
        t = os.times()
        return web.json_response({"cpu": t.user + t.system, "pid": os.getpid()})


def _chunk(rid: str, created: int, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _completion(rid: str, created: int, model: str, text: str) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": 20,
            "completion_tokens": len(text) // 4,
            "total_tokens": 20 + len(text) // 4,
        },
    }


def _sse(obj: object) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


async def serve(host: str, port: int) -> None:
    fake = OpenAIFake()
    runner = web.AppRunner(fake.app(), access_log=None, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"READY {bound}", flush=True)
    try:
        await until_signalled()
    finally:
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.openai_fake")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
