"""A minimal OpenAI-compatible chat-completions server that streams a ``Workload`` (bench/workload.py).

``python -m bench.openai_fake`` prints ``READY <port>`` once listening. ``POST /v1/chat/completions``
streams the workload named by the ``[[fake:bench ...]]`` marker in the messages: ``lead`` s after the
request, the pieces ``delay`` s apart (silence of ``hold`` s after the first), then a finish chunk
and ``data: [DONE]``, written together (one event, as the conol ``done`` workload does). Without
``stream`` the same timing ends in one JSON body.

``GET /bench/records``, ``POST /bench/clear``, ``GET /bench/cpu`` as in ``bench.conol_fake``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from .fake_app import RecordingFake, run_main, serve_app


class OpenAIFake(RecordingFake):
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for prefix in ("", "/v1"):
            app.router.add_post(prefix + "/chat/completions", self.chat)
        self.add_control_routes(app)
        return app

    async def chat(self, request: web.Request) -> web.StreamResponse:
        arrived = time.time()
        body = orjson.loads(await request.read())
        work, rec = self.arrived(body, arrived)
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
    await serve_app(OpenAIFake().app(), host, port)


if __name__ == "__main__":
    run_main("python -m bench.openai_fake", serve)
