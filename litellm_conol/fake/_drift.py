"""Named "drifts": deliberate departures from the spec, to test clients (``litellm-conol doctor``)
against a conol that changed under them. Off by default: the fake stays faithful unless asked.

``fake.configure(drift="status_word,balance_renamed")`` (or ``POST /_fake/config``, or
``--drift`` on the command line) turns some on; each rewrites one thing the server answers and
nothing else, so a test can say which check each one breaks. Records stay faithful: the rewrite
happens on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ._steps import TERMINAL_STATUSES

DRIFTS: dict[str, str] = {
    "auth_wrapped": "GET /api/auth/get-session answers {data: {session, user}} (an extra wrapping object)",
    "balance_renamed": "GET /api/billing/balance answers {balance: N} instead of {total: N}",
    "id_renamed": "the create answer carries the id as session_id instead of sessionId",
    "downgrade_renamed": "the create answer says downgraded instead of modelDowngraded",
    "event_renamed": "history_delta events are typed historyDelta",
    "preview_renamed": "stages carry their snapshots under previews instead of preview",
    "tool_renamed": "tool calls are logged as {type: tool_use, tool: NAME, args: {..}}",
    "status_word": "terminal statuses are reported as 'finished' (a word the spec does not list)",
    "status_wrapped": "GET /api/sessions/<id> answers {session: {status, ..}} (an extra wrapping object)",
    "asset_renamed": "POST /api/assets answers {assetId, url, mediaType} instead of {id, url, mediaType}",
    "agent_servers_renamed": "GET /api/agent-servers answers {agentList: [..]} (a key no reader knows)",
}
DRIFTED_TERMINAL = "finished"


def parse_drifts(value: str | None) -> frozenset[str]:
    """``"a,b"`` → ``{"a", "b"}``; ValueError naming an unknown drift and the known ones."""
    names = frozenset(name.strip() for name in (value or "").split(",") if name.strip())
    unknown = sorted(names - DRIFTS.keys())
    if unknown:
        raise ValueError(f"unknown drift {', '.join(unknown)}; known: {', '.join(DRIFTS)}")
    return names


class Drift:
    """The rewrites of the drifts that are on; each method returns its input unchanged when off."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names = frozenset(names)

    def __bool__(self) -> bool:
        return bool(self.names)

    def auth(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"data": body} if "auth_wrapped" in self.names else body

    def balance(self, body: dict[str, Any]) -> dict[str, Any]:
        if "balance_renamed" in self.names:
            return {("balance" if k == "total" else k): v for k, v in body.items()}
        return body

    def asset(self, body: dict[str, Any]) -> dict[str, Any]:
        if "asset_renamed" in self.names:
            return {("assetId" if k == "id" else k): v for k, v in body.items()}
        return body

    def agent_servers(self, body: Any) -> Any:
        if "agent_servers_renamed" in self.names:
            return {"agentList": body if isinstance(body, list) else [body]}
        return body

    def created(self, body: dict[str, Any]) -> dict[str, Any]:
        renames = {}
        if "id_renamed" in self.names:
            renames["sessionId"] = "session_id"
        if "downgrade_renamed" in self.names:
            renames["modelDowngraded"] = "downgraded"
        return {renames.get(k, k): v for k, v in body.items()}

    def status(self, body: dict[str, Any]) -> dict[str, Any]:
        if "status_word" in self.names and body.get("status") in TERMINAL_STATUSES:
            body = {**body, "status": DRIFTED_TERMINAL}
        if "status_wrapped" in self.names:
            body = {"session": body}
        return body

    def event(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A ``history_delta`` payload as the drifted server sends it."""
        if not self.names & {"event_renamed", "preview_renamed", "tool_renamed"}:
            return payload
        payload = json.loads(json.dumps(payload))  # a deep copy: the session's state stays faithful
        if "event_renamed" in self.names:
            payload["type"] = "historyDelta"
        for stage in payload.get("stages", []):
            if "preview_renamed" in self.names and "preview" in stage:
                stage["previews"] = stage.pop("preview")
            if "tool_renamed" in self.names:
                stage["logs"] = [_drifted_tool_log(log) for log in stage.get("logs", [])]
        return payload


def _drifted_tool_log(log: dict[str, Any]) -> dict[str, Any]:
    if log.get("type") != "tool_call" or not isinstance(log.get("content"), list):
        return log
    uses = [
        {"type": "tool_use", "tool": use.get("name"), "args": use.get("input")}
        for use in log["content"]
        if isinstance(use, dict)
    ]
    return {**log, "type": "tool_use", "content": uses}
