"""``litellm-conol doctor``: does conol still speak the protocol this package was written for?

conol's web API is not a published API; it changes without notice. Each check exercises one thing
the provider relies on, with the provider's own transport and driver (a real session, exactly as a
chat request runs it), and judges the shapes conol sent back, so a failure names what moved:

token, balance, assets and discovery (``_doctor_caps``), create, stream (``history_delta`` events),
previews (message snapshots), status (polling reaches a terminal word), tool_call (a trivial client
tool comes back as a call), one line per capability other clients report (contextUsage, framing)
and one ``model <id>`` check per catalog model (does conol downgrade it for this account?). The
capability lines (assets, discovery, contextUsage, framing) are PASS, FAIL or ABSENT.

The capability, session, tool and model checks run concurrently under one budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx

from ..client.driver import SessionRun
from ..client.recording import RecordingTransport
from ..client.transport import Transport
from ..core.answer.assembler import Assembler
from ..core.errors import ConolError, UpstreamError
from ..core.models.catalog import CatalogModel
from ..core.protocol.end_policy import TERMINAL_STATUSES
from ..core.protocol.endpoint import Endpoint
from ..core.protocol.wire import CreateSessionBody, TextPart, ToolSpec
from ._doctor_account import check_balance, check_token
from ._doctor_caps import check_assets, check_discovery
from ._doctor_judge import (
    CAPABILITIES,
    Check,
    data_events,
    judge_context_usage,
    judge_framing,
    judge_previews,
    judge_stream,
)

RUNNING_STATUSES = frozenset({"running", "pending", "queued"})  # docs/protocol.md#end-of-answer
SESSION_PROMPT = "This is a connectivity check. Reply with one short friendly sentence."
TOOL_NAME = "doctor_ping"
TOOL_PROMPT = f"This is a connectivity check. Call the tool {TOOL_NAME} once, now. Do not write any text."
MODEL_PROMPT = "This is a connectivity check. Reply with the single word OK."
STATUS_POLL_EVERY = 0.5
MODEL_CHECKS_AT_ONCE = 4  # each creates a session: stay clear of conol's per-account rate limit
REQUEST_TIMEOUT = 10.0


@dataclass(frozen=True)
class DoctorSettings:
    endpoint: Endpoint
    model: CatalogModel  # the model of the session and tool checks
    models: tuple[CatalogModel, ...] = ()  # one downgrade check each; empty: none
    session_timeout: float = 20.0
    budget: float = 55.0  # the whole run; the issue promises an answer within a minute


@dataclass
class _Clock:
    started: float = field(default_factory=time.monotonic)

    def since(self) -> float:
        return round(time.monotonic() - self.started, 3)


async def run_doctor(settings: DoctorSettings, client: httpx.AsyncClient) -> list[Check]:
    """Every check, in a fixed order; never raises for what conol does (that is a failed check)."""
    deadline = time.monotonic() + settings.budget
    results: dict[str, Check] = {}
    plain = Transport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    token_check, stop = await check_token(plain)
    results["token"] = token_check
    order = ["token", "balance", "assets", "discovery", "create", "stream", "previews", "status", "tool_call"]
    order += CAPABILITIES
    order += [_model_name(m) for m in settings.models]
    if stop is not None:
        return [
            _scrubbed(results.get(name) or Check(name, "skip", stop), settings.endpoint.token)
            for name in order
        ]
    results["balance"] = await _guarded("balance", lambda: check_balance(plain))
    slots = asyncio.Semaphore(MODEL_CHECKS_AT_ONCE)
    work = [
        _put(results, "assets", lambda: check_assets(settings.endpoint, client)),
        _put(results, "discovery", lambda: check_discovery(settings.endpoint, client)),
        _session_checks(settings, client, results, deadline),
        _put(results, "tool_call", lambda: _check_tool_call(settings, client)),
        *(_put(results, _model_name(m), partial(_check_model, plain, m, slots)) for m in settings.models),
    ]
    with contextlib.suppress(TimeoutError):  # what did not finish is reported below
        await asyncio.wait_for(asyncio.gather(*work), timeout=max(0.0, deadline - time.monotonic()))
    late = f"did not finish within the {settings.budget:g} s budget"
    return [
        _scrubbed(results.get(name) or Check(name, "fail", late), settings.endpoint.token) for name in order
    ]


def _model_name(model: CatalogModel) -> str:
    return f"model conol/{model.id}"


def _scrubbed(check: Check, token: str) -> Check:
    if token and token in check.detail:
        check.detail = check.detail.replace(token, "***")
    return check


async def _put(results: dict[str, Check], name: str, make: Callable[[], Awaitable[Check]]) -> None:
    results[name] = await _guarded(name, make)


async def _guarded(name: str, make: Callable[[], Awaitable[Check]]) -> Check:
    """A check that raised is a failed check saying why (ConolError messages never hold the token)."""
    clock = _Clock()
    try:
        return await make()
    except ConolError as exc:
        return Check(name, "fail", exc.message, clock.since())
    except Exception as exc:  # a diagnostic reports, it does not crash
        return Check(name, "fail", f"{type(exc).__name__}: {exc}", clock.since())


def _keys(value: Any) -> str:
    if isinstance(value, dict):
        return "keys: " + (", ".join(sorted(map(str, value))[:12]) or "none")
    return f"a JSON {type(value).__name__}" if value is not None else "not JSON"


# --- one session: create, stream, previews, status ----------------------------------------------


def _body(model: CatalogModel, prompt: str, tools: list[ToolSpec] | None = None) -> CreateSessionBody:
    return CreateSessionBody(
        messages=[TextPart(content=prompt)], timezone="UTC", agent_model=model.agent_model, tools=tools
    )


async def _session_checks(
    settings: DoctorSettings, client: httpx.AsyncClient, results: dict[str, Check], deadline: float
) -> None:
    transport = RecordingTransport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    run = SessionRun(
        transport, _body(settings.model, SESSION_PROMPT), Assembler(), timeout=settings.session_timeout
    )
    clock = _Clock()
    error: ConolError | None = None
    created_after: float | None = None
    try:
        async for _ in run.pieces():
            if created_after is None:
                created_after = clock.since()
    except ConolError as exc:
        error = exc
    except Exception as exc:  # a diagnostic reports, it does not crash
        error = UpstreamError(f"{type(exc).__name__}: {exc}")
    if run.info is None:
        reason = error.message if error is not None else "no session"
        results["create"] = Check("create", "fail", reason, clock.since())
        for name in ("stream", "previews", "status", *CAPABILITIES):
            results[name] = Check(name, "skip", "no session was created")
        return
    info = run.info
    downgraded = f", downgraded to {info.effective_model}" if info.model_downgraded else ""
    results["create"] = Check("create", "pass", f"session {info.session_id}{downgraded}", created_after)
    events = data_events(transport)
    looked = clock.since()  # a failed stream or previews check is timed by how long it looked
    results["stream"] = judge_stream(events, error, settings.session_timeout, looked)
    results["previews"] = judge_previews(events, run.assembler, looked, error)
    results["contextUsage"] = judge_context_usage(events, run.assembler, settings.model.agent_model, looked)
    results["framing"] = judge_framing(transport.lines(), looked)
    results["status"] = await _guarded(
        "status", lambda: _poll_status(transport, info.session_id, deadline, clock)
    )


async def _poll_status(transport: Transport, session_id: str, deadline: float, clock: _Clock) -> Check:
    """Poll until the status is terminal; timed by ``clock``, the session's (so: when it ended)."""
    polls = 0
    while True:
        polls += 1
        code, body = await transport.get_json(f"/api/sessions/{session_id}", "polling the session status")
        word = body.get("status") if isinstance(body, dict) else None
        if code in (401, 403):
            return Check("status", "fail", f"status poll answered HTTP {code}", clock.since())
        if code == 200 and word is None:
            return Check(
                "status", "fail", f"the status answer has no 'status' field ({_keys(body)})", clock.since()
            )
        if word in TERMINAL_STATUSES:
            return Check("status", "pass", f"{word!r} after {polls} poll(s)", clock.since())
        if word is not None and word not in RUNNING_STATUSES:
            known = (
                ", ".join(sorted(RUNNING_STATUSES)) + "; terminal: " + ", ".join(sorted(TERMINAL_STATUSES))
            )
            return Check("status", "fail", f"unknown status word {word!r} (known: {known})", clock.since())
        if time.monotonic() + STATUS_POLL_EVERY >= deadline:
            last = repr(word) if word is not None else f"HTTP {code}"
            return Check("status", "fail", f"still {last} after {polls} poll(s)", clock.since())
        await asyncio.sleep(STATUS_POLL_EVERY)


