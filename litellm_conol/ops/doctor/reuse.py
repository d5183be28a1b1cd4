"""``litellm-conol doctor --reuse``: can this account continue sessions, and how must models be pinned?

Two questions left open (docs/protocol.md#follow-up-turns, #readings), answered with the provider's own calls:

* ``followup``: a session is told a word; a follow-up turn on it (``POST …/messages``) asks for the
  word back. It passes only when the answer has the word (semantically continued, not just 2xx).
  Its stream is read as the provider reads it, from conol's echo of the posted turn: a stream that
  never shows that turn (or shows two) fails the check and says why, as it switches session reuse
  off for the upstream at run time (docs/session-reuse.md#fail-safe).
* ``followup tool``: a session offered one client tool is asked to call it; the call's result goes
  back as a follow-up turn, rendered as the provider renders a tool result
  (docs/protocol.md#follow-up-turns), and the check passes only when the answer quotes a value only
  that result held. It is not tried when conol refused the follow-up call itself (404/405): the
  round trip posts to the same endpoint, and the answer is known without spending a session.
* ``pinning <model>``: an empty create (no run, nothing billed) says whether create honours the model;
  when it does not, ``/model`` is tried on that empty session.

Then it prints how many sessions the checks created (one per check that ran a turn, one empty
session per pinned model) and the deployment settings to use (``session_reuse``, ``model_pinning``).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from ...client.driver import SessionRun
from ...client.follow_up import FollowUpRefused, FollowUpStart, FollowUpUnverified
from ...client.transport import Transport
from ...core.answer.assembler import Assembler
from ...core.errors import ConolError
from ...core.models.catalog import CatalogModel
from ...core.protocol.end_policy import Timing
from ...core.protocol.endpoint import Endpoint
from ...core.protocol.follow_up import TurnBody, pinning_calls
from ...core.protocol.turn_boundary import TurnBoundary
from ...core.protocol.wire import CreateSessionBody, CreateSessionResult, MessagePart, TextPart
from ...core.request.render import convert_tools
from ...reuse.fingerprint import returned_assistant
from ...reuse.turns import render_turn
from .report import Check, Stopwatch, scrubbed
from .session import session_body

REMEMBER = "This is a memory check. Remember the word {word}. Reply with OK only."
RECALL = "What was the word I asked you to remember? Reply with that word only."
TOOL_PROMPT = (
    "This is a tool check. Call get_weather for Paris, then answer in one sentence that quotes "
    "exactly what it returned."
)
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
# a follow-up refused with these means the endpoint does not exist here: the tool round trip,
# which posts to it too, is not tried (docs/protocol.md#follow-up-turns)
ENDPOINT_REFUSED = frozenset({404, 405})


@dataclass
class _CountingTransport(Transport):
    """The HTTP transport, counting the sessions the checks create (what ``doctor --reuse`` costs)."""

    sessions: int = 0
    empty_sessions: int = 0

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        created = await super().create_session(body)
        self.sessions += 1
        self.empty_sessions += not body.messages
        return created


async def run_reuse_doctor(
    endpoint: Endpoint, models: Sequence[CatalogModel], client: httpx.AsyncClient, timeout: float = 30.0
) -> tuple[list[Check], str]:
    """The checks, and the deployment settings they call for (YAML lines)."""
    transport = _CountingTransport(endpoint, client, request_timeout=timeout)
    followup, refused = await _check_followup(transport, models[0], timeout)
    if refused in ENDPOINT_REFUSED:
        tool = Check(
            "followup tool",
            "skip",
            f"not tried: conol refused the follow-up call above (HTTP {refused}), which the tool result "
            "would be posted with too (one session saved)",
        )
    else:
        tool = await _check_tool_round_trip(transport, models[0], timeout)
    pinning = [await _check_pinning(transport, model) for model in models]
    checks = [scrubbed(check, endpoint.token) for check in (followup, tool, *pinning)]
    return checks, "\n".join([_spent(transport), _settings(followup, tool, pinning)])


async def _run(run: SessionRun) -> SessionRun:
    async for _ in run.pieces():
        pass
    return run


async def _follow_up(
    transport: Transport, first: SessionRun, parts: list[MessagePart], model: CatalogModel, timeout: float
) -> SessionRun:
    """The next turn on ``first``'s session, as the provider sends it: ``parts`` only, and only what
    its stream shows after them counts (docs/protocol.md#follow-up-turns)."""
    assert first.info is not None
    start = FollowUpStart(
        session_id=first.info.session_id,
        turn=TurnBody(messages=parts, timezone="UTC"),
        boundary=TurnBoundary(first.boundary.history()),
        model=model.agent_model,
        effort="low",
        info=first.info,
    )
    assembler = Assembler(client_tools=frozenset(tool.name for tool in first.body.tools or ()))
    # the turn must show up within half the check's time, so a stream that never shows it is
    # reported as such (the fail-safe), not as a timeout of the whole check
    timing = Timing(first_event_timeout=min(Timing().first_event_timeout, timeout / 2))
    run = SessionRun(transport, first.body, assembler, timing=timing, timeout=timeout, start=start)
    return await _run(run)


async def _check_followup(
    transport: Transport, model: CatalogModel, timeout: float
) -> tuple[Check, int | None]:
    """The check, and the HTTP status when conol refused the follow-up call itself."""
    stopwatch = Stopwatch()
    word = "zebra" + secrets.token_hex(3)
    try:
        body = session_body(model, REMEMBER.format(word=word))
        first = await _run(SessionRun(transport, body, Assembler(), timeout=timeout))
        second = await _follow_up(transport, first, [TextPart(content=RECALL)], model, timeout)
    except FollowUpRefused as exc:
        detail = f"conol refused the follow-up: {exc.message}"
        return Check("followup", "fail", detail, stopwatch.elapsed()), int(exc.status_code)
    except FollowUpUnverified as exc:
        return Check("followup", "fail", unreadable(exc), stopwatch.elapsed()), None
    except ConolError as exc:
        return Check("followup", "fail", f"{type(exc).__name__}: {exc.message}", stopwatch.elapsed()), None
    answer = second.assembler.final_text.strip()
    if word.lower() in answer.lower():
        detail = f"turn 2 recalled the word from turn 1 ({answer[:60]!r})"
        return Check("followup", "pass", detail, stopwatch.elapsed()), None
    detail = f"turn 2 did not recall {word!r} from turn 1: {answer[:80]!r}"
    return Check("followup", "fail", detail, stopwatch.elapsed()), None


async def _check_tool_round_trip(transport: Transport, model: CatalogModel, timeout: float) -> Check:
    """A client tool call, its result sent as a follow-up, and an answer that uses the result."""
    stopwatch, name = Stopwatch(), "followup tool"
    code = "wx" + secrets.token_hex(3)  # only the tool result holds it: quoting it proves it was read
    result = f"light rain, 14 C, station code {code}"
    body = session_body(model, TOOL_PROMPT, convert_tools([WEATHER_TOOL]))
    try:
        assembler = Assembler(client_tools=frozenset({"get_weather"}))
        first = await _run(SessionRun(transport, body, assembler, timeout=timeout))
        calls = first.assembler.tool_calls
        if not calls:
            said = first.assembler.final_text.strip()
            return Check(name, "fail", f"turn 1 did not call get_weather: {said[:80]!r}", stopwatch.elapsed())
        user = {"role": "user", "content": TOOL_PROMPT}
        assistant = returned_assistant(
            first.assembler.final_text, [(calls[0].id, calls[0].name, calls[0].arguments)]
        )
        new = [{"role": "tool", "tool_call_id": calls[0].id, "content": result}]
        second = await _follow_up(transport, first, render_turn([user, assistant], new), model, timeout)
    except FollowUpRefused as exc:
        return Check(
            name, "fail", f"conol refused the tool result as a follow-up: {exc.message}", stopwatch.elapsed()
        )
    except FollowUpUnverified as exc:
        return Check(name, "fail", unreadable(exc), stopwatch.elapsed())
    except ConolError as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc.message}", stopwatch.elapsed())
    answer = second.assembler.final_text.strip()
    if code in answer.lower():
        call = f"{calls[0].name}({calls[0].arguments})"
        detail = f"{call} called; the answer quoted {code!r} from its result: {answer[:80]!r}"
        return Check(name, "pass", detail, stopwatch.elapsed())
    if second.assembler.tool_calls and not answer:
        again = second.assembler.tool_calls[0]
        detail = f"turn 2 called {again.name}({again.arguments}) again instead of answering with the result"
        return Check(name, "fail", detail, stopwatch.elapsed())
    detail = f"turn 2 did not use the tool result (no {code!r} in the answer): {answer[:80]!r}"
    return Check(name, "fail", detail, stopwatch.elapsed())


