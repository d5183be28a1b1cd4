"""``litellm-conol models --refresh``: the account's models from ``GET /api/agent-servers``, written as
a catalog file (the format ``CONOL_MODELS_EXTRA`` reads), with what changed against the packaged
catalog. The packaged catalog stays the default: the file is used only when named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

from ..client import fetch_agent_servers
from ..core import Catalog, Endpoint, catalog_diff, catalog_json, discovered_catalog, load_catalog


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
