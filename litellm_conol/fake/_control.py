"""The fake's own ``/_fake`` endpoints (not conol's): records, scenarios, the config, reset.

They act on the server's ``FakeState`` from its event loop, like the conol endpoints, and need no auth.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from aiohttp import web

from ._account import Accounts
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
    accounts: Accounts

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
        router.add_get("/_fake/accounts", self._get_accounts)
        router.add_post("/_fake/accounts", self._post_account)

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

    async def _get_accounts(self, request: web.Request) -> web.StreamResponse:
        accounts = self._state.accounts.by_name.values()
        return json_response({"accounts": [account.to_json() for account in accounts]})

    async def _post_account(self, request: web.Request) -> web.StreamResponse:
        """``{"name", "token"?, <balance keys>}``: a new account (its token made up when not given),
        or an existing one's balance changed."""
        try:
            body = loads(await request.read())
            if not isinstance(body, dict) or not isinstance(body.get("name"), str):
                raise ValueError("an account must be a JSON object with a name")
            name, token = body.pop("name"), body.pop("token", None)
            accounts = self._state.accounts
            if name in accounts.by_name and token is None:
                account = accounts.get(name)
                account.update(body, time.time())
            else:
                account = accounts.add(name, str(token or f"fake-conol-token-{name}"), body)
        except ValueError as exc:
            return error_response(400, str(exc))
        return json_response(account.to_json())
