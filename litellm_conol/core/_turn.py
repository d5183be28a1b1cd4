"""A follow-up turn on a conol session, decided and read without I/O.

:func:`decide` says whether a request continues a bound session or starts a new one, and why.
:class:`TurnBoundary` reads a follow-up's event stream: conol may replay the session's earlier
stages (and their ``done``, their status) on every connection, so only what comes after our new
turn counts. Evidence the new turn started is a stage id none of the earlier turns produced, or the
new user turn's own log entry; until then every stage we knew, every ``done`` and every ``error`` is
an echo of the past, and a terminal status is the previous turn's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ._errors import BadRequest
from ._images import ImageLimits
from ._render import _tool_names_by_call_id, render_parts
from ._reuse import Binding, ReuseOptions, normalize_text
from ._wire import ConolEvent, HistoryDelta, LogEntry, MessagePart, Stage, TextPart


@dataclass(frozen=True)
class Continue:
    binding: Binding
    repin: bool  # the model or effort changed and the session was pinned: /model before the turn


@dataclass(frozen=True)
class Fresh:
    reason: str


def decide(
    binding: Binding | None,
    *,
    options: ReuseOptions,
    model: str,
    effort: str,
    continuable: bool,
    upstream_refused: bool,
    pinning: bool,
) -> Continue | Fresh:
    """Continue ``binding`` (the session that holds this request's history), or why not.

    ``continuable``: the request has an earlier history and a new turn after it (and asks nothing a
    follow-up cannot carry). ``pinning``: this upstream and model are pinned with ``/model``, so a
    model or effort change re-pins the same session instead of starting a new one.
    """
    if options.mode == "off":
        return Fresh("session_reuse is off")
    if not continuable:
        return Fresh("no earlier turn to continue")
    if upstream_refused:
        return Fresh("this upstream refused a follow-up recently")
    if binding is None:
        return Fresh("no session holds this history")
    changed = binding.model != model or binding.effort != effort
    if changed and not (pinning and binding.pinned):
        return Fresh("the model or effort changed")
    return Continue(binding, repin=changed)


def bind_refusal(*, runs: int, cut: bool, structured: bool, finished: bool) -> str | None:
    """Why the session must not be bound after this request (its conol-side history differs from
    what the client now holds), or ``None`` when it may."""
    if not finished:
        return "the turn did not finish"
    if runs != 1:
        return "a repair turn ran"
    if cut:
        return "the answer was cut (stop / max_tokens)"
    if structured:
        return "structured output (the session holds the format instruction)"
    return None


class TurnBoundary:
    """Filters a follow-up's events down to the new turn's."""

    def __init__(self, known_stages: frozenset[str], new_text: str) -> None:
        self.known = known_stages
        self.started = False
        tokens = normalize_text(new_text)
        self._marker = tokens[-200:]  # the end of our new turn: conol's own preamble comes first
        self._open: set[str] = set()  # known stages the new turn started in (its user log is there)

    def filter(self, event: ConolEvent) -> ConolEvent | None:
        """The event as far as it belongs to the new turn; ``None`` when nothing of it does."""
        if not isinstance(event, HistoryDelta):
            return event if self.started else None  # a replayed done / error of an earlier turn
        stages: list[Stage] = []
        for stage in event.stages:
            kept = self._stage(stage)
            if kept is not None:
                stages.append(kept)
        if not stages:
            return None
        return HistoryDelta(type="history_delta", stages=stages)

    def _stage(self, stage: Stage) -> Stage | None:
        sid = stage.id
        if sid is not None and sid not in self.known:
            self.started = True
            return stage
        if sid is not None and sid in self._open:
            return stage
        boundary = self._user_turn_index(stage.logs)
        if boundary is None:
            return None
        self.started = True
        if sid is not None:
            self._open.add(sid)
        # the logs before our user turn are the earlier turns'; previews of the event are the new turn's
        return Stage(id=sid, logs=stage.logs[boundary + 1 :], preview=stage.preview)

    def _user_turn_index(self, logs: list[LogEntry]) -> int | None:
        if not self._marker:
            return None
        for index in range(len(logs) - 1, -1, -1):
            log = logs[index]
            content = log.content
            if log.role == "user" and isinstance(content, str) and self._marker in normalize_text(content):
                return index
        return None

    def stage_ids(self, event: ConolEvent) -> list[str]:
        """Every stage id an event names (filtered or not): all of them are history afterwards."""
        if not isinstance(event, HistoryDelta):
            return []
        return [stage.id for stage in event.stages if stage.id is not None]


# --- what a follow-up sends --------------------------------------------------------------------


def render_turn(
    history: Sequence[Any], new: Sequence[Any], limits: ImageLimits | None = None
) -> list[MessagePart]:
    """The new messages as conol parts, rendered as the whole transcript would render them (a tool
    result names its tool from the call in the history); their images as pending parts, which the
    request's uploads resolve (``resolve_parts``)."""
    names = _tool_names_by_call_id([*history, *new])
    parts = render_parts(new, names, limits, first_index=len(history))
    if not any(isinstance(part, TextPart) for part in parts):
        raise BadRequest("the new turn has no text to send (every new message is empty)")
    return parts


def last_text(parts: Sequence[MessagePart]) -> str:
    """The last text part's content: what marks the new user turn in conol's log (an image part
    shows there as no text of ours)."""
    return next((part.content for part in reversed(parts) if isinstance(part, TextPart)), "")


class TurnBody(BaseModel):
    """``POST /api/sessions/{id}/messages`` (docs/protocol.md#follow-up-turns): the new turn only, no source,
    no model."""

    messages: list[MessagePart]
    timezone: str

    def to_json(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()  # an image part's ``mediaType``


def model_bodies(model: str, effort: str | None) -> list[dict[str, Any]]:
    """The ``/model`` calls that pin a session (docs/protocol.md#model-pinning): the model call resets the
    effort to null, so the effort comes last."""
    bodies: list[dict[str, Any]] = [{"agentModel": model, "agentEffort": None}]
    if effort is not None:
        bodies.append({"agentEffort": effort})
    return bodies
