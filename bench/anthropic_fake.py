"""A minimal Anthropic Messages server that streams a ``Workload`` (bench/workload.py), for LiteLLM's
own ``anthropic/…`` provider: the reference the agent-shaped benchmark compares ``conol/…`` against.

``python -m bench.anthropic_fake`` prints ``READY <port>`` once listening. ``POST /v1/messages``
streams the workload named by the ``[[fake:bench ...]]`` marker in the messages, at the conol fake's
pace: ``message_start`` and the text block's start at once, the first ``text_delta`` ``lead`` s after
the request (conol: after the session's creation), the pieces ``delay`` s apart (silence of ``hold``
s after the first), then, for ``end=call``, the ``tool_use`` block of ``AGENT_CALL`` and the
message's end (``stop_reason: tool_use``) together, right after the last piece (conol: the tool
call event); otherwise ``end_turn``. Without ``stream`` the same timing ends in one JSON body.

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
from .workload import AGENT_CALL, AGENT_TOOL, Workload


class AnthropicFake(RecordingFake):
    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self.messages)
        self.add_control_routes(app)
        return app

    async def messages(self, request: web.Request) -> web.StreamResponse:
        arrived = time.time()
        raw = await request.read()
        body = orjson.loads(raw)
        work, rec = self.arrived(body, arrived)
        plan = _Plan(work, str(body.get("model")), input_tokens=len(raw) // 4)
        if not body.get("stream"):
            await asyncio.sleep(work.lead + work.hold + work.delay * (len(plan.pieces) - 1))
            rec["done_at"] = rec["call_at"] = time.time()
            return web.Response(body=orjson.dumps(plan.message()), content_type="application/json")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        try:
            await response.write(plan.opening())
            await asyncio.sleep(work.lead)
            for i, piece in enumerate(plan.pieces):
                if i:
                    await asyncio.sleep(work.hold if i == 1 and work.hold > 0 else work.delay)
                now = time.time()  # taken before the write, like the conol fake's event times
                if rec["first_content_at"] is None:
                    rec["first_content_at"] = now
                rec["last_content_at"] = now
                await response.write(plan.delta(piece))
            rec["done_at"] = rec["call_at"] = time.time()
            await response.write(plan.closing())
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            rec["closed_by"] = "client"
            raise
        return response


class _Plan:
    """One answer's events: the workload's text as one text block, then (``end=call``) a tool call."""

    def __init__(self, work: Workload, model: str, input_tokens: int) -> None:
        self.work, self.model, self.input_tokens = work, model, input_tokens
        self.pieces = work.pieces()
        self.id = f"msg_{uuid.uuid4().hex[:24]}"
        self.call_id = f"toolu_{uuid.uuid4().hex[:24]}"
        self.calls = work.end == "call"

    def opening(self) -> bytes:
        usage = {"input_tokens": self.input_tokens, "output_tokens": 1}
        usage |= {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {**self._message([]), "usage": usage}
        return _event("message_start", {"type": "message_start", "message": message}) + _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )

    def delta(self, piece: str) -> bytes:
        delta = {"type": "text_delta", "text": piece}
        return _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})

    def closing(self) -> bytes:
        out = _event("content_block_stop", {"type": "content_block_stop", "index": 0})
        if self.calls:
            block = {"type": "tool_use", "id": self.call_id, "name": AGENT_TOOL, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": orjson.dumps(AGENT_CALL).decode()}
            out += _event(
                "content_block_start", {"type": "content_block_start", "index": 1, "content_block": block}
            )
            out += _event("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": delta})
            out += _event("content_block_stop", {"type": "content_block_stop", "index": 1})
        stop = {"stop_reason": "tool_use" if self.calls else "end_turn", "stop_sequence": None}
        usage = {"output_tokens": self.work.chars // 4}
        out += _event("message_delta", {"type": "message_delta", "delta": stop, "usage": usage})
        return out + _event("message_stop", {"type": "message_stop"})

    def _message(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
        }

    def message(self) -> dict[str, Any]:
        """The whole answer, not streamed."""
        content: list[dict[str, Any]] = [{"type": "text", "text": self.work.text}]
        if self.calls:
            content.append({"type": "tool_use", "id": self.call_id, "name": AGENT_TOOL, "input": AGENT_CALL})
        usage = {"input_tokens": self.input_tokens, "output_tokens": self.work.chars // 4}
        stop = "tool_use" if self.calls else "end_turn"
        return {**self._message(content), "stop_reason": stop, "usage": usage}


def _event(name: str, data: object) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def serve(host: str, port: int) -> None:
    await serve_app(AnthropicFake().app(), host, port)


if __name__ == "__main__":
    run_main("python -m bench.anthropic_fake", serve)
