"""The fake's own ``/_fake`` endpoints (not conol's): records, scenarios, the config, reset.

They act on the server's ``FakeState`` from its event loop, like the conol endpoints, and need no auth.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from ._codec import loads
from ._records import FakeConfig, RequestRecord
from ._responses import error_response, json_response
from ._scenarios import Scenario
from ._session import LiveSession


class ControlledState(Protocol):
    """What these endpoints use of the server's ``FakeState`` (the state module registers these
    routes, so naming its class here would make the two modules import each other)."""

    config: FakeConfig
    default_scenario: str
    requests: list[RequestRecord]
    live: dict[str, LiveSession]
    scenarios: dict[str, Scenario]

    def configure(self, changes: dict[str, Any]) -> None: ...

    def reset(self) -> None: ...


class ControlEndpoints:
    def __init__(self, state: ControlledState) -> None:
        self._state = state

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/_fake/config", self._get_config)
        router.add_post("/_fake/config", self._post_config)
        router.add_post("/_fake/reset", self._post_reset)
        router.add_get("/_fake/requests", self._get_requests)
        router.add_get("/_fake/sessions", self._get_sessions)
        router.add_get("/_fake/sessions/{id}", self._get_session_record)
        router.add_get("/_fake/scenarios", self._get_scenarios)

    async def _get_config(self, request: web.Request) -> web.StreamResponse:
        state = self._state
        return json_response({**state.config.to_json(), "default_scenario": state.default_scenario})

    async def _post_config(self, request: web.Request) -> web.StreamResponse:
        try:
            changes = loads(await request.read())
            if not isinstance(changes, dict):
                raise ValueError("config must be a JSON object")
            self._state.configure(changes)
        except ValueError as exc:
            return error_response(400, str(exc))
        return await self._get_config(request)

    async def _post_reset(self, request: web.Request) -> web.StreamResponse:
        self._state.reset()
        return json_response({"ok": True})

    async def _get_requests(self, request: web.Request) -> web.StreamResponse:
        return json_response({"requests": [r.to_json() for r in self._state.requests]})

    async def _get_sessions(self, request: web.Request) -> web.StreamResponse:
        return json_response({"sessions": [live.record.summary() for live in self._state.live.values()]})

    async def _get_session_record(self, request: web.Request) -> web.StreamResponse:
        live = self._state.live.get(request.match_info["id"])
        if live is None:
            return error_response(404, "Session not found")
        return json_response(live.record.to_json(with_data=request.query.get("full") == "1"))

    async def _get_scenarios(self, request: web.Request) -> web.StreamResponse:
        scenarios = [s.summary() for s in self._state.scenarios.values()]
        return json_response({"default": self._state.default_scenario, "scenarios": scenarios})
