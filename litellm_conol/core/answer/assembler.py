"""The protocol core: conol events in, answer pieces out. Pure: no I/O, no clocks, no globals.

conol sends cumulative snapshots (each event repeats the whole text so far), repeats tool calls
under other stage ids, and mixes the user's own turn into the logs. The :class:`Assembler` turns
that into the pieces a streaming client wants (only new text, each tool call once) and keeps the
state a non-streaming client wants (the final text, reasoning and tool calls).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.agent_failures import failure_error
from ..protocol.event_fields import (
    ContextUsage,
    event_text,
    is_reasoning_delta,
    is_window_reset,
    read_context_usage,
    reasoning_text,
)
from ..protocol.wire import (
    AssistantEvent,
    ConolEvent,
    ContentPart,
    DoneEvent,
    ErrorEvent,
    HistoryDelta,
    LogEntry,
    Stage,
    StreamEvent,
    ToolUse,
)
from ..request.render import tool_arguments
from .cutter import AnswerCutter, Cut
from .snapshot_text import SnapshotText

REASONING_TYPES = frozenset({"thinking", "reasoning", "thought", "plan"})
# a preview entry of this type is conol telling the user it failed (docs/protocol.md#stream)
ERROR_PREVIEW = "error"
# The channel entries that ``stream_event`` deltas build (they are not cumulative: appended here).
_STREAMED_ANSWER = ("#stream_event", "message", 0)
_STREAMED_REASONING = ("#stream_event", "thinking", 0)


# --- pieces -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ClientToolCall:
    """A call of one of the request's own tools: the client must execute it."""

    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class BuiltinToolUse:
    """A tool conol ran itself (WebSearch, Fetch, …): shown to the client, never for it to run."""

    name: str
    input: Any
    result: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "input": self.input, "result": self.result}


Piece = TextDelta | ReasoningDelta | ClientToolCall | BuiltinToolUse


def coalesce(pieces: list[Piece]) -> list[Piece]:
    """Adjacent text (and adjacent reasoning) deltas joined into one: the same stream in fewer
    chunks. Each chunk costs ~0.3 ms in LiteLLM's stream wrapper, and a burst (a replay after a
    reconnect, events queued while the loop was busy) can be hundreds of deltas."""
    if len(pieces) < 2:
        return pieces
    merged: list[Piece] = [pieces[0]]
    for piece in pieces[1:]:
        last = merged[-1]
        if isinstance(piece, TextDelta) and isinstance(last, TextDelta):
            merged[-1] = TextDelta(last.text + piece.text)
        elif isinstance(piece, ReasoningDelta) and isinstance(last, ReasoningDelta):
            merged[-1] = ReasoningDelta(last.text + piece.text)
        else:
            merged.append(piece)
    return merged


# --- the assembler ------------------------------------------------------------------------------


def _default_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _parts_text(content: str | list[ContentPart] | list[ToolUse] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.text or "" for part in content)


@dataclass
class _ToolRecord:
    use: BuiltinToolUse
    client: bool


