"""Judging what conol sent during ``doctor``'s checks, and writing the report: pure functions of the
recorded events and the checks' results."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..client.recording import RecordingTransport
from ..core.answer.assembler import REASONING_TYPES, Assembler
from ..core.errors import ConolError
from ..core.protocol.event_fields import reported_model

Outcome = Literal["pass", "fail", "skip", "absent"]
# One line per capability other clients report (docs/protocol.md): PASS (seen and read), FAIL (seen but not
# readable) or ABSENT (this conol does not send it, or answers 404; the provider falls back to its
# own reading). assets and discovery (``_doctor_caps``) use the same outcomes.
CAPABILITIES = ("contextUsage", "framing")


@dataclass
class Check:
    name: str
    outcome: Outcome
    detail: str
    seconds: float | None = None

    @property
    def failed(self) -> bool:
        return self.outcome == "fail"

    def line(self) -> str:
        took = f"{self.seconds:6.2f} s" if self.seconds is not None else " " * 8
        return f"{self.outcome.upper():6}  {self.name:<36} {took}  {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, "seconds": self.seconds, "detail": self.detail}


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


def _framing(line: str) -> str | None:
    if line.startswith("data:"):
        return "SSE data: lines"
    if line.startswith("message\t"):
        return "message<TAB> lines"
    return "bare JSON lines (NDJSON)" if line[:1] in ("{", "[") else None


def judge_framing(lines: list[str], looked: float) -> Check:
    """Which of the three framings the event stream used (the provider reads all three)."""
    seen = Counter(kind for line in lines if (kind := _framing(line)) is not None)
    if not seen:
        other = f"{len(lines)} other line(s)" if lines else "no line at all"
        return Check("framing", "fail", f"no event line in any framing ({other})", looked)
    return Check("framing", "pass", ", ".join(f"{kind} x{n}" for kind, n in seen.most_common()), looked)


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


def report_text(checks: Iterable[Check], api_base: str, seconds: float) -> str:
    checks = list(checks)
    counts = Counter(check.outcome for check in checks)
    summary = (
        f"doctor: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped, "
        f"{counts['absent']} absent in {seconds:.1f} s against {api_base}"
    )
    return "\n".join([*(check.line() for check in checks), summary])


def report_json(checks: Iterable[Check], api_base: str, seconds: float) -> str:
    checks = list(checks)
    return json.dumps(
        {
            "ok": not any(check.failed for check in checks),
            "api_base": api_base,
            "seconds": round(seconds, 3),
            "checks": [check.to_json() for check in checks],
        },
        indent=2,
    )
