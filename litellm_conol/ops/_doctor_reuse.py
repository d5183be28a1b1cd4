"""``litellm-conol doctor --reuse``: can this account continue sessions, and how must models be pinned?

Two questions left open (docs/protocol.md#follow-up-turns, #readings), answered with the provider's own calls:

* ``followup``: a session is told a word; a follow-up turn on it (``POST …/messages``) asks for the
  word back. It passes only when the answer has the word (semantically continued, not just 2xx).
* ``pinning <model>``: an empty create (no run, nothing billed) says whether create honours the model;
  when it does not, ``/model`` is tried on that empty session.

Then it prints the deployment settings to use (``session_reuse``, ``model_pinning``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence

import httpx

from ..client import FollowUpRefused, FollowUpStart, SessionRun, Transport
from ..core import (
    Assembler,
    CatalogModel,
    ConolError,
    CreateSessionBody,
    Endpoint,
    TextPart,
    TurnBody,
    TurnBoundary,
    model_bodies,
)
from ._doctor_judge import Check

REMEMBER = "This is a memory check. Remember the word {word}. Reply with OK only."
RECALL = "What was the word I asked you to remember? Reply with that word only."


async def run_reuse_doctor(
    endpoint: Endpoint, models: Sequence[CatalogModel], client: httpx.AsyncClient, timeout: float = 30.0
) -> tuple[list[Check], str]:
    """The checks, and the deployment settings they call for (YAML lines)."""
    transport = Transport(endpoint, client, request_timeout=timeout)
    followup = await _check_followup(transport, models[0], timeout)
    pinning = [await _check_pinning(transport, model) for model in models]
    checks = [followup, *pinning]
    for check in checks:
        check.detail = check.detail.replace(endpoint.token, "***") if endpoint.token else check.detail
    return checks, _settings(followup, pinning)


def _body(model: CatalogModel, text: str) -> CreateSessionBody:
    return CreateSessionBody(messages=[TextPart(content=text)], timezone="UTC", agent_model=model.agent_model)


async def _check_followup(transport: Transport, model: CatalogModel, timeout: float) -> Check:
    started = time.monotonic()
    word = "zebra" + secrets.token_hex(3)
    try:
        first = SessionRun(transport, _body(model, REMEMBER.format(word=word)), Assembler(), timeout=timeout)
        async for _ in first.pieces():
            pass
        assert first.info is not None
        turn = TurnBody(messages=[TextPart(content=RECALL)], timezone="UTC")
        start = FollowUpStart(
            session_id=first.info.session_id,
            turn=turn,
            boundary=TurnBoundary(first.boundary.history()),
            model=model.agent_model,
            effort="low",
            info=first.info,
        )
        second = SessionRun(transport, first.body, Assembler(), timeout=timeout, start=start)
        async for _ in second.pieces():
            pass
    except FollowUpRefused as exc:
        return Check("followup", "fail", f"conol refused the follow-up: {exc.message}", _since(started))
    except ConolError as exc:
        return Check("followup", "fail", f"{type(exc).__name__}: {exc.message}", _since(started))
    answer = second.assembler.final_text.strip()
    if word.lower() in answer.lower():
        return Check(
            "followup", "pass", f"turn 2 recalled the word from turn 1 ({answer[:60]!r})", _since(started)
        )
    return Check(
        "followup", "fail", f"turn 2 did not recall {word!r} from turn 1: {answer[:80]!r}", _since(started)
    )


async def _check_pinning(transport: Transport, model: CatalogModel) -> Check:
    started, name = time.monotonic(), f"pinning {model.id}"
    empty = CreateSessionBody(messages=[], timezone="UTC", agent_model=model.agent_model)
    try:
        session_id, created = await transport.create_session(empty)
        if not created.model_downgraded:
            return Check(name, "pass", "create: create honours agentModel", _since(started))
        pinned = True
        for body in model_bodies(model.agent_model, None):
            pinned = await transport.set_model(session_id, body) and pinned
    except ConolError as exc:
        return Check(name, "fail", f"{type(exc).__name__}: {exc.message}", _since(started))
    if pinned:
        return Check(
            name, "pass", f"pin: create ran {created.effective_model!r}; /model pins it", _since(started)
        )
    return Check(
        name, "fail", f"none: create ran {created.effective_model!r} and /model refused it", _since(started)
    )


def _settings(followup: Check, pinning: Sequence[Check]) -> str:
    modes = {check.detail.split(":", 1)[0] for check in pinning if check.outcome == "pass"}
    if followup.failed:
        modes.discard("pin")  # the turn after a pinned empty create is a follow-up too
    mode = "auto" if len(modes) > 1 else next(iter(modes), "create")
    lines = [
        "# the deployment settings this account needs (litellm_params of each conol model):",
        f"session_reuse: {'off' if followup.failed else 'auto'}",
        f"model_pinning: {mode}",
    ]
    return "\n".join(lines)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
