"""``litellm-conol accounts``: every conol deployment of a proxy config with its account's balance
parts, next refill and status (docs/team-deployment.md#several-accounts).

The tokens come from the config as the proxy reads them (``os.environ/NAME``, else
``CONOL_SESSION_TOKEN``) and are never printed: an account is named by where its token comes from
and a short digest, so deployments sharing an account show it. Each account's balance is read once
(``GET /api/billing/balance``: free, no session).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from ..client.pool import shared_client
from ..client.transport import Transport
from ..core.config.options import request_endpoint
from ..core.config.settings_table import SETTINGS
from ..core.errors import ConolError
from ..core.protocol import paths
from ..core.protocol.account import Balance, read_balance
from ..core.protocol.endpoint import Endpoint
from ..reuse.accounts import account_key

ENV_PREFIX = "os.environ/"
DEFAULT_MIN_BALANCE = float(SETTINGS["min_balance"].default)


@dataclass(frozen=True)
class Deployment:
    """One conol deployment of the config: its names, where its token comes from, its floor."""

    model_name: str
    deployment_id: str
    token_source: str
    endpoint: Endpoint | None  # None: no token
    min_balance: float


@dataclass(frozen=True)
class AccountState:
    """What one balance read says: the balance, or why there is none."""

    balance: Balance | None
    problem: str | None = None


def deployments(config: Mapping[str, Any], environ: Mapping[str, str]) -> list[Deployment]:
    """The config's ``conol/…`` deployments, their tokens resolved as the proxy resolves them."""
    found = []
    for number, entry in enumerate(config.get("model_list") or []):
        params = entry.get("litellm_params") or {}
        if not str(params.get("model", "")).startswith("conol/"):
            continue
        source, token = _resolved(params.get("api_key"), environ)
        if token is None:
            source, token = f"${SETTINGS['api_key'].env}", environ.get(str(SETTINGS["api_key"].env))
        _, base = _resolved(params.get("api_base"), environ)
        endpoint = request_endpoint(token, base) if token else None
        info = entry.get("model_info") or {}
        floor = float(params.get("min_balance", DEFAULT_MIN_BALANCE))
        name = str(entry.get("model_name"))
        found.append(Deployment(name, str(info.get("id") or f"#{number}"), source, endpoint, floor))
    return found


def _resolved(value: Any, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(where a value comes from, the value): ``os.environ/NAME`` → ``$NAME`` and its value."""
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        name = value.removeprefix(ENV_PREFIX)
        return f"${name}", environ.get(name) or None
    return ("the config", value) if isinstance(value, str) and value else ("", None)


async def read_account(endpoint: Endpoint) -> AccountState:
    transport = Transport(endpoint, shared_client(), request_timeout=10.0)
    try:
        status, data = await transport.get_json(paths.BALANCE, "reading the balance")
    except ConolError as exc:
        return AccountState(None, exc.message)
    if status in (401, 403):
        return AccountState(None, f"the token is invalid or expired (HTTP {status})")
    balance = read_balance(data) if status == 200 else None
    return AccountState(balance, None if balance else f"no balance (HTTP {status})")


def status_of(state: AccountState, floor: float) -> str:
    balance = state.balance
    if balance is None:
        return f"unknown: {state.problem}"
    if balance.total <= 0:
        return "out of credits: rests until its refill"
    if balance.total < floor:
        return f"low: below min_balance {floor:g} (rests until its refill with balance polling)"
    return "ok"


def rows(found: list[Deployment], states: Mapping[str, AccountState], now: float) -> list[dict[str, Any]]:
    out = []
    for deployment in found:
        key = account_key(deployment.endpoint) if deployment.endpoint else ""
        state = states.get(key, AccountState(None, "no token"))
        balance = state.balance
        refill = balance.next_refill if balance else None
        out.append(
            {
                "model_name": deployment.model_name,
                "deployment": deployment.deployment_id,
                "account": f"{deployment.token_source} ({key[:8]})" if key else deployment.token_source,
                "total": balance.total if balance else None,
                "daily": balance.daily if balance else None,
                "subscription": balance.subscription if balance else None,
                "extra": balance.extra if balance else None,
                "next_refill": _when(refill, now) if refill else None,
                "status": status_of(state, deployment.min_balance),
            }
        )
    return out


def _when(moment: float, now: float) -> str:
    at = dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    hours, seconds = divmod(max(0, int(moment - now)), 3600)
    return f"{at} (in {hours} h {seconds // 60:02d} min)"


def text_report(table: list[dict[str, Any]]) -> str:
    columns = ("model_name", "deployment", "account", "total", "daily", "subscription", "extra")
    lines = []
    for row in table:
        parts = [f"{name}={_cell(row[name])}" for name in columns]
        lines.append("  ".join(parts) + f"  next_refill={_cell(row['next_refill'])}  status={row['status']}")
    return "\n".join(lines) if lines else "no conol deployment in this config"


def _cell(value: Any) -> str:
    return "—" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def accounts_command(config_path: Path, *, as_json: bool = False) -> int:
    """Print every conol deployment's account; 1 when one is out of credits or unreadable."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    found = deployments(config, os.environ)
    endpoints = {account_key(d.endpoint): d.endpoint for d in found if d.endpoint is not None}

    async def read_all() -> dict[str, AccountState]:
        states = await asyncio.gather(*(read_account(endpoint) for endpoint in endpoints.values()))
        return dict(zip(endpoints, states, strict=True))

    table = rows(found, asyncio.run(read_all()), time.time())
    print(json.dumps(table, indent=2) if as_json else text_report(table))
    return 1 if any(not row["status"].startswith(("ok", "low")) for row in table) else 0
