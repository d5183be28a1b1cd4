"""``doctor``'s capability lines for what conol offers beyond text (docs/protocol.md#assets, #discovery):
``assets`` (image upload) and ``discovery`` (the agent-servers list). Each is PASS (offered and read), ABSENT
(404: this conol does not offer it; the provider falls back) or FAIL (offered but not as expected). Neither
starts a session; the upload stores one 1×1 PNG on the account.
"""

from __future__ import annotations

import base64
import time

import httpx

from ..client.assets import upload_asset
from ..client.discovery import fetch_agent_servers
from ..core.errors import ConolError
from ..core.protocol.endpoint import Endpoint
from ._doctor_judge import Check

# the smallest valid PNG: one transparent pixel
PROBE_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def check_assets(endpoint: Endpoint, client: httpx.AsyncClient) -> Check:
    started = time.monotonic()
    try:
        asset = await upload_asset(endpoint, client, PROBE_PNG, "image/png", timeout=10.0)
    except ConolError as exc:
        took = round(time.monotonic() - started, 3)
        if "answered 404" in exc.message:
            return Check("assets", "absent", "POST /api/assets answered 404: images cannot be sent", took)
        return Check("assets", "fail", exc.message, took)
    took = round(time.monotonic() - started, 3)
    return Check("assets", "pass", f"a 1x1 PNG uploaded as {asset.path} ({asset.media_type})", took)


async def check_discovery(endpoint: Endpoint, client: httpx.AsyncClient) -> Check:
    started = time.monotonic()
    try:
        found = await fetch_agent_servers(endpoint, client)
    except ConolError as exc:
        return Check("discovery", "fail", exc.message, round(time.monotonic() - started, 3))
    took = round(time.monotonic() - started, 3)
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
