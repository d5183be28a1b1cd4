"""``doctor``'s capability lines: what conol offers beyond the session itself, each PASS (offered and
read), FAIL (offered but not as expected) or ABSENT (this conol does not offer it; the provider falls
back to its own reading).

``assets`` (image upload, docs/protocol.md#assets) and ``discovery`` (the agent-servers list,
docs/protocol.md#discovery) are asked for directly; neither starts a session, and the upload stores
one 1×1 PNG on the account. ``contextUsage`` and ``framing`` are read from the session check's
events (``SESSION_CAPABILITIES``).
"""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any

import httpx

from ...client.assets import upload_asset
from ...client.discovery import fetch_agent_servers
from ...core.answer.assembler import Assembler
from ...core.errors import ConolError
from ...core.protocol.endpoint import Endpoint
from ...core.protocol.event_fields import reported_model
from .report import Check, Stopwatch

# the capability lines judged from the session check's events, in report order
SESSION_CAPABILITIES = ("contextUsage", "framing")

# the smallest valid PNG: one transparent pixel
PROBE_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def check_assets(endpoint: Endpoint, client: httpx.AsyncClient) -> Check:
    stopwatch = Stopwatch()
    try:
        asset = await upload_asset(endpoint, client, PROBE_PNG, "image/png", timeout=10.0)
    except ConolError as exc:
        took = stopwatch.elapsed()
        if "answered 404" in exc.message:
            return Check("assets", "absent", "POST /api/assets answered 404: images cannot be sent", took)
        return Check("assets", "fail", exc.message, took)
    took = stopwatch.elapsed()
    return Check("assets", "pass", f"a 1x1 PNG uploaded as {asset.path} ({asset.media_type})", took)


async def check_discovery(endpoint: Endpoint, client: httpx.AsyncClient) -> Check:
    stopwatch = Stopwatch()
    try:
        found = await fetch_agent_servers(endpoint, client)
    except ConolError as exc:
        return Check("discovery", "fail", exc.message, stopwatch.elapsed())
    took = stopwatch.elapsed()
    if found is None:
        return Check("discovery", "absent", "GET /api/agent-servers answered 404: the catalog decides", took)
    if not found.models:
        return Check("discovery", "fail", "GET /api/agent-servers lists no models", took)
    vision = sum(model.supports_vision is True for model in found.models)
    modalities = sum(model.supports_vision is not None for model in found.models)
    ladders = sum(model.efforts is not None for model in found.models)
    detail = (
        f"{len(found.models)} models; image input known for {modalities} ({vision} take images); "
        f"effort ladders for {ladders}"
    )
    return Check("discovery", "pass", detail, took)


def judge_context_usage(
    events: list[tuple[float, Any]], assembler: Assembler, requested: str, looked: float
) -> Check:
    """Did events carry ``contextUsage`` (real usage, and the model that ran)?"""
    carried = [(t, p["contextUsage"]) for t, p in events if isinstance(p, dict) and "contextUsage" in p]
    usage = assembler.context_usage
    if usage is None:
        if carried:
            detail = f"on {len(carried)} event(s) but unreadable (first: {_shape(carried[0][1])})"
            return Check("contextUsage", "fail", detail, carried[0][0])
        return Check("contextUsage", "absent", "no event carried it: usage is estimated", looked)
    detail = f"usedTokens {usage.used_tokens}, contextWindow {usage.context_window}, modelId {usage.model_id}"
    _, other = reported_model(requested, usage)
    if other:
        detail += f" (not {requested}: conol ran another model)"
    return Check("contextUsage", "pass", detail, carried[0][0] if carried else looked)


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "an object with keys " + (", ".join(sorted(map(str, value))[:8]) or "none")
    return f"a JSON {type(value).__name__}"


def judge_framing(lines: list[str], looked: float) -> Check:
    """Which of the three framings the event stream used (the provider reads all three)."""
    seen = Counter(kind for line in lines if (kind := _framing(line)) is not None)
    if not seen:
        other = f"{len(lines)} other line(s)" if lines else "no line at all"
        return Check("framing", "fail", f"no event line in any framing ({other})", looked)
    return Check("framing", "pass", ", ".join(f"{kind} x{n}" for kind, n in seen.most_common()), looked)


def _framing(line: str) -> str | None:
    if line.startswith("data:"):
        return "SSE data: lines"
    if line.startswith("message\t"):
        return "message<TAB> lines"
    return "bare JSON lines (NDJSON)" if line[:1] in ("{", "[") else None
