"""One fake conol session: plays its scenario's timeline from creation, whoever is connected.

Everything the session emits goes into ``timeline`` (serialized once); each SSE connection walks that
list from the start (the replay) and then waits for ``changed`` to follow live.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ._codec import sse_data
from ._drift import Drift
from ._records import EventRecord, SessionRecord, StreamClose
from ._scenarios import Scenario
from ._steps import (
    REASONING_KINDS,
    STAGE_STEPS,
    AssistantFinal,
    CloseStream,
    Done,
    DoneMarker,
    Error,
    ErrorPreview,
    Event,
    LateEvents,
    Log,
    Preview,
    RawLine,
    SetPings,
    SetStatus,
    Sleep,
    StageStep,
    Step,
    StreamDelta,
    Together,
    UserTurn,
    WindowReset,
)

TimelineItem = EventRecord | StreamClose
# How an earlier turn ends under ``followup_replayed_end="error"`` (FakeConfig): after its answer.
EARLIER_TURN_ERROR = "agent failed after the answer: the turn was interrupted"
# Seconds a turn's late events wait at most for its readers to leave.
READERS_WAIT = 30.0


@dataclass(frozen=True)
class TurnReadings:
    """The ``FakeConfig`` readings a follow-up turn plays by (docs/protocol.md#readings)."""

    stage: str = "new"  # followup_stage: "new" | "same"
    replayed_end: str = "none"  # followup_replayed_end: "none" | "done" | "error"
    status_lag: float = 0.0  # followup_status_lag, when the previous turn ran
    garbage: bool = False  # followup_garbage
    previews: str = "cleared"  # followup_previews: "cleared" | "kept"


def user_turn_text(messages: list[str], timezone: str | None, now: float, stamped: bool = True) -> str:
    """The user log's content: conol wraps the transcript in its own preamble (docs/protocol.md#stream),
    which names the time of the turn (``stamped``) or not (``FakeConfig.user_log_time``)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    when = f"; the current time is {stamp}" if stamped else ""
    preamble = (
        "<system-reminder>\n"
        "You are conol, an autonomous agent on conol.ai. "
        f"The user's timezone is {timezone or 'UTC'}{when}.\n"
        "Use your tools when they help and answer in the user's language.\n"
        "</system-reminder>"
    )
    return preamble + "\n" + "\n\n".join(messages)


@dataclass(frozen=True)
class UsageReport:
    """``contextUsage`` on every ``history_delta``, ``stream_event``, ``assistant`` and ``done`` event
    (docs/protocol.md#stream): ``usedTokens`` = (the user turn's characters + the answer's so far) // 4,
    ``modelId`` the model that runs (``FakeConfig.context_model`` can make it differ from the create
    answer's)."""

    model_id: str
    context_window: int = 200_000


@dataclass
class _Stage:
    id: str
    logs: list[dict[str, Any]] = field(default_factory=list)
    previews: dict[str, dict[str, Any]] = field(default_factory=dict)  # kind -> entry, first-seen order
    logs_sent: int = 0
    changed_previews: list[str] = field(default_factory=list)


class LiveSession:
    def __init__(
        self,
        record: SessionRecord,
        scenario: Scenario,
        script: list[Step],
        user_text: str,
        drift: Drift | None = None,
        usage: UsageReport | None = None,
    ) -> None:
        self.record = record
        self.usage = usage
        self._streamed_chars = 0  # stream_event text so far (for usedTokens)
        self.drift = drift or Drift()  # the server's drifts when the session was created
        self.scenario = scenario
        self.timeline: list[TimelineItem] = []
        self.pings_enabled = scenario.pings
        self.killed_by: str | None = None  # "reset" | "shutdown": every stream ends, the timeline stops
        self._script = script
        self._user_text = user_text
        self._stages: dict[str, _Stage] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._prefix = ""  # followup_stage "new": a follow-up turn's stages are new ones (t2/main, …)
        self.turn_start = 0  # where a stream without the replay starts (followup_replay off)
        self._turn_first = 0  # where the current turn's own events begin in the timeline
        self._turn_status_set = False
        self.late = LateEvents()  # what each turn writes after its end (FakeConfig.late_events)
        self.posted: list[float] = []  # when each follow-up turn was posted

    @property
    def changed(self) -> asyncio.Event:
        """Set (and replaced) whenever the timeline grows or the session is killed."""
        return self._changed

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"fake-conol {self.record.id}")

    def start_turn(self, script: list[Step], user_text: str, turn: int, readings: TurnReadings) -> None:
        """The next turn on this session, appended to the same timeline (in stages of its own, or in
        the previous turn's: ``readings.stage``), once the previous turn's script is over (a turn
        posted meanwhile waits, as a queued message). Its events start at once; the previous turn's
        status stays ``readings.status_lag`` seconds before it turns ``running`` (unless the turn set
        its own by then)."""
        self.posted.append(time.time())
        previous = self._task
        if previous is None or previous.done():
            self._between_turns(readings)
        else:
            self.turn_start = len(self.timeline)  # a stream opened while the previous turn plays
        self._task = asyncio.get_running_loop().create_task(
            self._run_turn(previous, script, user_text, turn, readings), name=f"fake-conol {self.record.id}"
        )

    async def _run_turn(
        self,
        previous: asyncio.Task[None] | None,
        script: list[Step],
        user_text: str,
        turn: int,
        readings: TurnReadings,
    ) -> None:
        if previous is not None and not previous.done():
            await asyncio.wait([previous])
            self._between_turns(readings)
        if readings.stage == "new":
            self._prefix = f"t{turn}/"
        elif readings.previews == "cleared":
            # the same stages go on; a preview is the message in flight, so the new turn starts with none
            for stage in self._stages.values():
                stage.previews.clear()
                stage.changed_previews.clear()
        self._script, self._user_text = script, user_text
        self._turn_status_set = False
        if readings.status_lag > 0:
            asyncio.get_running_loop().call_later(readings.status_lag, self._turn_running)
        else:
            self._turn_running()
        await self._run()

    def _between_turns(self, readings: TurnReadings) -> None:
        """What lies between the earlier turn and the new one in the timeline (so in every replay,
        never in a stream without it): the earlier turn's end (``readings.replayed_end``), then the
        garbage of ``followup_garbage``."""
        if self.timeline:  # an empty create's first turn has no earlier turn
            earlier = self.timeline[self._turn_first :]
            sent = {item.type for item in earlier if isinstance(item, EventRecord)}
            if readings.replayed_end == "done" and not sent & {"done", "done_marker"}:
                self._apply(Done())
            elif readings.replayed_end == "error" and "error" not in sent:
                self._apply(Error(EARLIER_TURN_ERROR))
                self.record.set_status("failed", time.time())
            if readings.garbage:
                self.replay_garbage()
        self.turn_start = self._turn_first = len(self.timeline)

    def _turn_running(self) -> None:
        if not self._turn_status_set and self.killed_by is None:
            self.record.set_status("running", time.time())

    def replay_garbage(self) -> None:
        """What a follow-up's stream must not be read as: the earlier stages again with other text,
        a ``done`` and a junk line, ahead of the new turn."""
        stages = [
            {
                "id": stage.id,
                "logs": [],
                "preview": [{"role": "assistant", "type": "message", "content": "GARBAGE"}],
            }
            for stage in self._stages.values()
        ]
        self._emit("history_delta", sse_data({"type": "history_delta", "stages": stages}))
        self._apply(Done())
        self._apply(RawLine("data: {not json"))

    def kill(self, reason: str) -> None:
        self.killed_by = reason
        if self._task is not None:
            self._task.cancel()
        self._notify()

    async def _run(self) -> None:
        late, turn = self.late, len(self.posted)
        await self._play(self._script)
        if late.kind != "none":
            # after the clients reading this turn stopped: once the streams opened before the next
            # turn was posted have closed (at most READERS_WAIT s)
            reading = [c for c in self.record.connections if c.closed_at is None]
            for _ in range(int(READERS_WAIT / 0.02)):
                nxt = self.posted[turn] if len(self.posted) > turn else None
                if all(c.closed_at is not None or (nxt is not None and c.opened_at >= nxt) for c in reading):
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(late.after)
            await self._play(late.steps())

    async def _play(self, steps: list[Step]) -> None:
        for step in steps:
            if isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            else:
                self._apply(step)
                # yield so streams write between zero-delay steps (``long delay=0`` would hog the loop)
                await asyncio.sleep(0)

    def _notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _emit(self, type_: str, raw: bytes) -> None:
        record = EventRecord(seq=len(self.record.events), time=time.time(), type=type_, raw=raw)
        self.record.events.append(record)
        self.timeline.append(record)
        self._notify()

    def _apply(self, step: Step) -> None:
        if isinstance(step, Together):
            self._emit_delta([self._update(s) for s in step.steps])
        elif isinstance(step, STAGE_STEPS):
            self._emit_delta([self._update(step)])
        elif isinstance(step, SetStatus):
            self._turn_status_set = True
            self.record.set_status(step.status, time.time())
        elif isinstance(step, Done):
            self._emit("done", sse_data(self._with_usage({"type": "done"})))
        elif isinstance(step, DoneMarker):
            self._emit("done_marker", b"data: [DONE]\n\n")
        elif isinstance(step, Error):
            self._emit("error", sse_data({"type": "error", "message": step.message}))
        elif isinstance(step, Event):
            self._emit(str(step.payload.get("type", "unknown")), sse_data(dict(step.payload)))
        elif isinstance(step, RawLine):
            self._emit("raw", step.text.encode() + b"\n\n")
        elif isinstance(step, CloseStream):
            now = time.time()
            self.record.closes.append(now)
            self.timeline.append(StreamClose(now, step.permanent))
            self._notify()
        elif isinstance(step, SetPings):
            self.pings_enabled = step.enabled
        else:
            self._apply_other_reading(step)

    def _apply_other_reading(self, step: Step) -> None:
        """The event shapes other clients read (docs/protocol.md#stream)."""
        if isinstance(step, StreamDelta):
            self._streamed_chars += len(step.text)
            delta: Any = step.text
            if step.kind in REASONING_KINDS:
                delta = {"type": "thinking_delta", "thinking": step.text}
            self._emit("stream_event", sse_data(self._with_usage({"type": "stream_event", "delta": delta})))
        elif isinstance(step, AssistantFinal):
            self._emit("assistant", sse_data(self._with_usage({"type": "assistant", "content": step.text})))
        elif isinstance(step, ErrorPreview):
            entry = {"role": "assistant", "type": "error", "content": step.message}
            stage = {"id": self._stage(step.stage).id, "logs": [], "preview": [entry]}
            self._emit(
                "history_delta", sse_data(self._with_usage({"type": "history_delta", "stages": [stage]}))
            )
        elif isinstance(step, WindowReset):
            entry = {"role": "assistant", "type": "message", "content": step.text}
            stage = {"id": "stg_reset_" + secrets.token_hex(4), "logs": [], "preview": [entry]}
            payload = {"type": "history_delta", "windowReset": True, "stages": [stage]}
            self._emit("history_delta", sse_data(self._with_usage(payload)))

    def _with_usage(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self.usage is None:
            return payload
        chars = len(self._user_text) + self._streamed_chars
        chars += sum(
            len(_text(p.get("content"))) for st in self._stages.values() for p in st.previews.values()
        )
        usage = {
            "usedTokens": chars // 4,
            "contextWindow": self.usage.context_window,
            "modelId": self.usage.model_id,
        }
        self.record.context_usage = usage
        return {**payload, "contextUsage": usage}

    # ---------------------------------------------------------------------------------- history_delta
    def _stage(self, name: str) -> _Stage:
        name = self._prefix + name
        stage = self._stages.get(name)
        if stage is None:
            stage = self._stages[name] = _Stage(id="stg_" + secrets.token_hex(8))
        return stage

    def _update(self, step: StageStep) -> str:
        """Apply one stage change to the state; returns the stage's name."""
        if isinstance(step, UserTurn):
            entry = {"role": "user", "type": "message", "content": self._user_text}
            self._stage(step.stage).logs.append(entry)
        elif isinstance(step, Preview):
            stage = self._stage(step.stage)
            stage.previews[step.kind] = {"role": "assistant", "type": step.kind, "content": _content(step)}
            stage.changed_previews.append(step.kind)
        else:
            log = step if isinstance(step, Log) else step.as_log()
            self._stage(log.stage).logs.append(dict(log.entry))
        return step.stage

    def _emit_delta(self, touched: list[str]) -> None:
        touched = [self._prefix + name for name in touched]
        names = list(self._stages) if self.scenario.stage_mode == "all" else list(dict.fromkeys(touched))
        payload = {"type": "history_delta", "stages": [self._stage_json(self._stages[n]) for n in names]}
        self._emit("history_delta", sse_data(self.drift.event(self._with_usage(payload))))

    def _stage_json(self, stage: _Stage) -> dict[str, Any]:
        mode = self.scenario
        logs = stage.logs if mode.log_mode == "cumulative" else stage.logs[stage.logs_sent :]
        if mode.preview_mode == "all":
            preview = list(stage.previews.values())
        else:
            preview = [stage.previews[k] for k in dict.fromkeys(stage.changed_previews)]
        stage.logs_sent, stage.changed_previews = len(stage.logs), []
        data: dict[str, Any] = {"id": stage.id, "logs": logs, "preview": preview}
        if mode.omit_empty:
            data = {k: v for k, v in data.items() if v != []}
        return data


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content) if isinstance(content, list) else ""


def _content(step: Preview) -> str | list[dict[str, str]]:
    if isinstance(step.text, tuple):
        return [{"type": "text", "text": part} for part in step.text]
    return [{"type": "text", "text": step.text}] if step.as_parts else step.text


__all__ = [
    "EARLIER_TURN_ERROR",
    "LiveSession",
    "TimelineItem",
    "TurnReadings",
    "UsageReport",
    "user_turn_text",
]
