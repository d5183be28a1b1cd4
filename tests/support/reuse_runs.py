"""One run of a conversation (``support.reuse_conversations``) through LiteLLM's SDK against a fake of its
own, under one reading (``support.reuse_dx``), with session reuse on or off: every request's outcome,
and what the fake saw of each request (the sessions it created, continued or touched).

With reuse on, the run also checks what only the fake can see, request by request:

* two callers never touch one session;
* a request continues a session (``POST /api/sessions/{id}/messages``) only when its history is the
  caller's previous exchange, answered in full (not cut, no call dropped), plus new messages (or that
  history with line endings and trailing spaces rewritten);
* a plain new user message after a plain answer in full continues the session (reuse happens) on a
  healthy upstream: before any 404 on a follow-up (which may mean conol has no follow-ups) and with the
  caller's session not expired since;
* no new session follows a turn POST answered 5xx in the same request (conol may have taken the turn:
  a second session would bill it twice).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import litellm
from litellm.exceptions import MidStreamFallbackError

from litellm_conol.fake import FakeConol, RequestRecord
from support.reuse_conversations import (
    MAX_TOKENS,
    RESULTS,
    STOP,
    Conversation,
    Turn,
    edited,
    normalised_history,
    user_message,
)
from support.reuse_dx import WEATHER_ASK, Reading, tool_calls_of
from support.timing import bound
from support.weather import OPENAI_TOOL as WEATHER

MODEL = "conol/claude-haiku-4-5"
RETRYABLE = (
    litellm.RateLimitError,
    litellm.InternalServerError,
    litellm.Timeout,
    litellm.ServiceUnavailableError,
)
RETRIES = 2  # a request that met an injected failure is sent again this often, the failure cleared
TOOL_ROUNDS = 3  # the dx scenario answers the first results; a client repeating old calls stops here
# quick polls and tool-call settling (the fake's turns take milliseconds); a hang ends in seconds
FAST = {
    "status_poll_interval": 0.05,
    "tool_call_settle": 0.05,
    "first_event_timeout": bound(5),
    "idle_timeout": bound(5),
    "timeout": bound(30),
}

SESSION_PATH = re.compile(r"/api/sessions/([^/]+)")
Answer = tuple[str, tuple[tuple[str, Any], ...], str | None]  # content, tool calls (name, arguments), finish


@dataclass
class Outcome:
    label: str
    answer: Answer | None = None
    error: str | None = None  # the exception's class and message
    retryable: bool = False
    injected: tuple[str, int] | None = None


@dataclass
class Exchange:
    """A caller's last request that was answered, and what the next may do with its session."""

    messages: list[dict[str, Any]]
    answer: dict[str, Any]
    whole: bool  # not cut, no call dropped: conol holds what the client holds
    plain: bool  # a text answer (no tool calls)


@dataclass
class Trace:
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    sessions: int = 0
    injected: bool = False  # a failure was injected (reuse on only)