# --- a client tool call --------------------------------------------------------------------------


async def _check_tool_call(settings: DoctorSettings, client: httpx.AsyncClient) -> Check:
    transport = RecordingTransport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    tool = ToolSpec(
        name=TOOL_NAME,
        description="Answers 'pong'. Call it whenever the user asks for it.",
        input_schema={"type": "object", "properties": {}},
    )
    run = SessionRun(
        transport,
        _body(settings.model, TOOL_PROMPT, [tool]),
        Assembler(client_tools=frozenset({TOOL_NAME})),
        timeout=settings.session_timeout,
    )
    error: ConolError | None = None
    try:
        async for _ in run.pieces():
            pass  # the run ends itself shortly after a client tool call (tool_call_settle)
    except ConolError as exc:
        if run.info is None:
            raise
        error = exc
    took = transport.entries[-1]["t"] if transport.entries else None
    calls = run.assembler.tool_calls
    if calls:
        return Check("tool_call", "pass", f"{calls[0].name}({calls[0].arguments})", took)
    events = data_events(transport)
    said = run.assembler.final_text
    what = f"answered {said[:60]!r} instead" if said else f"{len(events)} events, none a tool call"
    why = f"; {error.message}" if error is not None else ""
    return Check("tool_call", "fail", f"no call of {TOOL_NAME} ({what}){why}", took)


# --- the catalog ---------------------------------------------------------------------------------


async def check_models(
    endpoint: Endpoint, client: httpx.AsyncClient, models: Iterable[CatalogModel]
) -> list[Check]:
    """``litellm-conol models --check``: one session per model, judged by conol's downgrade flag."""
    transport = Transport(endpoint, client, request_timeout=REQUEST_TIMEOUT)
    slots = asyncio.Semaphore(MODEL_CHECKS_AT_ONCE)
    checks = await asyncio.gather(
        *(_guarded(_model_name(m), partial(_check_model, transport, m, slots)) for m in models)
    )
    return [_scrubbed(check, endpoint.token) for check in checks]


async def _check_model(transport: Transport, model: CatalogModel, slots: asyncio.Semaphore) -> Check:
    name = _model_name(model)
    async with slots:
        clock = _Clock()
        _, result = await transport.create_session(_body(model, MODEL_PROMPT))
        took = clock.since()
    if "model_downgraded" not in result.model_fields_set:
        read = ", ".join(sorted(result.model_dump(by_alias=True, exclude_unset=True))) or "none"
        return Check(
            name, "fail", f"the create answer has no modelDowngraded field (fields read: {read})", took
        )
    if result.model_downgraded:
        return Check(name, "fail", f"downgraded: conol runs {result.effective_model} instead", took)
    return Check(name, "pass", f"runs as {result.effective_model or model.agent_model}", took)


# --- output --------------------------------------------------------------------------------------
