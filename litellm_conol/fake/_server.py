"""The aiohttp application: conol's ``/api`` endpoints plus the fake's ``/_fake`` control endpoints.

All state lives on ``FakeState`` and is touched only from the server's event loop (the Python API in
``_runner`` hops onto it), so no locks are needed.
"""

from __future__ import annotations

import asyncio
import hmac
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from ._catalog import DOWNGRADE_MODEL
from ._codec import dumps, loads
from ._drift import parse_drifts
from ._expected import expected_from_steps
from ._library import BUILTINS
from ._records import (
    RECORDED_HEADERS,
    ConnectionRecord,
    FakeConfig,
    RequestRecord,
    SessionRecord,
    StreamClose,
)
from ._replay import replay_file_steps
from ._scenarios import Scenario, ScenarioContext, ScenarioError, find_marker
from ._session import LiveSession, user_turn_text
from ._steps import Step
from ._validate import create_body_problem

COOKIE_NAME = "__Secure-better-auth.session_token"
PING = b": ping\n\n"
WRITE_BATCH = 1 << 20  # join small events into one write, but never build a replay blob of 50 MB

ApiHandler = Callable[[web.Request, RequestRecord], Awaitable[web.StreamResponse]]


def _json(data: object, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps(data), status=status, content_type="application/json", headers=headers)


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return _json({"error": message}, status, headers)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


