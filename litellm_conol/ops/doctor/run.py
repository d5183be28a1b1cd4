"""``run_doctor``: every check of ``litellm-conol doctor`` in a fixed order, under one budget.

The token check runs first: a dead token or an unreachable conol skips the rest. Then the balance;
then, concurrently, the capability, session, tool and model checks. A check that did not finish
within the budget fails saying so; none raises for what conol does.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from functools import partial

import httpx

from ...client.transport import Transport
from .account import check_balance, check_token
from .capabilities import SESSION_CAPABILITIES, check_assets, check_discovery
from .models import MODEL_CHECKS_AT_ONCE, check_model, model_check_name
from .report import Check, guarded, scrubbed
from .session import check_tool_call, session_checks
from .settings import REQUEST_TIMEOUT, DoctorSettings

SESSION_CHECKS = ("create", "stream", "previews", "status", "tool_call")


async def run_doctor(settings: DoctorSettings, client: httpx.AsyncClient) -> list[Check]:
    """Every check, in a fixed order; never raises for what conol does (that is a failed check)."""
    deadline = time.monotonic() + settings.budget
    results: dict[str, Check] = {}
    plain = Transport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    token_check, stop = await check_token(plain)
    results["token"] = token_check
    order = ["token", "balance", "assets", "discovery", *SESSION_CHECKS, *SESSION_CAPABILITIES]
    order += [model_check_name(m) for m in settings.models]
    if stop is not None:
        return [
            scrubbed(results.get(name) or Check(name, "skip", stop), settings.endpoint.token)
            for name in order
        ]
    results["balance"] = await guarded("balance", lambda: check_balance(plain))
    slots = asyncio.Semaphore(MODEL_CHECKS_AT_ONCE)
    work = [
        _put(results, "assets", lambda: check_assets(settings.endpoint, client)),
        _put(results, "discovery", lambda: check_discovery(settings.endpoint, client)),
        session_checks(settings, client, results, deadline),
        _put(results, "tool_call", lambda: check_tool_call(settings, client)),
        *(_put(results, model_check_name(m), partial(check_model, plain, m, slots)) for m in settings.models),
    ]
    with contextlib.suppress(TimeoutError):  # what did not finish is reported below
        await asyncio.wait_for(asyncio.gather(*work), timeout=max(0.0, deadline - time.monotonic()))
    late = f"did not finish within the {settings.budget:g} s budget"
    return [
        scrubbed(results.get(name) or Check(name, "fail", late), settings.endpoint.token) for name in order
    ]


async def _put(results: dict[str, Check], name: str, make: Callable[[], Awaitable[Check]]) -> None:
    results[name] = await guarded(name, make)
