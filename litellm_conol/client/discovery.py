"""Model discovery over HTTP: ``GET /api/agent-servers``, and the run-time cache a deployment with
``discovery: startup | interval`` reads.

The cache is read on the request path and never waited for there: a request takes what is cached
(nothing at first: the catalog decides), and a refresh that is due runs as a background task. A
failed refresh keeps what was known before (failing open to the packaged catalog) and is logged
by its error's message, which never holds the token; the servers' ``apiKey`` is dropped by the
parser and so is in nothing kept, logged or returned.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field

import httpx

from ..core.errors import ConolError, UpstreamError
from ..core.models.discovery import (
    DEFAULT_DISCOVERY_INTERVAL,
    Discovered,
    DiscoveryUnreadable,
    parse_agent_servers,
)
from ..core.protocol import paths
from ..core.protocol.endpoint import Endpoint
from .http_errors import error_for_response, error_for_transport

logger = logging.getLogger("litellm_conol.discovery")
RETRY_AFTER_FAILURE = 300.0  # seconds before a failed refresh is tried again


async def fetch_agent_servers(
    endpoint: Endpoint, client: httpx.AsyncClient, timeout: float = 10.0
) -> Discovered | None:
    """What the account's agent servers offer; ``None`` when conol has no such endpoint (404)."""
    doing = "listing the agent servers"
    origin = endpoint.url("").rstrip("/")
    headers = endpoint.headers() | {"Accept": "application/json", "Referer": origin + "/home"}
    try:
        response = await client.get(endpoint.url(paths.AGENT_SERVERS), headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise error_for_transport(exc, doing, secrets=(endpoint.token,)) from None
    if response.status_code == 404:
        return None
    if not response.is_success:
        # classified by status and headers only: the body of a failed answer might quote a server's apiKey
        bare = httpx.Response(response.status_code, headers=response.headers, request=response.request)
        raise error_for_response(bare, doing, secrets=(endpoint.token,))
    try:
        return parse_agent_servers(json.loads(response.content))
    except ValueError as exc:  # not JSON, or DiscoveryUnreadable (names the shape, never values)
        why = str(exc) if isinstance(exc, DiscoveryUnreadable) else "the answer is not JSON"
        raise UpstreamError(f"conol's agent-servers answer is unreadable: {why}") from None


@dataclass
class _Entry:
    discovered: Discovered | None = None
    next_due: float = 0.0
    task: asyncio.Task[None] | None = None


@dataclass
class DiscoveryCache:
    """The latest discovery per (conol, account), refreshed in the background when due."""

    _entries: dict[tuple[str, str], _Entry] = field(default_factory=dict)

    def current(
        self,
        endpoint: Endpoint,
        client: httpx.AsyncClient,
        mode: str,
        interval: float = DEFAULT_DISCOVERY_INTERVAL,
    ) -> Discovered | None:
        """What is known now (``None``: nothing yet, or ``off``); starts a due refresh, never waits."""
        if mode == "off":
            return None
        entry = self._entries.setdefault(_key(endpoint), _Entry())
        task = entry.task
        # a task of another (closed) loop never finishes: it does not count as running
        running = task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()
        now = time.monotonic()
        first = entry.next_due == 0.0
        if not running and (first or (mode == "interval" and now >= entry.next_due)):
            entry.next_due = now + interval  # no second refresh is started while this one is due
            entry.task = asyncio.ensure_future(self._refresh(entry, endpoint, client, interval))
        return entry.discovered

    async def _refresh(
        self, entry: _Entry, endpoint: Endpoint, client: httpx.AsyncClient, interval: float
    ) -> None:
        try:
            found = await fetch_agent_servers(endpoint, client)
        except ConolError as exc:
            entry.next_due = time.monotonic() + min(interval, RETRY_AFTER_FAILURE)
            logger.warning("conol model discovery failed (the catalog decides meanwhile): %s", exc.message)
            return
        except Exception as exc:  # a background task must not die noisily; the catalog decides
            logger.warning("conol model discovery failed: %s", type(exc).__name__)
            return
        if found is None:
            logger.info("conol offers no /api/agent-servers here: the catalog decides")
        entry.discovered = found

    async def settle(self) -> None:
        """Wait for refreshes in flight (tests, shutdown)."""
        tasks = [e.task for e in self._entries.values() if e.task is not None and not e.task.done()]
        if tasks:
            await asyncio.wait(tasks)

    def clear(self) -> None:
        self._entries.clear()


def _key(endpoint: Endpoint) -> tuple[str, str]:
    return endpoint.base_url.rstrip("/"), hashlib.sha256(endpoint.token.encode()).hexdigest()[:32]


discovery_cache = DiscoveryCache()