@dataclass
class Assembler:
    """Feed it events in arrival order; it returns the pieces each event adds.

    ``client_tools``: names of the request's own tools (their calls are for the client).
    ``expose_builtins``: also return conol's built-in tool calls as client tool calls.
    ``max_tool_calls``: keep at most this many client tool calls (``parallel_tool_calls=false`` → 1).
    ``dropped_tools``: the request's tools that ``tool_choice`` excluded: their calls are ignored.
    ``cutter``: ``stop`` / ``max_tokens`` of the request; once it cuts the answer, ``cut`` says where
    and why, and later events are ignored (the driver ends the turn).
    """

    client_tools: frozenset[str] = frozenset()
    dropped_tools: frozenset[str] = frozenset()
    expose_builtins: bool = False
    max_tool_calls: int | None = None
    new_call_id: Callable[[], str] = _default_call_id
    cutter: AnswerCutter | None = None

    answer: SnapshotText = field(default_factory=SnapshotText, init=False)
    reasoning: SnapshotText = field(default_factory=SnapshotText, init=False)
    tool_calls: list[ClientToolCall] = field(default_factory=list, init=False)
    dropped_calls: list[BuiltinToolUse] = field(default_factory=list, init=False)
    withheld_calls: int = field(default=0, init=False)  # client calls beyond max_tool_calls, not returned
    done: bool = field(default=False, init=False)
    cut: Cut | None = field(default=None, init=False)
    context_usage: ContextUsage | None = field(default=None, init=False)  # the latest reported
    window_resets: int = field(default=0, init=False)  # windowReset events dropped
    _tools: dict[tuple[str, str], _ToolRecord] = field(default_factory=dict, init=False)
    _streamed: dict[tuple[str, str, int], str] = field(default_factory=dict, init=False)

    # -- what the driver asks --

    @property
    def committed(self) -> bool:
        """A completed assistant message was seen in the logs (the committed turn)."""
        return self.answer.has_commit

    @property
    def wants_client_tool(self) -> bool:
        """The agent now waits for a client tool result (also one that tool_choice dropped)."""
        return bool(self.tool_calls or self.dropped_calls)

    @property
    def builtin_tools(self) -> list[BuiltinToolUse]:
        return [record.use for record in self._tools.values() if not record.client]

    @property
    def final_text(self) -> str:
        return self.cut.text if self.cut is not None else self.answer.text

    @property
    def final_reasoning(self) -> str:
        return self.reasoning.text

    # -- feeding --

    def feed(self, event: ConolEvent) -> list[Piece]:
        if event.context_usage is not None:
            self._note_usage(event.context_usage)
        if isinstance(event, HistoryDelta):
            if event.window_reset is not None and is_window_reset(event.window_reset):
                # No source says what it means; other clients drop the event whole, so do we
                # (docs/protocol.md#stream). Snapshots are cumulative and tool calls deduplicated,
                # so the next event carries all it had.
                self.window_resets += 1
                return []
            return self._feed_delta(event)
        if isinstance(event, DoneEvent):
            self.done = True
            return []
        if isinstance(event, ErrorEvent):
            raise failure_error(event.message or event.error, "event")
        if isinstance(event, AssistantEvent):
            return self._feed_final(event)
        if isinstance(event, StreamEvent):
            return self._feed_stream(event)
        return []  # an event read for its contextUsage alone

    def _note_usage(self, raw: object) -> None:
        usage = read_context_usage(raw)
        if usage is not None:
            self.context_usage = usage if self.context_usage is None else self.context_usage.merged(usage)

    def _feed_final(self, event: AssistantEvent) -> list[Piece]:
        """The final text (docs/protocol.md#stream): it completes (or replaces) the answer, as a committed
        message does."""
        if self.cut is not None:
            return []
        text = event_text(event.content if event.content is not None else event.message or event.text)
        if text:
            self.answer.commit(text)
        return self._take_deltas()

    def _feed_stream(self, event: StreamEvent) -> list[Piece]:
        """A delta to append (docs/protocol.md#stream): kept as one more cumulative entry of its channel."""
        if self.cut is not None:
            return []
        delta = next((v for v in (event.delta, event.content, event.text) if v is not None), None)
        if delta is None and isinstance(event.event, dict):
            delta = event.event.get("delta")
        if is_reasoning_delta(delta):
            key, channel, text = _STREAMED_REASONING, self.reasoning, reasoning_text(delta)
        else:
            key, channel, text = _STREAMED_ANSWER, self.answer, event_text(delta)
        if text:
            self._streamed[key] = self._streamed.get(key, "") + text
            channel.set_snapshot(key, self._streamed[key])
        return self._take_deltas()

    def feed_all(self, events: Iterable[ConolEvent]) -> list[Piece]:
        pieces: list[Piece] = []
        for event in events:
            pieces.extend(self.feed(event))
        return pieces

    def finish(self) -> list[Piece]:
        """The answer ended on its own: the text held back for a possible stop sequence, or the
        last cut by ``max_tokens``. Call it once, when the turn ends."""
        if self.cutter is None or self.cut is not None:
            return []
        delta = self._answer_delta(self.cutter.final(self.answer.text))
        return [TextDelta(delta)] if delta else []

    def _answer_delta(self, shown: str | Cut | None) -> str:
        if isinstance(shown, Cut):
            self.cut = shown
            return self.answer.take_delta(shown.text)
        return self.answer.take_delta(shown)

    def _feed_delta(self, event: HistoryDelta) -> list[Piece]:
        if self.cut is not None:
            return []  # the answer is over; the rest is text nobody will see
        pieces: list[Piece] = []
        for position, stage in enumerate(event.stages):
            stage_key = stage.id or f"#{position}"
            self._read_previews(stage_key, stage)
            for log in stage.logs:
                pieces.extend(self._read_log(log))
        # Tool calls first would reorder the answer; text deltas come before this event's tools.
        return self._take_deltas() + pieces

    def _take_deltas(self) -> list[Piece]:
        """What the channels gained: reasoning first, then the answer as far as it may be shown."""
        reasoning_delta = self.reasoning.take_delta()
        shown = self.cutter.visible(self.answer.text) if self.cutter is not None else None
        text_delta = self._answer_delta(shown)
        head: list[Piece] = []
        if reasoning_delta:
            head.append(ReasoningDelta(reasoning_delta))
        if text_delta:
            head.append(TextDelta(text_delta))
        return head

    def _read_previews(self, stage_key: str, stage: Stage) -> None:
        # An entry is identified by its stage, its type and its rank among entries of that type:
        # a list with only the changed entries (one per type) and a full list both map correctly.
        ranks: dict[str | None, int] = {}
        for entry in stage.preview:
            if entry.type == ERROR_PREVIEW:
                # e.g. "credit balance is too low": a failure shown as a message, not an answer
                # (docs/protocol.md#stream)
                raise failure_error(_parts_text(entry.content) or "an error preview without text", "preview")
            if entry.role not in (None, "assistant"):
                continue
            rank = ranks.get(entry.type, 0)
            ranks[entry.type] = rank + 1
            channel = self.reasoning if entry.type in REASONING_TYPES else self.answer
            channel.set_snapshot((stage_key, entry.type or "", rank), _parts_text(entry.content))

    def _read_log(self, log: LogEntry) -> list[Piece]:
        if log.role == "user":
            return []  # the user's own turn, wrapped in conol's <system-reminder> preamble
        if isinstance(log.content, list) and any(use.type == "tool_call" or use.name for use in log.content):
            return [piece for use in log.content if (piece := self._read_tool_use(use)) is not None]
        if log.role == "assistant" and log.type in REASONING_TYPES:
            self.reasoning.commit(_parts_text(log.content))
        elif log.role == "assistant" and log.type in (None, "message", "text"):
            text = _parts_text(log.content)
            if text:
                self.answer.commit(text)
        return []

    def _drop(self, use: ToolUse) -> None:
        if all(_drop_key(use) != (d.name, _canonical(d.input)) for d in self.dropped_calls):
            self.dropped_calls.append(
                BuiltinToolUse(use.name or "", use.input if use.input is not None else {}, None)
            )

    def _read_tool_use(self, use: ToolUse) -> Piece | None:
        if not use.name:
            return None
        if use.name in self.dropped_tools:
            self._drop(use)
            return None
        arguments = use.input if use.input is not None else {}  # null and {} are the same call
        key = (use.name, _canonical(arguments))
        result = _result_text(use.result)
        record = self._tools.get(key)
        if record is not None:
            # The same call again (another stage id): at most a late result is new.
            if record.client or result is None or record.use.result == result:
                return None
            record.use = BuiltinToolUse(use.name, use.input, result)
            return record.use
        is_client = use.name in self.client_tools or self.expose_builtins
        record = _ToolRecord(BuiltinToolUse(use.name, use.input, result), client=is_client)
        self._tools[key] = record
        if not is_client:
            return record.use
        if self.max_tool_calls is not None and len(self.tool_calls) >= self.max_tool_calls:
            self.withheld_calls += 1
            return None
        call = ClientToolCall(
            index=len(self.tool_calls),
            id=self.new_call_id(),
            name=use.name,
            arguments=tool_arguments(use.input),
        )
        self.tool_calls.append(call)
        return call


def _drop_key(use: ToolUse) -> tuple[str, str]:
    return (use.name or "", _canonical(use.input if use.input is not None else {}))


def _result_text(result: list[ContentPart] | str | None) -> str | None:
    if result is None:
        return None
    if isinstance(result, str):
        return result
    return "".join(part.text or "" for part in result)
