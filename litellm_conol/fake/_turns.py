"""Turns on an existing session and pinning its model (docs/protocol.md#follow-up-turns, #model-pinning), with
a switch for each reading left open (docs/protocol.md#readings) (``FakeConfig``: ``create_model``,
``followup_*``, ``gone_status``).

* An empty create (``messages: []``) makes a session that runs nothing (status ``idle``) until a turn
  is posted.
* ``POST /api/sessions/{id}/messages`` ``{messages, timezone}`` → 202, no body. The turn's scenario
  sees the session's whole transcript (earlier turns' messages, then the new ones); its events are
  appended to the same timeline, so a stream opened now replays the earlier turns first (unless
  ``followup_replay`` is off), each ending as ``followup_replayed_end`` says. Its stages are new
  stages with fresh ids (``followup_stage="new"``) or the previous turn's stages, its logs after
  theirs (``"same"``). The previous turn's status stays for ``followup_status_lag`` seconds while
  the new turn's events already flow. A turn posted while the previous one still plays waits for it.
* A session whose turn failed (an ``error`` event, status ``failed``) takes the next turn as any
  other: the replay then carries the failed turn's own ``error``.
* ``POST /api/sessions/{id}/model``: ``{"modelPreset", "hasImageHistory"}``, ``{"agentModel",
  "agentEffort": null}`` (resets the effort), ``{"agentEffort"}`` → 200 ``{"ok": true}``; a model
  outside the fake's catalog → 200 ``{"ok": false}`` (the fake's own choice: no source shows it).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from aiohttp import web

from ._account import NO_CREDITS, Accounts
from ._assets import AssetStore
from ._catalog import DOWNGRADE_MODEL
from ._expected import expected_from_steps
from ._records import FakeConfig, RequestRecord, SessionRecord
from ._responses import error_response, json_response
from ._scenarios import Scenario, ScenarioContext, ScenarioError, find_marker
from ._session import LiveSession, TurnReadings, UsageReport, user_turn_text
from ._steps import LateEvents, Step, with_first_token_delay, without_stages
from ._validate import EFFORTS, turn_messages_problem, unknown_asset

ApiHandler = Callable[[web.Request, RequestRecord], Awaitable[web.StreamResponse]]


class TurnState(Protocol):
    """What these endpoints use of the server's state (not ``FakeState`` itself: no import cycle)."""

    config: FakeConfig
    live: dict[str, LiveSession]
    scenarios: dict[str, Scenario]
    default_scenario: str
    known_models: frozenset[str]
    gone: set[str]
    assets: AssetStore
    accounts: Accounts


def shaped(script: list[Step], config: FakeConfig, follow_up: bool) -> list[Step]:
    """A turn's script as the server's readings play it: without stages (``stageless_turns``), and
    with the model's pause before its first event (``first_token_delay``)."""
    if config.stageless_turns == "all" or (follow_up and config.stageless_turns == "follow-ups"):
        script = without_stages(script)
    return with_first_token_delay(script, config.first_token_delay)


def late_events(config: FakeConfig) -> LateEvents:
    return LateEvents(config.late_events, config.late_after)