class FakeState:
    def __init__(
        self,
        token: str,
        scenarios: Iterable[Scenario],
        default_scenario: str,
        ping_interval: float,
        known_models: Iterable[str],
        drift: str | None = None,
    ) -> None:
        self.token = token
        self._drift = ",".join(sorted(parse_drifts(drift))) or None  # ValueError for an unknown name
        self.known_models = frozenset(known_models)
        builtins = {**BUILTINS, "replay": self._replay_scenario()}
        self._initial = ({**builtins, **{s.name: s for s in scenarios}}, default_scenario, ping_interval)
        self.scenarios: dict[str, Scenario] = {}
        self.default_scenario = default_scenario
        self.config = FakeConfig()
        self.requests: list[RequestRecord] = []
        self.live: dict[str, LiveSession] = {}
        self.stopping = False
        self.reset()

    # ------------------------------------------------------------------------------------- lifecycle
    def reset(self) -> None:
        """Back to the constructor's scenarios, default and config; records and sessions dropped."""
        for live in self.live.values():
            live.kill("reset")
        scenarios, default, ping_interval = self._initial
        if default not in scenarios:
            raise ValueError(f"default scenario {default!r} is not registered")
        self.scenarios, self.default_scenario = dict(scenarios), default
        self.config = FakeConfig(ping_interval=ping_interval, drift=self._drift)
        self.requests, self.live = [], {}

    def _replay_scenario(self) -> Scenario:
        def steps(ctx: ScenarioContext) -> list[Step]:
            return replay_file_steps(ctx, Path(self.config.replay_dir or "."))

        return Scenario(
            "replay",
            steps,
            description="param file=NAME: replays the recording NAME (litellm-conol record, or written "
            "by hand) from the config's replay_dir with its original timing; its 'expected' says the answer",
            user_turn=False,
        )

    def shutdown(self) -> None:
        self.stopping = True
        for live in self.live.values():
            live.kill("shutdown")

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        api = self._api
        app.router.add_get("/api/auth/get-session", api(self._get_session))
        app.router.add_get("/api/billing/balance", api(self._balance))
        app.router.add_post("/api/sessions", api(self._create))
        app.router.add_get("/api/sessions/{id}", api(self._status))
        app.router.add_get("/api/sessions/{id}/messages", api(self._messages))
        app.router.add_route("*", "/api/{tail:.*}", api(self._not_found))
        app.router.add_get("/_fake/config", self._get_config)
        app.router.add_post("/_fake/config", self._post_config)
        app.router.add_post("/_fake/reset", self._post_reset)
        app.router.add_get("/_fake/requests", self._get_requests)
        app.router.add_get("/_fake/sessions", self._get_sessions)
        app.router.add_get("/_fake/sessions/{id}", self._get_session_record)
        app.router.add_get("/_fake/scenarios", self._get_scenarios)
        return app

    # ------------------------------------------------------------------------------- auth + records
    def _api(self, handler: ApiHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def wrapped(request: web.Request) -> web.StreamResponse:
            record = await self._record(request)
            response = (
                _error(401, "Unauthorized") if not record.authorized else await handler(request, record)
            )
            record.status = response.status
            return response

        return wrapped

    async def _record(self, request: web.Request) -> RequestRecord:
        cookie = request.cookies.get(COOKIE_NAME)
        record = RequestRecord(
            time=time.time(),
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={h: request.headers[h] for h in RECORDED_HEADERS if h in request.headers},
            cookie_present=cookie is not None,
            authorized=(
                cookie is not None
                and not self.config.revoke_token
                and hmac.compare_digest(cookie.encode(), self.token.encode())
            ),
        )
        if request.can_read_body:
            raw = await request.read()
            try:
                record.body = loads(raw)
            except ValueError as exc:
                record.body_error = f"not JSON ({exc}); {len(raw)} bytes"
        self.requests.append(record)
        return record

    # ----------------------------------------------------------------------------- conol endpoints
    async def _get_session(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        now = time.time()
        return _json(
            self.config.drifts.auth(
                {
                    "session": {"id": "ses_fake", "userId": "usr_fake", "expiresAt": _iso(now + 30 * 86400)},
                    "user": {"id": "usr_fake", "name": "Fake User", "email": "fake@conol.invalid"},
                }
            )
        )

    async def _balance(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        return _json(self.config.drifts.balance({"total": 12.5}))

    async def _not_found(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        return _error(404, "Not found")

    async def _create(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        fault = self._create_fault()
        if fault is not None:
            return fault
        problem = record.body_error or create_body_problem(record.body)
        if problem is not None:
            return _error(400, problem)
        body: dict[str, Any] = record.body
        messages = [part["content"] for part in body["messages"]]
        name, params = find_marker(messages) or (self.default_scenario, {})
        scenario = self.scenarios.get(name)
        if scenario is None:
            return _error(400, f"unknown fake scenario {name!r}; known: {', '.join(sorted(self.scenarios))}")
        record.scenario = name
        if not 200 <= scenario.create_status < 300:
            return self._scenario_failure(scenario)
        ctx = ScenarioContext(
            messages=tuple(messages),
            params=params,
            tools=tuple(t["name"] for t in body.get("tools", [])),
            model=body["agentModel"],
            effort=body["agentEffort"],
            timezone=body.get("timezone"),
        )
        try:
            script = scenario.script(ctx)
        except ScenarioError as exc:
            return _error(400, f"scenario {name!r}: {exc}")
        downgraded = scenario.downgrade or ctx.model not in self.known_models
        effective = DOWNGRADE_MODEL if downgraded else ctx.model
        answer: dict[str, Any] = {
            "modelDowngraded": downgraded,
            "effectiveModel": effective,
            "premiumEligible": True,
        }
        if scenario.id_key is not None:
            live = self._start_session(scenario, ctx, script, effective)
            record.session_id = live.record.id
            answer.update(_id_fields(scenario.id_key, live.record.id))
        if isinstance(scenario.create_body, Mapping):
            answer.update(scenario.create_body)
        answer = self.config.drifts.created(answer)
        return _json(answer, scenario.create_status, scenario.create_headers)

    def _create_fault(self) -> web.Response | None:
        cfg = self.config
        if cfg.create_status is None:
            return None
        status = cfg.create_status
        if cfg.create_fail_times is not None:
            cfg.create_fail_times -= 1
            if cfg.create_fail_times <= 0:  # that was the last injected failure
                cfg.create_status = cfg.create_fail_times = None
        retry_after = cfg.create_retry_after or ("2" if status == 429 else None)
        headers = {"Retry-After": retry_after} if retry_after else None
        return _error(status, f"injected failure (HTTP {status})", headers)

    @staticmethod
    def _scenario_failure(scenario: Scenario) -> web.Response:
        if isinstance(scenario.create_body, str):
            return web.Response(
                text=scenario.create_body,
                status=scenario.create_status,
                content_type="text/html",
                headers=scenario.create_headers,
            )
        return _json(
            scenario.create_body or {"error": "error"}, scenario.create_status, scenario.create_headers
        )

    def _start_session(
        self, scenario: Scenario, ctx: ScenarioContext, script: list[Step], effective: str
    ) -> LiveSession:
        now = time.time()
        record = SessionRecord(
            id=str(uuid.uuid4()),
            created_at=now,
            scenario=scenario.name,
            params=dict(ctx.params),
            model=ctx.model,
            effective_model=effective,
            downgraded=effective != ctx.model or scenario.downgrade,
            effort=ctx.effort,
            timezone=ctx.timezone,
            tools=list(ctx.tools),
            messages=list(ctx.messages),
            expected=expected_from_steps(script, http_status=scenario.create_status),
            status=scenario.initial_status,
        )
        record.status_history.append((now, scenario.initial_status))
        user_text = user_turn_text(list(ctx.messages), ctx.timezone, now)
        live = LiveSession(record, scenario, script, user_text, drift=self.config.drifts)
        self.live[record.id] = live
        live.start()
        return live

    async def _status(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        live = self.live.get(request.match_info["id"])
        if live is None:
            return _error(404, "Session not found")
        record.session_id = session_id = live.record.id
        live.record.status_poll_times.append(time.time())
        failure = self._status_failure(live)
        if failure is not None:
            return _error(failure, "Internal Server Error")
        rec = live.record
        return _json(
            self.config.drifts.status(
                {
                    "id": session_id,
                    "status": rec.status,
                    "agentModel": rec.model,
                    "effectiveModel": rec.effective_model,
                    "createdAt": _iso(rec.created_at),
                }
            )
        )

    def _status_failure(self, live: LiveSession) -> int | None:
        poll = live.record.status_polls  # 1-based: this poll is already counted
        if live.scenario.status_flaky and poll % 2 == 1:
            return 500
        every = self.config.status_fail_every
        if every > 0 and (poll - 1) % every == 0:
            return self.config.status_fail_status
        return None

    async def _messages(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        live = self.live.get(request.match_info["id"])
        if live is None:
            return _error(404, "Session not found")
        record.session_id = live.record.id
        if self.config.refuse_streams:
            return _error(self.config.refuse_stream_status, "stream refused (injected)")
        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            },
        )
        await response.prepare(request)  # never compressed: compression is never enabled on it
        record.status = 200
        conn = ConnectionRecord(
            index=len(live.record.connections),
            opened_at=time.time(),
            query=record.query,
            headers=record.headers,
        )
        live.record.connections.append(conn)
        await self._follow(response, live, conn)
        return response

    async def _follow(self, response: web.StreamResponse, live: LiveSession, conn: ConnectionRecord) -> None:
        """Stream until the client leaves (the handler task is cancelled), the scenario closes, or reset."""
        closed_by = "shutdown"
        try:
            closed_by = await _pump(response, live, conn, self.config)
            await response.write_eof()  # a clean end of the chunked body: the client sees the stream end
        except asyncio.CancelledError:
            # aiohttp cancels the handler when the peer disconnects (handler_cancellation=True)
            closed_by = "shutdown" if self.stopping else "client"
            raise
        except ConnectionError:
            closed_by = "client"
        finally:
            conn.closed_at, conn.closed_by = time.time(), closed_by

    # ------------------------------------------------------------------------------ control endpoints
    async def _get_config(self, request: web.Request) -> web.StreamResponse:
        return _json({**self.config.to_json(), "default_scenario": self.default_scenario})

    async def _post_config(self, request: web.Request) -> web.StreamResponse:
        try:
            changes = loads(await request.read())
            if not isinstance(changes, dict):
                raise ValueError("config must be a JSON object")
            self.configure(changes)
        except ValueError as exc:
            return _error(400, str(exc))
        return await self._get_config(request)

    def configure(self, changes: dict[str, Any]) -> None:
        changes = dict(changes)
        default = changes.pop("default_scenario", None)
        if default is not None and default not in self.scenarios:
            raise ValueError(f"unknown scenario {default!r}")
        self.config.update(changes)
        if default is not None:
            self.default_scenario = default

    async def _post_reset(self, request: web.Request) -> web.StreamResponse:
        self.reset()
        return _json({"ok": True})

    async def _get_requests(self, request: web.Request) -> web.StreamResponse:
        return _json({"requests": [r.to_json() for r in self.requests]})

    async def _get_sessions(self, request: web.Request) -> web.StreamResponse:
        return _json({"sessions": [live.record.summary() for live in self.live.values()]})

    async def _get_session_record(self, request: web.Request) -> web.StreamResponse:
        live = self.live.get(request.match_info["id"])
        if live is None:
            return _error(404, "Session not found")
        return _json(live.record.to_json(with_data=request.query.get("full") == "1"))

    async def _get_scenarios(self, request: web.Request) -> web.StreamResponse:
        scenarios = [s.summary() for s in self.scenarios.values()]
        return _json({"default": self.default_scenario, "scenarios": scenarios})


def _id_fields(key: str, session_id: str) -> dict[str, Any]:
    return {"session": {"id": session_id}} if key == "session.id" else {key: session_id}


async def _pump(
    response: web.StreamResponse, live: LiveSession, conn: ConnectionRecord, config: FakeConfig
) -> str:
    """Replay the timeline, then follow it live with pings when idle. Returns who ended the stream."""
    start = len(live.timeline)  # items before this are replay: their closes do not close us
    index, close_after_replay = 0, False
    while live.killed_by is None:
        changed = live.changed  # taken before reading, so an append in between still wakes us
        batch: list[bytes] = []
        size = 0
        while index < len(live.timeline):
            item = live.timeline[index]
            index += 1
            if isinstance(item, StreamClose):
                if index > start:
                    await _write(response, batch)
                    return "server"
                close_after_replay |= item.permanent
                continue
            batch.append(item.raw)
            conn.events_sent += 1
            size += len(item.raw)
            if size >= WRITE_BATCH:
                await _write(response, batch)
                batch, size = [], 0
        await _write(response, batch)
        if close_after_replay:
            return "server"
        if index < len(live.timeline):
            continue
        try:
            async with asyncio.timeout(config.ping_interval):
                await changed.wait()
        except TimeoutError:
            if live.pings_enabled:
                await response.write(PING)
                conn.pings_sent += 1
    return live.killed_by


async def _write(response: web.StreamResponse, batch: list[bytes]) -> None:
    if batch:
        await response.write(batch[0] if len(batch) == 1 else b"".join(batch))
