"""JSON responses, shared by conol's ``/api`` endpoints and the fake's ``/_fake`` control endpoints, and
the create answers a fault or a scenario dictates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from ._codec import dumps
from ._records import FakeConfig
from ._scenarios import Scenario


def json_response(data: object, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps(data), status=status, content_type="application/json", headers=headers)


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    """conol's error shape: ``{"error": message}``."""
    return json_response({"error": message}, status, headers)


def create_fault(cfg: FakeConfig) -> web.Response | None:
    """The injected failure of the next create (``create_status``; ``create_fail_times`` counts down)."""
    if cfg.create_status is None:
        return None
    status = cfg.create_status
    if cfg.create_fail_times is not None:
        cfg.create_fail_times -= 1
        if cfg.create_fail_times <= 0:  # that was the last injected failure
            cfg.create_status = cfg.create_fail_times = None
    retry_after = cfg.create_retry_after or ("2" if status == 429 else None)
    headers = {"Retry-After": retry_after} if retry_after else None
    return error_response(status, f"injected failure (HTTP {status})", headers)


def scenario_failure(scenario: Scenario) -> web.Response:
    """A scenario's own create answer (a status and a body: JSON, or a page)."""
    if isinstance(scenario.create_body, str):
        return web.Response(
            text=scenario.create_body,
            status=scenario.create_status,
            content_type="text/html",
            headers=scenario.create_headers,
        )
    return json_response(
        scenario.create_body or {"error": "error"}, scenario.create_status, scenario.create_headers
    )


def id_fields(key: str, session_id: str) -> dict[str, Any]:
    return {"session": {"id": session_id}} if key == "session.id" else {key: session_id}
