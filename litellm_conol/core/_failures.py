"""Agent failures, classified: the one rule for what a client may retry.

``classify_failure`` is a pure function of what conol said (an ``error`` event's message, an
error-type preview's text, or a failed status): the event reader and the stream decoder both use
it. ``FailureMemory`` adds the rule a single message cannot give: the same request failing the same
way twice is deterministic. It keeps no clock; callers pass ``now``.

Why it matters: an ``error`` event used to be a 500 for every failure, which the Router and every
SDK retry. Claude Code retried one deterministic failure 9 times (10 paid sessions), Codex 5 times.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from ._errors import AgentFailed, AgentFailedPermanently, OutOfCredits

FailureKind = Literal["out_of_credits", "deterministic", "transient", "unexplained"]
FailureSource = Literal["event", "preview", "status"]

# Lower-case fragments, checked in this order. Sources: the credit text is conol's own
# (docs/protocol.md#stream); the others are what model APIs say for requests that cannot succeed as sent, or
# for a moment's trouble, and what an agent passes on from them.
OUT_OF_CREDITS_TEXT = (
    "credit balance is too low",
    "insufficient credit",
    "out of credits",
    "not enough credits",
)
DETERMINISTIC_TEXT = (
    "prompt is too long",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "invalid_request_error",
    "invalid request",
    "not supported",
    "unsupported",
    "not allowed",
    "permission denied",
    "content policy",
)
TRANSIENT_TEXT = (
    "overloaded",
    "rate limit",
    "too many requests",
    "timed out",
    "timeout",
    "temporarily",
    "try again",
    "unavailable",
    "connection reset",
)


def classify_failure(message: str | None, source: FailureSource = "event") -> FailureKind:
    """What a failure is, from conol's words: out of credits, deterministic, transient, or unexplained
    (a failed status without a message, or words we do not know: retryable once, see FailureMemory)."""
    if source == "status" or not message:
        return "unexplained"
    text = message.lower()
    for kind, fragments in (
        ("out_of_credits", OUT_OF_CREDITS_TEXT),
        ("deterministic", DETERMINISTIC_TEXT),
        ("transient", TRANSIENT_TEXT),
    ):
        if any(fragment in text for fragment in fragments):
            return kind  # type: ignore[return-value]  # the tuple's literals
    return "unexplained"


def failure_error(
    message: str | None, source: FailureSource = "event", *, status: str | None = None, session_id: str = ""
) -> AgentFailed:
    """The exception for a failure, by its class alone (the first time it is seen)."""
    kind = classify_failure(message, source)
    if source == "status":
        text = f"conol session {session_id} ended with status {status!r}"
        signature = f"status:{status}"
    else:
        text = f"conol agent error: {message or 'no message given'}"
        signature = f"{source}:{' '.join((message or '').split())}"
    error: AgentFailed
    if kind == "out_of_credits":
        error = OutOfCredits(
            f"{text} (the conol account is out of credits: top it up; not retried)", headers=NO_RETRY
        )
    elif kind == "deterministic":
        error = AgentFailedPermanently(
            f"{text} (a retry would fail the same way: not retried)", headers=NO_RETRY
        )
    else:
        error = AgentFailed(text)
        error.kind = kind
    error.signature = signature
    error.agent_message = message
    return error


# Honoured by the openai and anthropic SDKs (``_should_retry``). LiteLLM's proxy passes provider
# headers on prefixed (``llm_provider-x-should-retry``), so through the proxy the status decides.
NO_RETRY = {"x-should-retry": "false"}


def failure_key(base_url: str, token: str, body: bytes) -> str:
    """A request's key: the account (conol and token) and the session body, hashed, so neither the
    token nor the prompt is kept."""
    account = hashlib.sha256(f"{base_url}\n{token}".encode()).hexdigest()
    return hashlib.sha256(account.encode() + b"\n" + body).hexdigest()


@dataclass
class _Seen:
    signature: str
    at: float
    error: AgentFailed | None  # set once the failure is known deterministic: later attempts get it


class FailureMemory:
    """Recent agent failures per request, for ``ttl`` seconds.

    * A deterministic failure (or out of credits) is remembered: the same request within ``ttl``
      is refused without a new session. (Not the account's other requests: after a top-up they
      must run at once.)
    * An unexplained failure is remembered by signature: if the same request fails the same way
      again within ``ttl``, that second failure is deterministic (400) and remembered as such.
    * Transient failures stay retryable; a success forgets the request.
    """

    def __init__(self, ttl: float = 300.0, capacity: int = 4096) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self._seen: OrderedDict[str, _Seen] = OrderedDict()

    def refusal(self, request_key: str, now: float) -> AgentFailed | None:
        """The error to raise instead of starting a session, if this request is known to fail."""
        seen = self._live(request_key, now)
        if seen is not None and seen.error is not None:
            return _refused(seen.error, now - seen.at)
        return None

    def record(self, request_key: str, error: AgentFailed, now: float) -> AgentFailed:
        """Note ``error`` for this request; the error to raise (a repeat becomes deterministic)."""
        if self.ttl <= 0:
            return error
        if isinstance(error, AgentFailedPermanently | OutOfCredits):
            self._put(request_key, _Seen(error.signature, now, error))
            return error
        if error.kind == "transient":
            return error
        before = self._live(request_key, now)
        if before is not None and before.signature == error.signature:
            repeated = AgentFailedPermanently(
                f"{error.message} (the same request failed the same way {now - before.at:.0f} s before: "
                "a retry would fail again, not retried)",
                headers=NO_RETRY,
            )
            repeated.signature = error.signature
            self._put(request_key, _Seen(error.signature, now, repeated))
            return repeated
        self._put(request_key, _Seen(error.signature, now, None))
        return error

    def forget(self, request_key: str) -> None:
        self._seen.pop(request_key, None)

    # -- a store shared by processes keeps one request's record as JSON; the rules stay here --

    def export(self, request_key: str) -> str | None:
        """This request's record as JSON (for :meth:`adopt` in another process), or ``None``."""
        seen = self._seen.get(request_key)
        if seen is None:
            return None
        error = (
            None
            if seen.error is None
            else {"class": type(seen.error).__name__, "message": seen.error.message}
        )
        return json.dumps({"signature": seen.signature, "at": seen.at, "error": error})

    def adopt(self, request_key: str, raw: str | bytes | None) -> None:
        """Hold this request's record as :meth:`export` wrote it, instead of any of ours; ``None`` or
        a value that does not parse (another version's) leaves none."""
        self._seen.pop(request_key, None)
        seen = _seen_from_json(raw) if raw is not None else None
        if seen is not None:
            self._put(request_key, seen)

    def _live(self, key: str, now: float) -> _Seen | None:
        seen = self._seen.get(key)
        if seen is not None and now - seen.at > self.ttl:
            del self._seen[key]
            return None
        return seen

    def _put(self, key: str, seen: _Seen) -> None:
        self._seen.pop(key, None)
        self._seen[key] = seen
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)


_REMEMBERED_CLASSES: dict[str, type[AgentFailed]] = {
    "AgentFailedPermanently": AgentFailedPermanently,
    "OutOfCredits": OutOfCredits,
}


def _seen_from_json(raw: str | bytes) -> _Seen | None:
    try:
        data = json.loads(raw)
        error = None
        if data["error"] is not None:
            error = _REMEMBERED_CLASSES[data["error"]["class"]](
                str(data["error"]["message"]), headers=NO_RETRY
            )
            error.signature = str(data["signature"])
        return _Seen(str(data["signature"]), float(data["at"]), error)
    except (ValueError, KeyError, TypeError):
        return None


def _refused(error: AgentFailed, ago: float) -> AgentFailed:
    refused = type(error)(
        f"refused without starting a conol session: {error.message} ({ago:.0f} s ago)", headers=NO_RETRY
    )
    refused.signature = error.signature
    return refused
