"""``litellm-conol models --refresh``: the account's models from ``GET /api/agent-servers``, written as
a catalog file (the format ``CONOL_MODELS_EXTRA`` reads), with what changed against the packaged
catalog. The packaged catalog stays the default: the file is used only when named. Also
``models --check`` (does conol run each catalog model as asked?)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from ..client.discovery import fetch_agent_servers
from ..client.pool import shared_client
from ..core.errors import ConolError
from ..core.models.catalog import Catalog, CatalogModel, load_catalog
from ..core.models.discovery import catalog_diff, catalog_json, discovered_catalog
from ..core.protocol.endpoint import Endpoint
from .doctor import Check, check_models


@dataclass(frozen=True)
class Refreshed:
    catalog: Catalog | None  # None: conol has no agent-servers endpoint (404)
    changes: list[str]


async def refresh_catalog(endpoint: Endpoint, client: httpx.AsyncClient, out: Path) -> Refreshed:
    """Fetch, write ``out`` (only when conol answered a list), and say what changed."""
    found = await fetch_agent_servers(endpoint, client)
    if found is None:
        return Refreshed(None, [])
    packaged = load_catalog()
    catalog = discovered_catalog(found, packaged)
    out.write_text(catalog_json(catalog), encoding="utf-8")
    return Refreshed(catalog, catalog_diff(packaged, catalog))


def refresh_command(endpoint: Endpoint, out: Path) -> int:
    """``models --refresh``: write the file, print what changed; the exit status."""

    async def run() -> Refreshed:
        return await refresh_catalog(endpoint, shared_client(), out)  # the client of this loop

    try:
        refreshed = asyncio.run(run())
    except ConolError as exc:
        print(f"litellm-conol models --refresh: {exc.message}", file=sys.stderr)
        return 1
    if refreshed.catalog is None:
        print("conol offers no model list here (GET /api/agent-servers: 404); the packaged catalog stays")
        return 1
    for line in refreshed.changes or ["no change against the packaged catalog"]:
        print(line)
    count = len(refreshed.catalog.models)
    print(f"wrote {count} models to {out}; use them with CONOL_MODELS_EXTRA={out}", flush=True)
    return 0


def check_command(endpoint: Endpoint, models: Sequence[CatalogModel]) -> int:
    """``models --check``: one line per model, whether conol runs it as asked; the exit status."""

    async def run() -> list[Check]:
        return await check_models(endpoint, shared_client(), list(models))

    checks = asyncio.run(run())
    for model, check in zip(models, checks, strict=True):
        verdict = "works" if check.outcome == "pass" else f"FAILS: {check.detail}"
        print(f"conol/{model.id:<24} agentModel={model.agent_model:<32} {verdict}", flush=True)
    return 1 if any(check.failed for check in checks) else 0
