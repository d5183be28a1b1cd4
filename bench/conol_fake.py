"""The fake conol with the benchmark scenario, in its own process, plus a small control app.

``python -m bench.conol_fake`` prints ``READY <api_port> <control_port> <token>`` once listening.

Control app (on its own port, so it never competes with the ``/api`` routes):

* ``GET /bench/records``: one compact record per tagged session (send times are ``time.time()``);
* ``POST /bench/clear``: drop every session (their streams end) and the request log;
* ``GET /bench/cpu``: this process's CPU seconds (user + system) so far.
"""

from __future__ import annotations

import os
from typing import Any

from aiohttp import web

from litellm_conol.fake import FakeConol, SessionRecord

from .fake_app import process_cpu, run_main, start_site
from .procs import until_signalled
from .workload import BENCH_SCENARIO

_PREVIEW = b'"preview":[{'
_COMMIT = b'"logs":[{"role":"assistant","type":"message"'
_CALL = b'"type":"tool_call"'


def session_summary(rec: SessionRecord) -> dict[str, Any]:
    content = [e.time for e in rec.events if e.type == "history_delta" and _PREVIEW in e.raw]
    done = [e.time for e in rec.events if e.type in ("done", "done_marker")]
    commits = [e.time for e in rec.events if e.type == "history_delta" and _COMMIT in e.raw]
    calls = [e.time for e in rec.events if e.type == "history_delta" and _CALL in e.raw]
    return {
        "tag": rec.params.get("tag"),
        "created_at": rec.created_at,
        "first_content_at": content[0] if content else None,
        "last_content_at": content[-1] if content else None,
        "done_at": done[0] if done else None,
        "commit_at": commits[0] if commits else None,
        "call_at": calls[0] if calls else None,  # an agent turn's end (workload end=call)
        "terminal_at": rec.terminal_at,
        "events": len(rec.events),
        "bytes": sum(e.size for e in rec.events),
        "polls": rec.status_polls,
        "polls_after_terminal": sum(
            1 for t in rec.status_poll_times if rec.terminal_at and t > rec.terminal_at
        ),
        "connections": len(rec.connections),
        "opened_at": [c.opened_at for c in rec.connections],
        "closed_by": [c.closed_by for c in rec.connections],
        "closed_at": [c.closed_at for c in rec.connections],
    }


async def serve(host: str, port: int) -> None:
    fake = FakeConol(host=host, port=port, scenarios=[BENCH_SCENARIO], default_scenario="bench")
    await fake.astart()
    state = fake._state  # the same loop: records are read where they are written

    async def records(request: web.Request) -> web.Response:
        out = [session_summary(live.record) for live in state.live.values()]
        return web.json_response({"sessions": out, "requests": len(state.requests)})

    async def clear(request: web.Request) -> web.Response:
        state.reset()
        return web.json_response({"ok": True})

    async def cpu(request: web.Request) -> web.Response:
        return web.json_response({"cpu": process_cpu(), "pid": os.getpid()})

    app = web.Application()
    app.router.add_get("/bench/records", records)
    app.router.add_post("/bench/clear", clear)
    app.router.add_get("/bench/cpu", cpu)
    runner, control_port = await start_site(app, host, 0)
    print(f"READY {fake.port} {control_port} {fake.token}", flush=True)
    try:
        await until_signalled()
    finally:
        await runner.cleanup()
        await fake.astop()


if __name__ == "__main__":
    run_main("python -m bench.conol_fake", serve)
