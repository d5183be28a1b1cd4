"""Parse cost on long answers: conol sends cumulative snapshots, so a 100 KB answer in 1,000 snapshots
is ~50 MB of JSON. Compared with the floor: ``json.loads`` of the same lines (and ``orjson.loads``).

* ``offline``: the exact ``data:`` payloads the fake sends (as the ``str`` the SSE decoder hands the
  driver), timed call by call: ``json.loads`` / ``orjson.loads`` (floors), ``parse_event`` (our wire
  parsing), ``parse_event`` + ``Assembler.feed`` (the whole protocol core: parse and suffix diff).
* ``end_to_end``: the handler (``conol_llm.astreaming``, no LiteLLM wrapper) and the full SDK
  (``litellm.acompletion(stream=True)``) against the fake in its own process: CPU of this process.
  A straight-line fit over the sizes splits that into a per-byte slope (compared with the floor's)
  and a fixed part (per request and per event: chunk objects, HTTP, LiteLLM's wrapper).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from typing import Any

import orjson

from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.wire import parse_event

from .workload import Workload

SNAPSHOTS = 1000


def snapshot_lines(chars: int, n: int = SNAPSHOTS) -> Iterator[str]:
    """The ``data:`` payloads of the fake's snapshot events (preview changed-only, logs once)."""
    work = Workload(chars=chars, n=n)
    text, end = work.text, 0
    for piece in work.pieces():
        end += len(piece)
        payload = {
            "type": "history_delta",
            "stages": [
                {
                    "id": "stg_0123456789abcdef",
                    "logs": [],
                    "preview": [{"role": "assistant", "type": "message", "content": text[:end]}],
                }
            ],
        }
        yield orjson.dumps(payload).decode()


def offline(chars: int, repeat: int = 3, n: int = SNAPSHOTS) -> dict[str, Any]:
    """Seconds (best of ``repeat``) for each way of consuming the ``n`` snapshot lines of ``chars``."""
    best: dict[str, float] = {}
    total_bytes = 0
    for _ in range(repeat):
        times = {"json_loads": 0.0, "orjson_loads": 0.0, "parse_event": 0.0, "core": 0.0}
        assembler = Assembler()
        emitted = 0
        total_bytes = 0
        gc.collect()
        gc.disable()
        try:
            for line in snapshot_lines(chars, n):
                total_bytes += len(line)
                t0 = time.perf_counter()
                json.loads(line)
                t1 = time.perf_counter()
                orjson.loads(line)
                t2 = time.perf_counter()
                parse_event(line)
                t3 = time.perf_counter()
                pieces = assembler.feed(_event(line))
                t4 = time.perf_counter()
                times["json_loads"] += t1 - t0
                times["orjson_loads"] += t2 - t1
                times["parse_event"] += t3 - t2
                times["core"] += t4 - t3
                emitted += sum(len(getattr(p, "text", "")) for p in pieces)
        finally:
            gc.enable()
        if assembler.final_text != Workload(chars=chars).text or emitted != chars:
            raise AssertionError(f"the core streamed {emitted} of {chars} chars")
        for key, value in times.items():
            best[key] = min(best.get(key, value), value)
    return {"chars": chars, "snapshots": n, "bytes": total_bytes, "seconds": best}


def _event(line: str) -> Any:
    event = parse_event(line)
    assert event is not None
    return event


E2E_MODES = {
    "handler": "conol",  # the project's handler, as LiteLLM calls it (no LiteLLM wrapper)
    "sdk": "",  # litellm.acompletion(stream=True) around the project's handler
    # just receiving the same event stream through our transport (socket, HTTP, aiohttp; no SSE
    # split, no JSON): what the handler pays before any parsing, which the json.loads floor omits
    "receive": "receive",
}
FULL_SIZE_MODES = ("handler", "receive")  # the 500 MB rows
_DONE_EVENT = b'"type":"done"'


async def receive_only(spec: dict[str, Any], messages: list[dict[str, str]]) -> None:
    """Create the session and read its event stream's bytes up to the ``done`` event, no decoding."""
    from litellm_conol.client.pool import shared_client
    from litellm_conol.client.transport import Transport
    from litellm_conol.core.config.options import build_request

    request = build_request(
        model="claude-haiku-4-5",
        messages=messages,
        api_key=spec["api_key"],
        api_base=spec["api_base"],
        optional_params={},
        timeout=600.0,
    )
    transport = Transport(request.endpoint, shared_client())
    session_id, _ = await transport.create_session(request.body)
    async with transport.event_stream_body(session_id) as (chunks, _socket):
        tail = b""
        async for chunk in chunks:
            if _DONE_EVENT in tail + chunk[:64] or _DONE_EVENT in chunk[-256:]:
                break  # (the stream stays open after it, as conol's does)
            tail = chunk[-64:]


async def end_to_end(spec: dict[str, Any], sizes: dict[str, Any]) -> dict[str, Any]:
    """Handler and SDK CPU per long answer, plus the offline numbers for the same sizes."""

    from .client import records

    out: dict[str, Any] = {"offline": [], "e2e": {}}
    for chars in sizes["parse_offline"]:
        out["offline"].append(offline(chars, repeat=1 if chars >= 1_000_000 else 3))
    modes = [m for m in E2E_MODES if m in sizes.get("parse_modes", E2E_MODES)]
    for mode in modes:
        provider = E2E_MODES[mode]
        out["e2e"][mode] = []
        for chars in sizes["parse_e2e"]:
            if chars > 100_000 and mode not in FULL_SIZE_MODES:
                continue  # 500 MB per run: the two ends of the range are enough for the slope
            work = Workload(chars=chars, n=SNAPSHOTS, delay=0.0, lead=0.05, end="done")
            runs = []
            for i in range(sizes["parse_repeat"] if chars < 1_000_000 else 1):
                tag = f"parse-{provider or 'sdk'}-{chars}-{i}"
                messages = [{"role": "user", "content": work.prompt(tag)}]
                gc.collect()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                text = await _consume(provider, spec, messages)
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                rec = records(spec["control"]).get(tag, {})
                exact = None if text is None else text == work.text
                runs.append({"cpu": cpu, "wall": wall, "ok": exact, "bytes": rec.get("bytes")})
            out["e2e"][mode].append({"chars": chars, "runs": runs})
    return out


async def _consume(provider: str, spec: dict[str, Any], messages: list[dict[str, str]]) -> str | None:
    """One long answer through ``provider``'s path (see E2E_MODES); the text it streamed."""
    import litellm

    import litellm_conol

    if provider == "receive":
        await receive_only(spec, messages)
        return None  # nothing is decoded here: exactness is the handler's row
    stream: Any
    if provider:
        stream = litellm_conol.conol_llm.astreaming(
            "claude-haiku-4-5",
            messages,
            spec["api_base"],
            api_key=spec["api_key"],
            optional_params={},
            timeout=600.0,
        )
    else:
        stream = await litellm.acompletion(
            model="conol/claude-haiku-4-5",
            messages=messages,
            stream=True,
            api_base=spec["api_base"],
            api_key=spec["api_key"],
        )
    parts: list[str] = []
    async for chunk in stream:
        content = chunk.choices[0].delta.content if chunk.choices else None
        if content:
            parts.append(content)
    return "".join(parts)


if __name__ == "__main__":  # python -m bench.parse: the offline part only
    for size in (10_000, 100_000):
        print(json.dumps(offline(size)))