class Run:
    def __init__(self, fake: FakeConol, reading: Reading, conversation: Conversation, reuse: bool) -> None:
        self.fake, self.reading, self.conversation, self.reuse = fake, reading, conversation, reuse
        self.trace = Trace()
        self.reason = ""  # why the last request was (not) reused, as its fields say
        self.history: dict[str, list[dict[str, Any]]] = {c: [] for c in conversation.callers}
        self.last: dict[str, Exchange | None] = dict.fromkeys(conversation.callers)
        self.expired: set[str] = set()  # callers whose session expired since their last exchange
        self.follow_ups_may_be_off = False  # a follow-up met a 404: conol may have none
        self.touched: dict[str, set[str]] = {c: set() for c in conversation.callers}
        self.abandoned: set[str] = set()

    async def play(self) -> Trace:
        for index, turn in enumerate(self.conversation.turns):
            for caller in self.conversation.callers:
                if caller not in self.abandoned:
                    await self._turn(caller, index, turn)
        alice, *others = self.touched.values()
        for other in others:
            if alice & other:
                self.trace.problems.append(
                    f"two callers touched the same session(s): {sorted(alice & other)}"
                )
        self.trace.sessions = len(self.fake.sessions)
        return self.trace

    async def _turn(self, caller: str, index: int, turn: Turn) -> None:
        history = self.history[caller]
        if turn.edit is not None:
            history[:] = edited(history, turn.edit)
        history.append(user_message(turn))
        label = f"{caller} turn {index + 1}"
        failure = turn.failure if self.reuse else None
        cut = turn.cut if not turn.cities else None
        answer = await self._request(caller, label, history, turn, cut, failure)
        rounds = 0
        while answer is not None and answer.get("tool_calls") and rounds < TOOL_ROUNDS:
            rounds += 1
            history.append(answer)
            for n, call in enumerate(answer["tool_calls"]):
                result = turn.results[n] if n < len(turn.results) else RESULTS[0]
                history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            label += " results"
            answer = await self._request(caller, label, history, turn, turn.cut, None)
        if answer is None:
            self.abandoned.add(caller)
            return
        if turn.retry:
            await self._request(caller, label + " again", history, turn, turn.cut, None)
        history.append(answer)

    async def _request(
        self,
        caller: str,
        label: str,
        messages: list[dict[str, Any]],
        turn: Turn,
        cut: str | None,
        failure: tuple[str, int] | None,
    ) -> dict[str, Any] | None:
        """Send ``messages`` (again after an injected failure); the answer as an assistant message."""
        for attempt in range(RETRIES + 1):
            name = label if attempt == 0 else f"{label} retry {attempt}"
            outcome, message = await self._attempt(caller, name, messages, turn, cut, failure, attempt > 0)
            self.trace.outcomes.setdefault(label, []).append(outcome)
            if message is not None or failure is None or not outcome.retryable:
                return message
            failure = None
        return None

    async def _attempt(
        self,
        caller: str,
        label: str,
        messages: list[dict[str, Any]],
        turn: Turn,
        cut: str | None,
        failure: tuple[str, int] | None,
        retrying: bool,
    ) -> tuple[Outcome, dict[str, Any] | None]:
        before = len(self.fake.requests)
        expected = self._expectation(caller, messages, failure)
        if retrying and expected is not None and expected.startswith("must:"):
            expected = None  # after a failure the turn may be retried on its session or on a new one
        self._inject(failure, caller)
        outcome = Outcome(label, injected=failure)
        message = None
        try:
            message, outcome.answer = await self._ask(caller, messages, turn, cut)
        except Exception as exc:  # every failure is an outcome the comparison judges
            # streamed, LiteLLM wraps whatever the provider raised after the first chunk: judge that
            cause = exc.original_exception if isinstance(exc, MidStreamFallbackError) else None
            outcome.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            outcome.retryable = isinstance(cause or exc, RETRYABLE)
        finally:
            self.fake.configure(create_status=None, create_fail_times=None, followup_status=None)
        self._check(caller, label, self.fake.requests[before:], expected, failure)
        if message is not None and not label.endswith(" again"):
            # the history goes on with the first answer, so the exchange to continue is the first one;
            # parallel_tool_calls=false keeps the first call: conol's agent still waits on the others
            calls = len(message.get("tool_calls") or ())
            asked = WEATHER_ASK.fullmatch(turn.user_text)
            dropped = asked is not None and 0 < calls < len(set(asked.group(1).split(", ")))
            # every dx text answer is longer than MAX_TOKENS and holds STOP: a cut always cuts it
            whole = not (cut is not None and calls == 0) and not dropped
            self.last[caller] = Exchange(list(messages), message, whole, not message.get("tool_calls"))
            self.expired.discard(caller)
        return outcome, message

    def _inject(self, failure: tuple[str, int] | None, caller: str) -> None:
        if failure is None:
            return
        self.trace.injected = True
        kind, status = failure
        if kind == "create":
            self.fake.configure(create_status=status, create_fail_times=1)
        elif kind == "followup":
            self.fake.configure(followup_status=status)
        else:
            self.fake.configure(gone_status=status)
            self.fake.expire_sessions()
            self.expired.update(self.conversation.callers)
        if status == 404 and kind != "create":
            self.follow_ups_may_be_off = True

    def _expectation(
        self, caller: str, messages: list[dict[str, Any]], failure: tuple[str, int] | None
    ) -> str | None:
        """``"must not"``/``"must"`` continue a session (with why), or ``None`` when either is right."""
        if not self.reuse:
            return "must not: reuse is off"
        last = self.last[caller]
        if last is None:
            return "must not: the caller has no earlier exchange"
        held = [*last.messages, last.answer]
        extends = len(messages) > len(held) and messages[: len(held)] == held
        rewritten = len(messages) > len(held) and normalised_history(messages[: len(held)]) == (
            normalised_history(held)
        )
        if not (extends or rewritten):
            return "must not: the history is not the caller's previous exchange plus new messages"
        if not last.whole:
            return "must not: the previous answer was cut or its calls dropped"
        new = messages[len(held) :]
        plain_turn = last.plain and len(new) == 1 and new[0]["role"] == "user"
        healthy = failure is None and not self.follow_ups_may_be_off and caller not in self.expired
        return (
            "must: a plain turn after a whole answer, healthy upstream"
            if (extends and plain_turn and healthy)
            else None
        )

    def _check(
        self,
        caller: str,
        label: str,
        records: Sequence[RequestRecord],
        expected: str | None,
        failure: tuple[str, int] | None,
    ) -> None:
        created = {r.session_id for r in records if r.method == "POST" and r.path == "/api/sessions"}
        created.discard(None)
        # a turn posted to a session this request created is a pinned start, not a follow-up
        follow_ups = [
            r
            for r in records
            if r.method == "POST" and r.path.endswith("/messages") and _session_of(r) not in created
        ]
        # what acts on a session (a create, a turn, /model): a status poll the caller's previous
        # request sent as it finished may reach the fake in this request's window, under load
        acting = [r for r in records if r.method == "POST"]
        self.touched[caller] |= {sid for sid in map(_session_of, acting) if sid is not None}
        # a turn POST (a follow-up, or a pinned start's first turn) that answered 5xx may have been taken
        failed = next(
            (
                i
                for i, r in enumerate(records)
                if r.method == "POST" and r.path.endswith("/messages") and (r.status or 0) >= 500
            ),
            None,
        )
        if failed is not None and any(r.path == "/api/sessions" for r in records[failed:]):
            self.trace.problems.append(
                f"{label}: a new session after a follow-up answered {records[failed].status} "
                "(conol may have accepted the turn)"
            )
        if expected is None:
            return
        if expected.startswith("must not") and follow_ups:
            self.trace.problems.append(f"{label}: continued a session, but it {expected}")
        continued = any(r.status == 202 for r in follow_ups) and not created
        if expected.startswith("must:") and not continued:
            self.trace.problems.append(f"{label}: did not continue its session ({expected}): {self.reason}")

    async def _ask(
        self, caller: str, messages: list[dict[str, Any]], turn: Turn, cut: str | None
    ) -> tuple[dict[str, Any], Answer]:
        extra_body: dict[str, Any] = {"model_pinning": self.reading.values["model_pinning"]}
        if not self.reuse:
            extra_body["session_reuse"] = "off"
        kwargs: dict[str, Any] = {**FAST, "tools": [WEATHER], "user": caller, "extra_body": extra_body}
        if cut == "stop":
            kwargs["stop"] = [STOP]
        elif cut == "max_tokens":
            kwargs["max_tokens"] = MAX_TOKENS
        if not turn.parallel:
            kwargs["parallel_tool_calls"] = False
        base = {"model": MODEL, "api_base": self.fake.base_url, "api_key": self.fake.token}
        call = {**base, "messages": [dict(m) for m in messages], **kwargs}
        fields: dict[str, Any] = {}
        if self.conversation.stream:
            chunks = [chunk async for chunk in await litellm.acompletion(**call, stream=True)]
            for chunk in chunks:
                fields.update(getattr(chunk, "provider_specific_fields", None) or {})
            response: Any = litellm.stream_chunk_builder(chunks, messages=call["messages"])
        else:
            response = await litellm.acompletion(**call)
            fields = response.choices[0].message.provider_specific_fields or {}
        self.reason = f"{fields.get('session_reuse_reason')}; not bound: {fields.get('session_not_bound')}"
        choice = response.choices[0]
        message: dict[str, Any] = {"role": "assistant", "content": choice.message.content or ""}
        if choice.message.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in choice.message.tool_calls
            ]
        calls = tuple((name, _frozen(args)) for name, args in tool_calls_of(message))
        return message, (message["content"], calls, choice.finish_reason)


def _session_of(record: RequestRecord) -> str | None:
    """The session a request named in its path (even one the fake no longer knows), or created."""
    match = SESSION_PATH.match(record.path)
    return match.group(1) if match is not None else record.session_id


def _frozen(value: Any) -> Any:
    return json.dumps(value, sort_keys=True)


async def play(conversation: Conversation, reading: Reading, reuse: bool) -> Trace:
    """The conversation under ``reading`` with reuse on or off, on a fake of its own."""
    scenario = reading.scenario
    fake = FakeConol(scenarios=[scenario], default_scenario=scenario.name, readings=reading.config)
    async with fake:
        return await Run(fake, reading, conversation, reuse).play()


async def play_everywhere(
    conversation: Conversation, readings: Sequence[Reading]
) -> list[tuple[Reading, Trace, Trace]]:
    """Reuse on and off under every reading, all at once: (reading, on, off) each."""
    runs = [play(conversation, reading, reuse) for reading in readings for reuse in (True, False)]
    traces = await asyncio.gather(*runs)
    return [(reading, traces[2 * i], traces[2 * i + 1]) for i, reading in enumerate(readings)]