class TurnEndpoints:
    def __init__(self, state: TurnState) -> None:
        self.state = state

    def add_routes(self, router: web.UrlDispatcher, api: Callable[[ApiHandler], Any]) -> None:
        router.add_post("/api/sessions/{id}/messages", api(self._turn))
        router.add_post("/api/sessions/{id}/model", api(self._model))

    def created_answer(self, model: str, downgrade: bool) -> tuple[str, dict[str, Any]]:
        """The model a create runs, and its answer's model keys, per ``create_model``."""
        downgraded = (
            downgrade or model not in self.state.known_models or self.state.config.create_model == "ignore"
        )
        effective = DOWNGRADE_MODEL if downgraded else model
        return effective, {
            "modelDowngraded": downgraded,
            "effectiveModel": effective,
            "premiumEligible": True,
        }

    def create_empty(self, record: RequestRecord, body: Mapping[str, Any]) -> web.StreamResponse:
        state = self.state
        scenario = state.scenarios[state.default_scenario]
        effective, answer = self.created_answer(body["agentModel"], False)
        account = state.accounts.get(record.account)
        account.sessions += 1
        now = time.time()
        session = SessionRecord(
            id=str(uuid.uuid4()),
            created_at=now,
            scenario=scenario.name,
            params={},
            model=body["agentModel"],
            effective_model=effective,
            downgraded=effective != body["agentModel"],
            effort=body["agentEffort"],
            timezone=body.get("timezone"),
            tools=[t["name"] for t in body.get("tools", [])],
            messages=[],
            expected=expected_from_steps([]),
            status="idle",
            turns=0,
            account=account.name,
        )
        session.status_history.append((now, "idle"))
        usage = self._usage(effective)
        state.live[session.id] = LiveSession(
            session, scenario, [], "", drift=state.config.drifts, usage=usage
        )
        record.session_id = session.id
        return json_response({"sessionId": session.id, **answer}, 201)

    async def _turn(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        state, sid = self.state, request.match_info["id"]
        live = state.live.get(sid)
        refused = state.config.followup_status
        continued = live is None or live.record.turns > 0
        if refused is not None and (state.config.followup_status_scope == "all" or continued):
            return error_response(refused, "Not found")
        if live is None:
            return error_response(state.config.gone_status if sid in state.gone else 404, "Session not found")
        record.session_id = sid
        body = record.body if isinstance(record.body, dict) else {}
        gone = unknown_asset(body, state.assets.known)
        if gone is not None:
            return error_response(state.config.unknown_asset_status, gone)
        problem = record.body_error or turn_messages_problem(body.get("messages"), state.assets.known)
        if problem is not None:
            return error_response(400, problem)
        new = [part["content"] for part in body["messages"] if part["type"] == "text"]
        images = [*live.record.images, *state.assets.digests(body["messages"])]
        transcript = [*live.record.messages, *new]
        name, params = find_marker(transcript) or (live.record.scenario, live.record.params)
        scenario = state.scenarios.get(name)
        if scenario is None:
            return error_response(400, f"unknown fake scenario {name!r}")
        rec = live.record
        account = state.accounts.get(record.account)
        if not account.pay_turn(time.time(), empty=state.config.balance == "zero"):
            scenario = NO_CREDITS
        ctx = ScenarioContext(
            messages=tuple(transcript),
            images=tuple(images),
            params=params,
            tools=tuple(rec.tools),
            model=rec.effective_model,
            effort=rec.effort,
            timezone=body.get("timezone") or rec.timezone,
            turn=rec.turns + 1,
        )
        try:
            script = scenario.script(ctx)
        except ScenarioError as exc:
            return error_response(400, f"scenario {name!r}: {exc}")
        live.record.images = images
        if rec.turns:  # an empty-created session's first turn is no follow-up
            account.followups += 1
        self._start(live, scenario, script, new, params)
        taken = state.config.followup_taken_status
        if taken is not None:  # conol took the turn; the gateway in front of it answered otherwise
            return error_response(taken, "upstream request timeout")
        return web.Response(status=202)

    def _start(
        self,
        live: LiveSession,
        scenario: Scenario,
        script: list[Step],
        new: list[str],
        params: Mapping[str, str],
    ) -> None:
        rec, config, now = live.record, self.state.config, time.time()
        rec.messages += new
        rec.turns += 1
        rec.scenario, rec.params = scenario.name, dict(params)
        rec.expected = expected_from_steps(script, http_status=scenario.create_status)
        live.scenario = scenario
        readings = TurnReadings(
            stage=config.followup_stage,
            replayed_end=config.followup_replayed_end,
            status_lag=config.followup_status_lag if rec.status != "idle" else 0.0,
            garbage=config.followup_garbage,
            previews=config.followup_previews,
        )
        live.late = late_events(config)
        text = user_turn_text(new, rec.timezone, now, stamped=config.user_log_time == "stamped")
        # an empty create's first turn is its session's first: not a follow-up
        live.start_turn(shaped(script, config, rec.turns > 1), text, rec.turns, readings)

    def _usage(self, model: str) -> UsageReport | None:
        """``contextUsage`` for a session running ``model``, when the server reports it."""
        config = self.state.config
        return UsageReport(model_id=config.context_model or model) if config.context_usage else None

    async def _model(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        live = self.state.live.get(request.match_info["id"])
        if live is None:
            return error_response(404, "Session not found")
        body = record.body if isinstance(record.body, dict) else None
        if body is None or not body:
            return error_response(
                400, "body must be a JSON object with modelPreset, agentModel or agentEffort"
            )
        rec = live.record
        record.session_id = rec.id
        rec.model_calls.append(dict(body))
        if "agentModel" in body:
            model = body["agentModel"]
            if not isinstance(model, str) or model not in self.state.known_models:
                return json_response({"ok": False, "error": f"unknown model {model!r}"})
            rec.model = rec.effective_model = model
            rec.downgraded = False
            live.usage = self._usage(model) if live.usage is not None else None
            # the model call resets the effort (docs/protocol.md#model-pinning): the default runs
            rec.effort = "low"
        if body.get("agentEffort") is not None:
            if body["agentEffort"] not in EFFORTS:
                return error_response(400, f"agentEffort must be one of {', '.join(EFFORTS)}")
            rec.effort = body["agentEffort"]
        return json_response({"ok": True})
