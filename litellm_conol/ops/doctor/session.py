"""``doctor``'s session checks: one real session, run by the provider's own transport and driver
exactly as a chat request runs it, judged by what conol sent: ``create``, ``stream``
(``history_delta`` events), ``previews`` (message snapshots), ``status`` (polling reaches a terminal
word), and the capability lines read from its events; then ``tool_call``: a trivial client tool
comes back as a call.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

import httpx

from ...client.driver import SessionRun
from ...client.recording import RecordingTransport
from ...client.transport import Transport
from ...core.answer.assembler import REASONING_TYPES, Assembler
from ...core.errors import ConolError, UpstreamError
from ...core.models.catalog import CatalogModel
from ...core.protocol import paths
from ...core.protocol.account import describe_json_shape
from ...core.protocol.end_policy import TERMINAL_STATUSES
from ...core.protocol.wire import CreateSessionBody, TextPart, ToolSpec
from .capabilities import SESSION_CAPABILITIES, judge_context_usage, judge_framing
from .report import Check, Stopwatch, guarded
from .settings import REQUEST_TIMEOUT, DoctorSettings

RUNNING_STATUSES = frozenset({"running", "pending", "queued"})  # docs/protocol.md#end-of-answer
SESSION_PROMPT = "This is a connectivity check. Reply with one short friendly sentence."
TOOL_NAME = "doctor_ping"
TOOL_PROMPT = f"This is a connectivity check. Call the tool {TOOL_NAME} once, now. Do not write any text."
STATUS_POLL_EVERY = 0.5


def session_body(model: CatalogModel, prompt: str, tools: list[ToolSpec] | None = None) -> CreateSessionBody:
    """The create body of every session the doctor starts: one text part, the model, maybe tools."""
    return CreateSessionBody(
        messages=[TextPart(content=prompt)], timezone="UTC", agent_model=model.agent_model, tools=tools
    )


async def session_checks(
    settings: DoctorSettings, client: httpx.AsyncClient, results: dict[str, Check], deadline: float
) -> None:
    """``create``, ``stream``, ``previews``, ``status`` and the session capability lines, into
    ``results``; when no session was created, the rest are skipped."""
    transport = RecordingTransport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    run = SessionRun(
        transport, session_body(settings.model, SESSION_PROMPT), Assembler(), timeout=settings.session_timeout
    )
    stopwatch = Stopwatch()
    error: ConolError | None = None
    created_after: float | None = None
    try:
        async for _ in run.pieces():
            if created_after is None:
                created_after = stopwatch.elapsed()
    except ConolError as exc:
        error = exc
    except Exception as exc:  # a diagnostic reports, it does not crash
        error = UpstreamError(f"{type(exc).__name__}: {exc}")
    if run.info is None:
        reason = error.message if error is not None else "no session"
        results["create"] = Check("create", "fail", reason, stopwatch.elapsed())
        for name in ("stream", "previews", "status", *SESSION_CAPABILITIES):
            results[name] = Check(name, "skip", "no session was created")
        return
    info = run.info
    downgraded = f", downgraded to {info.effective_model}" if info.model_downgraded else ""
    results["create"] = Check("create", "pass", f"session {info.session_id}{downgraded}", created_after)
    events = data_events(transport)
    looked = stopwatch.elapsed()  # a failed stream or previews check is timed by how long it looked
    results["stream"] = judge_stream(events, error, settings.session_timeout, looked)
    results["previews"] = judge_previews(events, run.assembler, looked, error)
    results["contextUsage"] = judge_context_usage(events, run.assembler, settings.model.agent_model, looked)
    results["framing"] = judge_framing(transport.lines(), looked)
    results["status"] = await guarded(
        "status", lambda: _poll_status(transport, info.session_id, deadline, stopwatch)
    )


async def _poll_status(transport: Transport, session_id: str, deadline: float, stopwatch: Stopwatch) -> Check:
    """Poll until the status is terminal; timed by ``stopwatch``, the session's (so: when it ended)."""
    polls = 0
    while True:
        polls += 1
        code, body = await transport.get_json(paths.session(session_id), "polling the session status")
        word = body.get("status") if isinstance(body, dict) else None
        if code in (401, 403):
            return Check("status", "fail", f"status poll answered HTTP {code}", stopwatch.elapsed())
        if code == 200 and word is None:
            detail = f"the status answer has no 'status' field ({describe_json_shape(body)})"
            return Check("status", "fail", detail, stopwatch.elapsed())
        if word in TERMINAL_STATUSES:
            return Check("status", "pass", f"{word!r} after {polls} poll(s)", stopwatch.elapsed())
        if word is not None and word not in RUNNING_STATUSES:
            known = (
                ", ".join(sorted(RUNNING_STATUSES)) + "; terminal: " + ", ".join(sorted(TERMINAL_STATUSES))
            )
            detail = f"unknown status word {word!r} (known: {known})"
            return Check("status", "fail", detail, stopwatch.elapsed())
        if time.monotonic() + STATUS_POLL_EVERY >= deadline:
            last = repr(word) if word is not None else f"HTTP {code}"
            return Check("status", "fail", f"still {last} after {polls} poll(s)", stopwatch.elapsed())
        await asyncio.sleep(STATUS_POLL_EVERY)


