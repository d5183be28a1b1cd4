"""One run of a conversation (``support.reuse_conversations``) through LiteLLM's SDK against a fake of its
own, under one reading (``support.reuse_dx``), with session reuse on or off: every request's outcome
(everything a client sees of the answer), and what the fake saw of each request.

A request that meets an injected failure (reuse on only), or the fail-safe of a stream the client
cannot read (the ``stageless_turns="follow-ups"`` reading), is sent again until answered: the only
second failure allowed is a reattach that found nothing of a turn a 5xx post left unknown (a
``Timeout``; the next retry starts afresh). Any other failure is kept as the outcome, and the caller
stops there: the comparison reports it (``Trace.problems`` says so), never skips it.

With reuse on, the run also checks what only the fake and the answer's fields can show, request by
request (``support.reuse_checks``).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import litellm
from litellm.exceptions import MidStreamFallbackError

import litellm_conol
from litellm_conol.fake import FakeConol
from litellm_conol.reuse.store import clear_stores
from support.reuse_checks import Checker, Exchange
from support.reuse_conversations import MAX_TOKENS, RESULTS, STOP, Conversation, Turn, edited, user_messages
from support.reuse_dx import Reading, tool_calls_of
from support.timing import bound
from support.weather import OPENAI_TOOL as WEATHER

MODEL = "conol/claude-haiku-4-5"
RETRYABLE = (
    litellm.RateLimitError,
    litellm.InternalServerError,
    litellm.Timeout,
    litellm.ServiceUnavailableError,
)
RETRIES = 2  # a request that met an injected failure (or the fail-safe) is sent again at most this often
TOOL_ROUNDS = 3  # the dx scenario answers the first results; a client repeating old calls stops here
# quick polls, settling and tool-call settling (the fake's turns take milliseconds); a hang ends in
# seconds; the settle window outlasts the lagging status (0.3 s), and the slow first token of the
# readings (1.0 s) a settle window and a poll
FAST = {
    "status_poll_interval": 0.05,
    "tool_call_settle": 0.05,
    "settle_window": 0.5,
    "first_event_timeout": bound(8),
    "idle_timeout": bound(8),
    "timeout": bound(30),
}
UNREADABLE = "never showed the turn we posted"  # the fail-safe's words (client/follow_up.py)


@dataclass(frozen=True)
class Answer:
    """Everything a client sees of an answer. ``usage``: (prompt, completion, reasoning, source), the
    prompt as its difference from LiteLLM's count of the request's messages (tool call ids are new
    in every run); conol's reported count of a continued session's context is not reuse off's, so a
    reported usage is compared by its source alone (docs/session-reuse.md#what-an-answer-reports)."""

    content: str
    reasoning: str
    calls: tuple[tuple[str, str], ...]  # (name, arguments as canonical JSON)
    finish: str | None
    usage: tuple[int | None, int | None, int | None, str]
    effective_model: str | None
    downgraded: bool | None
    builtins: str  # the built-in tool runs, as canonical JSON

    def compared(self, unpinned: bool = False) -> Answer:
        fields = dict(self.__dict__)
        if self.usage[3] == "reported":
            fields["usage"] = (None, None, None, "reported")
        if unpinned:
            fields["effective_model"] = fields["downgraded"] = None
        return Answer(**fields)


@dataclass
class Outcome:
    label: str
    answer: Answer | None = None
    error: str | None = None  # the exception's class and message
    retryable: bool = False
    injected: tuple[str, int] | None = None
    reused: bool | None = None
    # an injected 404 said this upstream has no follow-ups: pinning (a turn posted on an empty
    # session) stops with them (docs/session-reuse.md#when-a-follow-up-fails), so where create
    # ignores the model, reuse on runs conol's default from then on
    unpinned: bool = False


@dataclass
class Trace:
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    sessions: int = 0
    injected: int = 0  # failures injected (reuse on only): each may cost a session of its own
    fail_safe: int = 0  # requests answered by the fail-safe's retryable error


class Run:
    def __init__(self, fake: FakeConol, reading: Reading, conversation: Conversation, reuse: bool) -> None:
        self.fake, self.reading, self.conversation, self.reuse = fake, reading, conversation, reuse
        self.trace = Trace()
        self.history: dict[str, list[dict[str, Any]]] = {c: [] for c in conversation.callers}
        self.checker = Checker(fake, reading, conversation, reuse, self.trace)

    async def play(self) -> Trace:
        stopped: set[str] = set()
        for index, turn in enumerate(self.conversation.turns):
            for caller in self.conversation.callers:
                if caller not in stopped and not await self._turn(caller, index, turn):
                    stopped.add(caller)
                    self.trace.problems.append(f"{caller} stopped at turn {index + 1}: a request failed")
        self.checker.finish()
        self.trace.sessions = len(self.fake.sessions)
        return self.trace

    async def _turn(self, caller: str, index: int, turn: Turn) -> bool:
        history = self.history[caller]
        if turn.edit is not None:
            history[:] = edited(history, turn.edit)
        if not history and self.conversation.system is not None:
            history.append({"role": "system", "content": self.conversation.system})
        history += user_messages(turn)
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
            if turn.after_results is not None:
                history.append({"role": "user", "content": turn.after_results})
            label += " results"
            answer = await self._request(caller, label, history, turn, turn.cut, None)
        if answer is None:
            return False
        if turn.retry:
            await self._request(caller, label + " again", history, turn, turn.cut, None)
        history.append(answer)
        return True

    async def _request(
        self,
        caller: str,
        label: str,
        messages: list[dict[str, Any]],
        turn: Turn,
        cut: str | None,
        failure: tuple[str, int] | None,
    ) -> dict[str, Any] | None:
        """Send ``messages``, again after an injected failure or the fail-safe; the answer as an
        assistant message, or ``None`` (the outcome says why)."""
        injected = failure
        for attempt in range(RETRIES + 1):
            outcome, message = await self._attempt(caller, label, messages, turn, cut, failure, attempt)
            self.trace.outcomes.setdefault(label, []).append(outcome)
            if message is not None or not self._may_retry(outcome, injected, attempt):
                return message
            failure = None
        return None

    def _may_retry(self, outcome: Outcome, injected: tuple[str, int] | None, attempt: int) -> bool:
        if not outcome.retryable:
            return False
        if attempt == 0 and injected is not None:
            return True
        if outcome.error is not None and UNREADABLE in outcome.error:
            self.trace.fail_safe += 1
            return True
        # a retry reading a turn a 5xx post left unknown, and finding nothing of it: a timeout
        post_failed = injected is not None and injected[0] in ("followup", "taken") and injected[1] >= 500
        return attempt == 1 and post_failed and (outcome.error or "").startswith("Timeout")

    async def _attempt(
        self,
        caller: str,
        label: str,
        messages: list[dict[str, Any]],
        turn: Turn,
        cut: str | None,
        failure: tuple[str, int] | None,
        attempt: int,
    ) -> tuple[Outcome, dict[str, Any] | None]:
        before = len(self.fake.requests)
        expect = self.checker.expectation(caller, messages, failure, retrying=attempt > 0)
        self._inject(failure)
        outcome = Outcome(label if not attempt else f"{label} retry {attempt}", injected=failure)
        pins = (
            self.reading.values["create_model"] == "ignore"
            and self.reading.client["model_pinning"] != "create"
        )
        outcome.unpinned = pins and self.checker.follow_ups_may_be_off
        message, fields = None, {}
        try:
            message, outcome.answer, fields = await self._ask(caller, messages, turn, cut)
            outcome.reused = bool(fields.get("session_reused"))
        except Exception as exc:  # every failure is an outcome the comparison judges
            # streamed, LiteLLM wraps whatever the provider raised after the first chunk: judge that
            cause = exc.original_exception if isinstance(exc, MidStreamFallbackError) else None
            outcome.error = f"{type(cause or exc).__name__}: {str(exc)[:300]}"
            outcome.retryable = isinstance(cause or exc, RETRYABLE)
        finally:
            self.fake.configure(
                create_status=None,
                create_fail_times=None,
                followup_status=None,
                followup_status_scope="all",
                followup_taken_status=None,
            )
        done = Exchange(list(messages), message, fields, turn, cut) if message is not None else None
        self.checker.check(caller, outcome.label, self.fake.requests[before:], expect, failure, done)
        return outcome, message

    def _inject(self, failure: tuple[str, int] | None) -> None:
        if failure is None:
            return
        self.trace.injected += 1
        kind, status = failure
        if kind == "create":
            self.fake.configure(create_status=status, create_fail_times=1)
        elif kind == "followup":  # the bound session's turn: a pinned start's first turn goes through
            self.fake.configure(followup_status=status, followup_status_scope="continued")
        elif kind == "taken":
            self.fake.configure(followup_taken_status=status)
        else:
            self.fake.configure(gone_status=status)
            self.fake.expire_sessions()
        self.checker.injected(failure)

    async def _ask(
        self, caller: str, messages: list[dict[str, Any]], turn: Turn, cut: str | None
    ) -> tuple[dict[str, Any], Answer, dict[str, Any]]:
        extra_body: dict[str, Any] = {"model_pinning": self.reading.client["model_pinning"]}
        if not self.reuse:
            extra_body["session_reuse"] = "off"
        kwargs: dict[str, Any] = {**FAST, "tools": [WEATHER], "user": caller, "extra_body": extra_body}
        kwargs["builtin_tools"] = self.reading.client["builtin_tools"]
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
        message = _assistant(response.choices[0].message)
        counted = litellm.token_counter(messages=call["messages"])
        return message, _answer(response, message, fields, counted), fields


def _assistant(reply: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in reply.tool_calls
        ]
    return message


def _answer(response: Any, message: dict[str, Any], fields: dict[str, Any], counted: int) -> Answer:
    choice, usage = response.choices[0], response.usage
    details = getattr(usage, "completion_tokens_details", None)
    return Answer(
        content=message["content"],
        reasoning=getattr(choice.message, "reasoning_content", None) or "",
        calls=tuple((name, _canonical(args)) for name, args in tool_calls_of(message)),
        finish=choice.finish_reason,
        usage=(
            usage.prompt_tokens - counted,
            usage.completion_tokens,
            getattr(details, "reasoning_tokens", None),
            str(fields.get("usage")),
        ),
        effective_model=fields.get("effective_model"),
        downgraded=fields.get("model_downgraded"),
        builtins=_canonical(fields.get("builtin_tools") or []),
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


async def play(conversation: Conversation, reading: Reading, reuse: bool) -> Trace:
    """The conversation under ``reading`` with reuse on or off, on a fake of its own."""
    scenario = reading.scenario
    fake = FakeConol(scenarios=[scenario], default_scenario=scenario.name, readings=reading.config)
    async with fake:
        return await Run(fake, reading, conversation, reuse).play()


def play_everywhere(
    conversation: Conversation, readings: Sequence[Reading]
) -> list[tuple[Reading, Trace, Trace]]:
    """Reuse on and off under every reading, all at once: (reading, on, off) each. Half of the
    readings run in a second process (``worker``), so the two cores share the work."""
    half = len(readings) // 2
    remote = worker().submit(play_rows, conversation, list(readings[half:]))
    try:
        local = play_rows(conversation, list(readings[:half]))
    finally:
        traces = local + remote.result()
    return [(reading, traces[2 * i], traces[2 * i + 1]) for i, reading in enumerate(readings)]


def play_rows(conversation: Conversation, readings: Sequence[Reading]) -> list[Trace]:
    """Reuse on, then off, under each reading, all at once (in this process)."""
    os.environ["CONOL_FAILURE_MEMORY_SECONDS"] = "0"  # a conversation repeats its requests on every row
    litellm.suppress_debug_info = True
    litellm_conol.register()
    clear_stores()

    async def everything() -> list[Trace]:
        runs = [play(conversation, reading, reuse) for reading in readings for reuse in (True, False)]
        return list(await asyncio.gather(*runs))

    return asyncio.run(everything())


_workers: list[ProcessPoolExecutor] = []


def worker() -> ProcessPoolExecutor:
    """One process for the second half of the rows, started once (it imports LiteLLM once)."""
    if not _workers:
        _workers.append(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")))
        atexit.register(_workers[0].shutdown, cancel_futures=True)
    return _workers[0]
