"""Agent failures, classified: the one rule for what a client may retry.

``classify_failure`` is a pure function of what conol said (an ``error`` event's message, an
error-type preview's text, or a failed status): the event reader and the stream decoder both use
it. What a single message cannot tell (the same request failing the same way twice is
deterministic) is the memory's rule: ``reuse/known_failures.py``.

Why it matters: a failure the Router and every SDK retry costs a paid session per retry. Claude Code
retried one deterministic agent failure 9 times (10 sessions), Codex 5 times; OpenCode retried a
tool call that never validated 5 times, three sessions each
(docs/effort-and-retries.md#the-memory-of-recent-failures).
"""

from __future__ import annotations

from typing import Literal

from ..errors import AgentFailed, AgentFailedPermanently, OutOfCredits

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
    (a failed status without a message, or words we do not know: retryable once, see KnownFailures)."""
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
        error = OutOfCredits(f"{text} (the conol account is out of credits)", headers=NO_RETRY)
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
