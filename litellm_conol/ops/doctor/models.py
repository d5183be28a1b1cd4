"""``doctor``'s ``model <id>`` lines and ``litellm-conol models --check``: one session per catalog
model, judged by conol's downgrade flag (does conol run this model for this account?)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import partial

import httpx

from ...client.transport import Transport
from ...core.models.catalog import CatalogModel
from ...core.protocol.endpoint import Endpoint
from .report import Check, Stopwatch, guarded, scrubbed
from .session import session_body
from .settings import REQUEST_TIMEOUT

MODEL_PROMPT = "This is a connectivity check. Reply with the single word OK."
MODEL_CHECKS_AT_ONCE = 4  # each creates a session: stay clear of conol's per-account rate limit


def model_check_name(model: CatalogModel) -> str:
    return f"model conol/{model.id}"


async def check_models(
    endpoint: Endpoint, client: httpx.AsyncClient, models: Iterable[CatalogModel]
) -> list[Check]:
    """``litellm-conol models --check``: one session per model, judged by conol's downgrade flag."""
    transport = Transport(endpoint, client, request_timeout=REQUEST_TIMEOUT)
    slots = asyncio.Semaphore(MODEL_CHECKS_AT_ONCE)
    checks = await asyncio.gather(
        *(guarded(model_check_name(m), partial(check_model, transport, m, slots)) for m in models)
    )
    return [scrubbed(check, endpoint.token) for check in checks]


async def check_model(transport: Transport, model: CatalogModel, slots: asyncio.Semaphore) -> Check:
    """One model's line; ``slots`` bounds how many of these create sessions at once."""
    name = model_check_name(model)
    async with slots:
        stopwatch = Stopwatch()
        _, result = await transport.create_session(session_body(model, MODEL_PROMPT))
        took = stopwatch.elapsed()
    if "model_downgraded" not in result.model_fields_set:
        read = ", ".join(sorted(result.model_dump(by_alias=True, exclude_unset=True))) or "none"
        return Check(
            name, "fail", f"the create answer has no modelDowngraded field (fields read: {read})", took
        )
    if result.model_downgraded:
        return Check(name, "fail", f"downgraded: conol runs {result.effective_model} instead", took)
    return Check(name, "pass", f"runs as {result.effective_model or model.agent_model}", took)
