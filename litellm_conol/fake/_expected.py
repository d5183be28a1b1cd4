"""What a correct client makes of a scenario: a reference reading of the steps."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ._steps import (
    BUILTIN_TOOLS,
    REASONING_KINDS,
    TERMINAL_STATUSES,
    AssistantFinal,
    CommitMessage,
    Done,
    DoneMarker,
    Error,
    ErrorPreview,
    Event,
    Log,
    Preview,
    SetStatus,
    Step,
    StreamDelta,
    ToolCall,
    flatten,
)

Outcome: TypeAlias = Literal["stop", "tool_calls", "error", "timeout", "http_error", "bad_response"]


@dataclass(frozen=True)
class ExpectedToolCall:
    name: str
    arguments: Mapping[str, Any]
    result: str | None = None

    @property
    def arguments_json(self) -> str:
        """OpenAI ``function.arguments`` as a correct client sends it (``ensure_ascii=False``)."""
        return json.dumps(dict(self.arguments), ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments), "result": self.result}


@dataclass(frozen=True)
class Expected:
    """What a correct client makes of a session (see ``expected_from_steps`` for the rules)."""

    final_text: str
    final_reasoning: str
    tool_calls: tuple[ExpectedToolCall, ...]
    builtin_tool_calls: tuple[ExpectedToolCall, ...]
    error: str | None
    outcome: Outcome
    http_status: int

    @property
    def content(self) -> str | None:
        """``message.content``: ``None`` when the answer is client tool calls (docs/protocol.md#stream)."""
        return None if self.tool_calls else self.final_text

    @property
    def finish_reason(self) -> str | None:
        return {"stop": "stop", "tool_calls": "tool_calls"}.get(self.outcome)

    def to_json(self) -> dict[str, Any]:
        return {
            "final_text": self.final_text,
            "final_reasoning": self.final_reasoning,
            "content": self.content,
            "finish_reason": self.finish_reason,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "builtin_tool_calls": [c.to_json() for c in self.builtin_tool_calls],
            "error": self.error,
            "outcome": self.outcome,
            "http_status": self.http_status,
        }


def canonical(value: object) -> str:
    """Canonical JSON, for deduplicating tool calls by ``(name, input)``."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _StageReading:
    message: str = ""
    reasoning: str = ""
    committed: str | None = None


def content_text(content: object) -> str:
    """A preview/log ``content``: a string, or a list of ``{"type":"text","text":..}`` parts concatenated."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)
    return ""


def expected_from_steps(steps: Sequence[Step], *, http_status: int = 201, has_id: bool = True) -> Expected:
    """The reference reading of a timeline, i.e. what a correct client returns. Rules:

    * per stage, in order of first appearance: the answer is the stage's committed ``message`` log
      if any, else its LAST message snapshot (not the longest: a rewrite or a stale snapshot can
      come last only if the scenario means it); ``final_text`` concatenates the stages with no
      separator (stage texts carry their own whitespace); reasoning kinds likewise.
    * tool calls are deduplicated by ``(name, canonical input)``, a later copy adding the result;
      built-in tools (``BUILTIN_TOOLS``) are never client tool calls.
    * ``stream_event`` deltas append to their stage (``#stream``); an ``assistant`` event commits its
      stage; a ``windowReset`` event is ignored (its meaning is unknown; other clients drop it).
    * outcome: ``http_error`` (non-2xx create), ``bad_response`` (no id), ``error`` (an error event
      or an error preview),
      ``tool_calls`` (any client tool call), ``stop`` (terminal status or done), else ``timeout``.
    """
    stages: dict[str, _StageReading] = {}
    calls: dict[tuple[str, str], ExpectedToolCall] = {}
    error: str | None = None
    ends = False
    for step in flatten(steps):
        if isinstance(step, Preview):
            _read_preview(stages.setdefault(step.stage, _StageReading()), step)
        elif isinstance(step, ToolCall | CommitMessage | Log):
            log = step if isinstance(step, Log) else step.as_log()
            _read_log(stages.setdefault(log.stage, _StageReading()), log.entry, calls)
        elif isinstance(step, StreamDelta):
            _read_stream_delta(stages.setdefault(step.stage, _StageReading()), step)
        elif isinstance(step, AssistantFinal):
            stages.setdefault(step.stage, _StageReading()).committed = step.text
        elif isinstance(step, Error | ErrorPreview):
            error = step.message if error is None else error
        elif (
            isinstance(step, Done | DoneMarker)
            or (isinstance(step, SetStatus) and step.status in TERMINAL_STATUSES)
            or (isinstance(step, Event) and step.payload.get("done") is True)
        ):
            ends = True
    client = tuple(c for c in calls.values() if c.name not in BUILTIN_TOOLS)
    builtin = tuple(c for c in calls.values() if c.name in BUILTIN_TOOLS)
    return Expected(
        final_text="".join(s.message if s.committed is None else s.committed for s in stages.values()),
        final_reasoning="".join(s.reasoning for s in stages.values()),
        tool_calls=client,
        builtin_tool_calls=builtin,
        error=error,
        outcome=_outcome(http_status, has_id, error, bool(client), ends),
        http_status=http_status,
    )


def _read_stream_delta(stage: _StageReading, step: StreamDelta) -> None:
    if step.kind in REASONING_KINDS:
        stage.reasoning += step.text
    else:
        stage.message += step.text


def _read_preview(stage: _StageReading, step: Preview) -> None:
    text = content_text(step.text)
    if step.kind in REASONING_KINDS:
        stage.reasoning = text
    else:
        stage.message = text


def _read_log(
    stage: _StageReading, entry: Mapping[str, Any], calls: dict[tuple[str, str], ExpectedToolCall]
) -> None:
    if entry.get("role") != "assistant":
        return  # the user turn is never part of the answer
    if entry.get("type") == "message":
        stage.committed = content_text(entry.get("content"))
    elif entry.get("type") == "tool_call":
        for item in entry.get("content") or ():
            key = (item["name"], canonical(item.get("input", {})))
            result = content_text(item["result"]) if item.get("result") else None
            known = calls.get(key)
            if known is None or (known.result is None and result is not None):
                calls[key] = ExpectedToolCall(item["name"], dict(item.get("input", {})), result)


def _outcome(http_status: int, has_id: bool, error: str | None, client_calls: bool, ends: bool) -> Outcome:
    if not 200 <= http_status < 300:
        return "http_error"
    if not has_id:
        return "bad_response"
    if error is not None:
        return "error"
    if client_calls:
        return "tool_calls"
    return "stop" if ends else "timeout"
