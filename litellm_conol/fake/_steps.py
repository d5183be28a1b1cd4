"""Timeline steps of a fake conol session.

Steps that change a stage (``UserTurn``, ``Preview``, ``Log``, ``ToolCall``, ``CommitMessage`` and
``Together`` of them) each emit one ``history_delta`` event; the scenario's modes decide what that
event repeats (see ``Scenario``). The other steps emit one event each or change session state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

# Preview ``type`` values a client must treat as reasoning; anything else is answer text
# (docs/protocol.md#stream).
REASONING_KINDS = frozenset({"thinking", "reasoning", "thought", "plan"})
# Tools that run inside conol and come back with a result: never the client's to execute
# (docs/protocol.md#stream).
BUILTIN_TOOLS = frozenset({"WebSearch", "Fetch", "SetIntention", "WriteNote", "ReadNote"})
TERMINAL_STATUSES = frozenset({"completed", "complete", "done", "stopped", "failed", "error", "cancelled"})


@dataclass(frozen=True)
class UserTurn:
    """The user log (conol preamble + the request's text). Prepended automatically when absent."""

    stage: str = "main"


@dataclass(frozen=True)
class Preview:
    """A cumulative snapshot: ``text`` is the WHOLE text of this stage's ``kind`` preview so far.

    A tuple of strings is sent as that many ``{"type":"text","text":..}`` parts (whose concatenation
    is the snapshot); ``as_parts=True`` sends a plain string as a single part.
    """

    text: str | tuple[str, ...]
    kind: str = "message"
    stage: str = "main"
    as_parts: bool = False


@dataclass(frozen=True)
class Log:
    """A raw log entry appended to a stage's logs."""

    entry: Mapping[str, Any]
    stage: str = "main"


@dataclass(frozen=True)
class ToolCall:
    """A ``tool_call`` log with one call; ``result`` (text) is how built-in tools come back."""

    name: str
    input: Mapping[str, Any]
    result: str | None = None
    stage: str = "main"

    def item(self) -> dict[str, Any]:
        item: dict[str, Any] = {"name": self.name, "type": "tool_call", "input": dict(self.input)}
        if self.result is not None:
            item["result"] = [{"text": self.result}]
        return item

    def as_log(self) -> Log:
        return Log(tool_call_entry(self), stage=self.stage)


@dataclass(frozen=True)
class CommitMessage:
    """The committed assistant turn: a ``message`` log holding the stage's full final text."""

    text: str
    stage: str = "main"
    as_parts: bool = False

    def as_log(self) -> Log:
        content: Any = [{"type": "text", "text": self.text}] if self.as_parts else self.text
        return Log({"role": "assistant", "type": "message", "content": content}, stage=self.stage)


StageStep: TypeAlias = UserTurn | Preview | Log | ToolCall | CommitMessage
STAGE_STEPS = (UserTurn, Preview, Log, ToolCall, CommitMessage)


@dataclass(frozen=True)
class Together:
    """Several stage changes sent as ONE ``history_delta`` event (e.g. a log plus a snapshot)."""

    steps: tuple[StageStep, ...]


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class SetStatus:
    status: str


@dataclass(frozen=True)
class Done:
    """``data: {"type":"done"}``."""


@dataclass(frozen=True)
class DoneMarker:
    """``data: [DONE]``."""


@dataclass(frozen=True)
class Error:
    """``data: {"type":"error","message":...}`` (the agent failed)."""

    message: str


@dataclass(frozen=True)
class Event:
    """Any other JSON event, e.g. a type the client must ignore."""

    payload: Mapping[str, Any]


@dataclass(frozen=True)
class StreamDelta:
    """``{"type":"stream_event","delta":..}``: ``text`` to APPEND to the answer (not a snapshot)
    (docs/protocol.md#stream); ``kind="thinking"`` sends ``{"type":"thinking_delta","thinking":..}``.
    ``stage`` is where ``expected_from_steps`` keeps the text (a client keeps stream deltas apart from
    previews)."""

    text: str
    kind: str = "message"
    stage: str = "#stream"


@dataclass(frozen=True)
class AssistantFinal:
    """``{"type":"assistant","content":..}``: the final text; it completes the answer of
    ``stage`` (for ``expected_from_steps``) as a committed message does."""

    text: str
    stage: str = "main"


@dataclass(frozen=True)
class ErrorPreview:
    """A ``history_delta`` whose preview entry has ``type: "error"`` (e.g. the credit balance is
    too low): the agent failed, said as a message."""

    message: str
    stage: str = "main"


@dataclass(frozen=True)
class WindowReset:
    """A ``history_delta`` with ``windowReset: true`` carrying ``text`` as a message snapshot of a new
    stage. No source says what it means (other clients drop such an event): ``expected_from_steps``
    ignores it."""

    text: str


@dataclass(frozen=True)
class RawLine:
    """``text`` sent verbatim followed by a blank line (so it is its own SSE event), e.g. bad JSON."""

    text: str


@dataclass(frozen=True)
class CloseStream:
    """Close every open stream of the session (clean end of the chunked body).

    Later connections replay and follow live as usual, unless ``permanent``: then they get the
    replay and are closed at once (a server that closes finished sessions).
    """

    permanent: bool = False


@dataclass(frozen=True)
class SetPings:
    """Turn the ``: ping`` heartbeat of this session's streams on or off."""

    enabled: bool


Step: TypeAlias = (
    StageStep
    | Together
    | Sleep
    | SetStatus
    | Done
    | DoneMarker
    | Error
    | Event
    | RawLine
    | CloseStream
    | SetPings
    | StreamDelta
    | AssistantFinal
    | ErrorPreview
    | WindowReset
)


def flatten(steps: Sequence[Step]) -> list[Step]:
    """The steps with every ``Together`` unpacked."""
    flat: list[Step] = []
    for step in steps:
        flat.extend(step.steps if isinstance(step, Together) else (step,))
    return flat


def tool_call_entry(*calls: ToolCall) -> dict[str, Any]:
    """One ``tool_call`` log entry carrying ``calls`` in its content list."""
    return {"role": "assistant", "type": "tool_call", "content": [c.item() for c in calls]}


def snapshots(
    text: str,
    n: int,
    delay: float,
    *,
    kind: str = "message",
    stage: str = "main",
    as_parts: bool = False,
    cuts: Sequence[int] | None = None,
) -> list[Step]:
    """``text`` as ``n`` cumulative snapshots (evenly cut, or ending at ``cuts``) ``delay`` s apart.

    The last snapshot is always the whole text. No sleep before the first or after the last.
    """
    ends = _snapshot_ends(len(text), n, cuts)
    steps: list[Step] = []
    for i, end in enumerate(ends):
        if i and delay > 0:
            steps.append(Sleep(delay))
        steps.append(Preview(text[:end], kind=kind, stage=stage, as_parts=as_parts))
    return steps


def _snapshot_ends(length: int, n: int, cuts: Sequence[int] | None) -> list[int]:
    if cuts is not None:
        raw = [*cuts, length]
    else:
        n = max(1, n)
        raw = [max(1, round(length * i / n)) for i in range(1, n + 1)]
    ends: list[int] = []
    for end in raw:  # strictly increasing, capped at the length: each snapshot extends the previous
        end = min(end, length)
        if not ends or end > ends[-1]:
            ends.append(end)
    return ends or [length]


def with_first_token_delay(steps: Sequence[Step], seconds: float) -> list[Step]:
    """``steps`` with ``seconds`` of silence right after the user log (at the start when there is
    none): a model that thinks before its first word."""
    out = list(steps)
    if seconds <= 0:
        return out
    at = next((i + 1 for i, step in enumerate(out) if UserTurn in _kinds(step)), 0)
    out.insert(at, Sleep(seconds))
    return out


def without_stages(steps: Sequence[Step]) -> list[Step]:
    """``steps`` as a turn whose events carry no stages: each preview snapshot as a ``stream_event``
    delta of what it added, a committed message as an ``assistant`` event, no user log. Tool calls
    and raw logs stay in stages (there is no stage-less event for them)."""
    shown: dict[tuple[str, str], str] = {}
    out: list[Step] = []
    for step in flatten(steps):
        if isinstance(step, UserTurn):
            continue
        if isinstance(step, Preview):
            text = step.text if isinstance(step.text, str) else "".join(step.text)
            before = shown.get((step.stage, step.kind), "")
            shown[(step.stage, step.kind)] = text
            added = text[len(before) :] if text.startswith(before) else text
            if added:
                out.append(StreamDelta(added, kind=step.kind, stage=step.stage))
        elif isinstance(step, CommitMessage):
            out.append(AssistantFinal(step.text, stage=step.stage))
        else:
            out.append(step)
    return out


def _kinds(step: Step) -> set[type]:
    return {type(s) for s in step.steps} if isinstance(step, Together) else {type(step)}


# The answer text ``late_events="answer"`` adds after a turn's end.
LATE_ANSWER = "One more thing, written after the answer had ended."


@dataclass(frozen=True)
class LateEvents:
    """What the session writes after each turn's script ended (``FakeConfig.late_events``)."""

    kind: str = "none"  # "none" | "note" | "tool_call" | "answer"
    after: float = 0.0

    def steps(self) -> list[Step]:
        search = ToolCall("WebSearch", {"query": "anything newer on this"}, result="Nothing newer.")
        if self.kind == "note":
            return [ToolCall("WriteNote", {"note": "The user may come back to this."}, result="Saved.")]
        if self.kind == "tool_call":
            return [search]
        if self.kind == "answer":
            return [search, Preview(LATE_ANSWER), CommitMessage(LATE_ANSWER)]
        return []