async def check_tool_call(settings: DoctorSettings, client: httpx.AsyncClient) -> Check:
    transport = RecordingTransport(settings.endpoint, client, request_timeout=REQUEST_TIMEOUT)
    tool = ToolSpec(
        name=TOOL_NAME,
        description="Answers 'pong'. Call it whenever the user asks for it.",
        input_schema={"type": "object", "properties": {}},
    )
    run = SessionRun(
        transport,
        session_body(settings.model, TOOL_PROMPT, [tool]),
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
    took = transport.entries[-1]["t"] if transport.entries else None  # when conol last sent something
    calls = run.assembler.tool_calls
    if calls:
        return Check("tool_call", "pass", f"{calls[0].name}({calls[0].arguments})", took)
    events = data_events(transport)
    said = run.assembler.final_text
    what = f"answered {said[:60]!r} instead" if said else f"{len(events)} events, none a tool call"
    why = f"; {error.message}" if error is not None else ""
    return Check("tool_call", "fail", f"no call of {TOOL_NAME} ({what}){why}", took)


# --- judging the recorded events -----------------------------------------------------------------

_PREFIXES = (("data:", 5), ("message\t", 8))


def data_events(transport: RecordingTransport) -> list[tuple[float, Any]]:
    """(arrival time, parsed payload) of every event line, in any of the three framings (``data:``,
    bare JSON, ``message<TAB>``); payloads that are not JSON as text."""
    events: list[tuple[float, Any]] = []
    for entry in transport.entries:
        line = entry.get("line")
        payload = _payload(line) if isinstance(line, str) else None
        if payload is not None:
            try:
                events.append((entry["t"], json.loads(payload)))
            except ValueError:
                events.append((entry["t"], payload.strip()))  # [DONE], or not JSON
    return events


def _payload(line: str) -> str | None:
    for prefix, size in _PREFIXES:
        if line.startswith(prefix):
            return line[size:]
    return line if line[:1] in ("{", "[") else None


def _event_type(payload: Any) -> str:
    if isinstance(payload, dict):
        return str(payload.get("type"))
    if isinstance(payload, str):
        return "[DONE]" if payload == "[DONE]" else "not JSON"
    return f"a JSON {type(payload).__name__}"


def judge_stream(
    events: list[tuple[float, Any]], error: ConolError | None, timeout: float, looked: float
) -> Check:
    deltas = [t for t, payload in events if _event_type(payload) == "history_delta"]
    if deltas:
        return Check("stream", "pass", f"{len(deltas)} history_delta events", deltas[0])
    if not events:
        why = f": {error.message}" if error is not None else ""
        return Check("stream", "fail", f"no event within {timeout:g} s{why}", looked)
    seen = Counter(_event_type(payload) for _, payload in events)
    kinds = ", ".join(f"{kind} x{n}" for kind, n in seen.most_common(6))
    detail = f"no history_delta among {len(events)} events (types seen: {kinds})"
    return Check("stream", "fail", detail, looked)


def judge_previews(
    events: list[tuple[float, Any]], assembler: Assembler, looked: float, error: ConolError | None = None
) -> Check:
    deltas = [(t, p) for t, p in events if _event_type(p) == "history_delta"]
    if not deltas:
        return Check("previews", "skip", "no history_delta events to look in")
    snapshots: list[float] = []
    stage_keys: set[str] = set()
    for t, payload in deltas:
        for stage in _dicts(payload.get("stages")):
            stage_keys.update(map(str, stage))
            snapshots += [t for entry in _dicts(stage.get("preview")) if _is_message_snapshot(entry)]
    if not snapshots:
        keys = ", ".join(sorted(stage_keys)) or "no stages"
        detail = f"no message snapshot under stages[].preview (stage keys seen: {keys})"
        if error is not None:
            detail += f"; {error.message}"  # e.g. the agent failed: "credit balance is too low"
        return Check("previews", "fail", detail, looked)
    answer = assembler.final_text
    if not answer:
        detail = f"{len(snapshots)} message snapshots but no answer text read from them"
        return Check("previews", "fail", detail, looked)
    shown = answer if len(answer) <= 60 else answer[:57] + "..."
    return Check("previews", "pass", f"{len(snapshots)} message snapshots; answer {shown!r}", snapshots[0])


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _is_message_snapshot(entry: dict[str, Any]) -> bool:
    content = entry.get("content")
    kind = entry.get("type")
    return (
        kind not in REASONING_TYPES and kind != "error" and bool(content) and isinstance(content, str | list)
    )
