"""The aiohttp application: ``FakeState`` and conol's ``/api`` endpoints (the ``/_fake`` ones: ``_control``).

All state lives on ``FakeState`` and is touched only from the server's event loop (the Python API in
``_runner`` hops onto it), so no locks are needed.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from ._account import CHECKPOINT_PAGE, NO_CREDITS, Accounts, FakeAccount
from ._assets import AssetStore, agent_servers_response
from ._codec import loads
from ._control import ControlEndpoints
from ._drift import parse_drifts
from ._expected import expected_from_steps
from ._library import BUILTINS
from ._records import RECORDED_HEADERS, ConnectionRecord, FakeConfig, RequestRecord, SessionRecord
from ._replay import replay_file_steps
from ._responses import create_fault, error_response, id_fields, json_response, scenario_failure
from ._scenarios import Scenario, ScenarioContext, ScenarioError, find_marker
from ._session import LiveSession, UsageReport, user_turn_text
from ._steps import Step
from ._stream import CONTENT_TYPES, pump
from ._turns import TurnEndpoints, late_events, shaped
from ._validate import create_body_problem, unknown_asset

COOKIE_NAME = "__Secure-better-auth.session_token"

ApiHandler = Callable[[web.Request, RequestRecord], Awaitable[web.StreamResponse]]


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
        readings: Mapping[str, Any] | None = None,
    ) -> None:
        self.token = token
        self.accounts = Accounts(token)  # the default account's token, and any added (one each)
        self._drift = ",".join(sorted(parse_drifts(drift))) or None  # ValueError for an unknown name
        self._readings = dict(readings or {})  # FakeConfig's reading switches, kept over reset()
        FakeConfig().update(self._readings)  # ValueError for an unknown key or value
        self.known_models = frozenset(known_models)
        builtins = {**BUILTINS, "replay": self._replay_scenario()}
        self._initial = ({**builtins, **{s.name: s for s in scenarios}}, default_scenario, ping_interval)
        self.scenarios: dict[str, Scenario] = {}
        self.default_scenario = default_scenario
        self.config = FakeConfig()
        self.requests: list[RequestRecord] = []
        self.live: dict[str, LiveSession] = {}
        self.gone: set[str] = set()
        self.turns = TurnEndpoints(self)
        self.stopping = False
        self.assets = AssetStore()
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
        self.config.update(self._readings)
        self.requests, self.live, self.gone = [], {}, set()
        self.assets = AssetStore()
        self.accounts.reset()

    def expire_assets(self) -> None:
        """Every asset uploaded so far is gone (expired on conol): naming one answers
        ``config.unknown_asset_status``."""
        self.assets.assets.clear()

    def expire_sessions(self) -> None:
        """Every session so far is gone (conol dropped them): their streams end, turns on them fail."""
        for sid, live in list(self.live.items()):
            live.kill("reset")
            self.gone.add(sid)
            del self.live[sid]

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

    def configure(self, changes: dict[str, Any]) -> None:
        changes = dict(changes)
        default = changes.pop("default_scenario", None)
        if default is not None and default not in self.scenarios:
            raise ValueError(f"unknown scenario {default!r}")
        self.config.update(changes)
        if default is not None:
            self.default_scenario = default

    def shutdown(self) -> None:
        self.stopping = True
        for live in self.live.values():
            live.kill("shutdown")

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        api = self._api
        app.router.add_get("/api/auth/get-session", api(self._get_session))
        app.router.add_get("/api/billing/balance", api(self._balance))
        app.router.add_post("/api/assets", api(self._upload))
        app.router.add_get("/api/agent-servers", api(self._agent_servers))
        app.router.add_post("/api/sessions", api(self._create))
        app.router.add_get("/api/sessions/{id}", api(self._status))
        app.router.add_get("/api/sessions/{id}/messages", api(self._messages))
        self.turns.add_routes(app.router, api)
        app.router.add_route("*", "/api/{tail:.*}", api(self._not_found))
        ControlEndpoints(self).add_routes(app.router)
        return app

    # ------------------------------------------------------------------------------- auth + records
    def _api(self, handler: ApiHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def wrapped(request: web.Request) -> web.StreamResponse:
            record = await self._record(request)
            response = (
                error_response(401, "Unauthorized")
                if not record.authorized
                else await handler(request, record)
            )
            record.status = response.status
            return response

        return wrapped

    async def _record(self, request: web.Request) -> RequestRecord:
        cookie = request.cookies.get(COOKIE_NAME)
        account = self.accounts.find(cookie)
        record = RequestRecord(
            time=time.time(),
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={h: request.headers[h] for h in RECORDED_HEADERS if h in request.headers},
            cookie_present=cookie is not None,
            authorized=account is not None and not self.config.revoke_token,
            account=account.name if account is not None else None,
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
        mode = self.config.auth
        if mode == "dead_401":
            return error_response(401, "Not authenticated")
        if mode == "dead_200":
            return json_response({})
        if mode == "rate_limited":
            return error_response(429, "Too many requests", {"Retry-After": "3"})
        if mode == "checkpoint":
            return web.Response(text=CHECKPOINT_PAGE, content_type="text/html")
        return json_response(
            self.config.drifts.auth(
                {
                    "session": {"id": "ses_fake", "userId": "usr_fake", "expiresAt": _iso(now + 30 * 86400)},
                    "user": {"id": "usr_fake", "name": "Fake User", "email": "fake@conol.invalid"},
                }
            )
        )

    async def _balance(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        body = self.accounts.get(record.account).balance_body(self.config.balance, time.time())
        return json_response(self.config.drifts.balance(body))

    async def _upload(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        record.body, record.body_error = None, None  # image bytes, not a JSON body
        response = await self.assets.upload(request, record, self.config)
        if 200 <= response.status < 300:
            self.accounts.get(record.account).uploads += 1
        return response

    async def _agent_servers(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        return agent_servers_response(self.config)

    async def _not_found(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        return error_response(404, "Not found")

    async def _create(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        fault = create_fault(self.config)
        if fault is not None:
            return fault
        gone = unknown_asset(record.body, self.assets.known)
        if gone is not None:
            return error_response(self.config.unknown_asset_status, gone)
        problem = record.body_error or create_body_problem(record.body, self.assets.known)
        if problem is not None:
            return error_response(400, problem)
        body: dict[str, Any] = record.body
        if not body["messages"]:
            return self.turns.create_empty(record, body)
        messages = [part["content"] for part in body["messages"] if part["type"] == "text"]
        name, params = find_marker(messages) or (self.default_scenario, {})
        scenario = self.scenarios.get(name)
        if scenario is None:
            return error_response(
                400, f"unknown fake scenario {name!r}; known: {', '.join(sorted(self.scenarios))}"
            )
        record.scenario = name
        account = self.accounts.get(record.account)
        zero = self.config.balance == "zero"  # whatever was asked: the account cannot run it
        if (zero or 200 <= scenario.create_status < 300) and not account.pay_turn(time.time(), empty=zero):
            scenario = NO_CREDITS
        if not 200 <= scenario.create_status < 300:
            return scenario_failure(scenario)
        ctx = ScenarioContext(
            messages=tuple(messages),
            images=tuple(self.assets.digests(body["messages"])),
            params=params,
            tools=tuple(t["name"] for t in body.get("tools", [])),
            model=body["agentModel"],
            effort=body["agentEffort"],
            timezone=body.get("timezone"),
        )
        try:
            script = scenario.script(ctx)
        except ScenarioError as exc:
            return error_response(400, f"scenario {name!r}: {exc}")
        effective, answer = self.turns.created_answer(ctx.model, scenario.downgrade)
        if scenario.id_key is not None:
            live = self._start_session(scenario, ctx, script, effective, account)
            record.session_id = live.record.id
            answer.update(id_fields(scenario.id_key, live.record.id))
        if isinstance(scenario.create_body, Mapping):
            answer.update(scenario.create_body)
        answer = self.config.drifts.created(answer)
        return json_response(answer, scenario.create_status, scenario.create_headers)

    def _start_session(
        self,
        scenario: Scenario,
        ctx: ScenarioContext,
        script: list[Step],
        effective: str,
        account: FakeAccount,
    ) -> LiveSession:
        now, account.sessions = time.time(), account.sessions + 1
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
            images=list(ctx.images),
            expected=expected_from_steps(script, http_status=scenario.create_status),
            status=scenario.initial_status,
            account=account.name,
        )
        record.status_history.append((now, scenario.initial_status))
        config = self.config
        user_text = user_turn_text(list(ctx.messages), ctx.timezone, now, config.user_log_time == "stamped")
        usage = None
        if config.context_usage:
            usage = UsageReport(model_id=config.context_model or effective)
        script = shaped(script, config, follow_up=False)
        live = LiveSession(record, scenario, script, user_text, drift=config.drifts, usage=usage)
        live.late = late_events(config)
        self.live[record.id] = live
        live.start()
        return live

    async def _status(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        live = self.live.get(request.match_info["id"])
        if live is None:
            return error_response(404, "Session not found")
        record.session_id = session_id = live.record.id
        live.record.status_poll_times.append(time.time())
        failure = self._status_failure(live)
        if failure is not None:
            return error_response(failure, "Internal Server Error")
        rec = live.record
        return json_response(
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
            return error_response(404, "Session not found")
        record.session_id = live.record.id
        if self.config.refuse_streams:
            return error_response(self.config.refuse_stream_status, "stream refused (injected)")
        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": CONTENT_TYPES[self.config.framing],
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
        await self._follow(response, live, conn, 0 if self.config.followup_replay else live.turn_start)
        return response

    async def _follow(
        self, response: web.StreamResponse, live: LiveSession, conn: ConnectionRecord, first: int
    ) -> None:
        """Stream until the client leaves (the handler task is cancelled), the scenario closes, or reset."""
        closed_by = "shutdown"
        try:
            closed_by = await pump(response, live, conn, self.config, first)
            await response.write_eof()  # a clean end of the chunked body: the client sees the stream end
        except asyncio.CancelledError:
            # aiohttp cancels the handler when the peer disconnects (handler_cancellation=True)
            closed_by = "shutdown" if self.stopping else "client"
            raise
        except ConnectionError:
            closed_by = "client"
        finally:
            conn.closed_at, conn.closed_by = time.time(), closed_by