async def _check_pinning(transport: Transport, model: CatalogModel) -> Check:
    stopwatch, name = Stopwatch(), f"pinning {model.id}"
    empty = CreateSessionBody(messages=[], timezone="UTC", agent_model=model.agent_model)
    try:
        session_id, created = await transport.create_session(empty)
        if not created.model_downgraded:
            return Check(name, "pass", "create: create honours agentModel", stopwatch.elapsed())
        pinned = True
        for body in pinning_calls(model.agent_model, None):
            pinned = await transport.set_model(session_id, body) and pinned
    except ConolError as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc.message}", stopwatch.elapsed())
    if pinned:
        return Check(
            name, "pass", f"pin: create ran {created.effective_model!r}; /model pins it", stopwatch.elapsed()
        )
    return Check(
        name,
        "fail",
        f"none: create ran {created.effective_model!r} and /model refused it",
        stopwatch.elapsed(),
    )


def unreadable(exc: FollowUpUnverified) -> str:
    """Why follow-ups cannot be trusted on this upstream, as the fail-safe finds it at run time."""
    return (
        f"the follow-up's stream cannot be read safely: {exc.message}. At run time a request that meets "
        "this gets a retryable error and session reuse turns itself off for this upstream for "
        "session_reuse_backoff seconds (docs/session-reuse.md#fail-safe)"
    )


def _spent(transport: _CountingTransport) -> str:
    ran = transport.sessions - transport.empty_sessions
    return (
        f"# sessions these checks created: {transport.sessions} ({ran} ran turns, "
        f"{transport.empty_sessions} empty for pinning, ran nothing)"
    )


def _settings(followup: Check, tool: Check, pinning: Sequence[Check]) -> str:
    modes = {check.detail.split(":", 1)[0] for check in pinning if check.outcome == "pass"}
    # reuse continues tool loops above all (an agent's turns are tool results): both must work
    reuse = not (followup.failed or tool.failed or tool.outcome == "skip")
    if followup.failed:
        modes.discard("pin")  # the turn after a pinned empty create is a follow-up too
    mode = "auto" if len(modes) > 1 else next(iter(modes), "create")
    lines = [
        "# the deployment settings this account needs (litellm_params of each conol model):",
        f"session_reuse: {'auto' if reuse else 'off'}",
        f"model_pinning: {mode}",
    ]
    return "\n".join(lines)
