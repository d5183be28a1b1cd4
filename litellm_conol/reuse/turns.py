"""A follow-up turn on a conol session, decided without I/O: whether a request continues a bound
session (:func:`plan_turn`), whether a finished one may be bound (:func:`why_not_bound`), and what a
follow-up sends (:func:`render_turn`). Where the new turn begins in the stream:
``core/protocol/turn_boundary.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.config.reuse_options import ReuseOptions
from ..core.errors import BadRequest
from ..core.protocol.wire import LogEntry, MessagePart, TextPart
from ..core.request.images import ImageLimits
from ..core.request.render import render_parts, result_labels
from .fingerprint import Binding


@dataclass(frozen=True)
class Continue:
    binding: Binding
    repin: bool  # the model or effort changed and the session was pinned: /model before the turn
    reattach: bool = False  # this very turn was posted before (its fate unknown): read, do not post


@dataclass(frozen=True)
class Fresh:
    reason: str


@dataclass(frozen=True)
class Ask:
    """What a request asks of the session it would continue."""

    model: str
    effort: str
    turn: str = ""  # the new turn's digest
    answered: frozenset[str] = frozenset()  # the calls its tool results answer (fingerprint.call_refs)


def plan_turn(
    binding: Binding | None,
    ask: Ask,
    *,
    options: ReuseOptions,
    continuable: bool,
    upstream_refused: bool,
    pinning: bool,
    unverified: str | None = None,
) -> Continue | Fresh:
    """Continue ``binding`` (the session that holds this request's history), or why not.

    ``continuable``: the request has an earlier history and a new turn after it (and asks nothing a
    follow-up cannot carry). ``pinning``: this upstream and model are pinned with ``/model``, so a
    model or effort change re-pins the same session instead of starting a new one. ``unverified``:
    why this upstream's follow-up streams cannot be read safely now (docs/session-reuse.md#fail-safe).
    """
    if options.mode == "off":
        return Fresh("session_reuse is off")
    if not continuable:
        return Fresh("no earlier turn to continue")
    if upstream_refused:
        return Fresh("this upstream does not take follow-ups")
    if unverified is not None:
        return Fresh(f"follow-ups on this upstream are unverified ({unverified})")
    if binding is None:
        return Fresh("no session holds this history")
    if binding.pending_turn and binding.pending_turn != ask.turn:
        return Fresh("conol may hold another turn on that session (an earlier post timed out)")
    if set(binding.pending_calls) != set(ask.answered):
        # conol's agent waits on exactly the calls it made: a turn answering others (or none) is
        # not the conversation the session holds
        return Fresh("the new turn does not answer the tool calls conol waits on")
    changed = binding.model != ask.model or binding.effort != ask.effort
    if changed and not (pinning and binding.pinned):
        return Fresh("the model or effort changed")
    return Continue(binding, repin=changed, reattach=bool(binding.pending_turn))


def why_not_bound(
    *,
    runs: int,
    cut: bool,
    structured: bool,
    finished: bool,
    withheld_calls: bool = False,
    unnamed_stages: bool = False,
    stageless: bool = False,
    echoed: bool = True,
    rewritten: bool = False,
    tail: str | None = None,
) -> str | None:
    """Why the session must not be bound after this request (its conol-side history differs from
    what the client now holds, or a next boundary could not find its turn), or ``None`` when it may.
    ``tail``: what conol wrote of the previous turn after the client stopped reading, when the
    client does not hold it (:func:`tail_held_back`)."""
    if not finished:
        return "the turn did not finish"
    if runs != 1:
        return "a repair turn ran"
    if cut:
        return "the answer was cut (stop / max_tokens)"
    if structured:
        return "structured output (the session holds the format instruction)"
    if withheld_calls:
        return "conol made tool calls the client did not get (parallel_tool_calls / tool_choice)"
    if unnamed_stages:
        return "conol's stages carry no ids (no boundary for the next turn)"
    if stageless:
        return "conol sent the answer without stages (no boundary for the next turn)"
    if not echoed:
        return "conol's stream never showed the turn's user message (no anchor for the next turn)"
    if rewritten:
        return "the streamed answer was rewritten after it was sent (the client holds other text)"
    if tail is not None:
        return f"conol holds more than the client: {tail}"
    return None


def tail_held_back(logs: Sequence[LogEntry], client_tools: frozenset[str], expose: bool) -> str | None:
    """What conol wrote after the client stopped reading (the previous turn's tail, never emitted)
    that the client does not hold: answer text, or a tool call the client would have got. Reasoning
    and conol's own built-in tool runs are conol's hidden state, as any session's are: recorded, and
    the session goes on."""
    for log in logs:
        calls = log.content if _is_tool_use(log) and isinstance(log.content, list) else []
        if any(use.name and (expose or use.name in client_tools) for use in calls):
            return "it made a tool call after the previous answer ended"
        said = log.role == "assistant" and log.type in (None, "message", "text")
        if said and not calls and _text(log.content):
            return "it wrote more answer text after the previous answer ended"
    return None


def _is_tool_use(log: LogEntry) -> bool:
    content = log.content
    return isinstance(content, list) and any(use.type == "tool_call" or use.name for use in content)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "".join(getattr(part, "text", None) or "" for part in content).strip()
    return ""


# --- what a follow-up sends --------------------------------------------------------------------


def render_turn(
    history: Sequence[Any], new: Sequence[Any], limits: ImageLimits | None = None
) -> list[MessagePart]:
    """The new messages as conol parts, rendered as the whole transcript would render them (a tool
    result names its tool from the call in the history); their images as pending parts, which the
    request's uploads resolve (``resolve_parts``)."""
    answers = result_labels([*history, *new])
    parts = render_parts(new, answers, limits, first_index=len(history))
    if not any(isinstance(part, TextPart) for part in parts):
        raise BadRequest("the new turn has no text to send (every new message is empty)")
    return parts
