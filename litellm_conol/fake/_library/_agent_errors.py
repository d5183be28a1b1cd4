"""Agent failures as conol reports them (docs/protocol.md#stream: an ``error`` event, then a failed status),
worded so that each class of ``core.protocol.agent_failures`` has a scenario: out of credits (conol's
own words, "credit balance is too low"), a message no rule knows (retryable once, deterministic when
it repeats), a transient one, and a deterministic one. Each fails before any text, as a run refused
at its start does; the stream stays open, as it does for the ``error`` scenario."""

from __future__ import annotations

from .._scenarios import Scenario
from .._steps import Error, SetStatus, Sleep

CREDIT_MESSAGE = "Your credit balance is too low to run this agent. Add credits to continue."
UNEXPLAINED_MESSAGE = "agent run aborted (E_AGENT_EXIT 137)"
TRANSIENT_MESSAGE = "The model is overloaded right now, please try again."
DETERMINISTIC_MESSAGE = "prompt is too long: 412803 tokens > 200000 maximum"


def _fails(name: str, message: str, what: str) -> Scenario:
    return Scenario(
        name,
        [Sleep(0.05), Error(message), SetStatus("failed")],
        description=f"{what}: an error event ({message!r}) before any text, then status failed",
    )


def agent_error_scenarios() -> list[Scenario]:
    return [
        _fails("out_of_credits", CREDIT_MESSAGE, "the account is out of credits"),
        _fails("agent_error_unexplained", UNEXPLAINED_MESSAGE, "a failure no rule explains"),
        _fails("agent_error_transient", TRANSIENT_MESSAGE, "a transient failure"),
        _fails("agent_error_deterministic", DETERMINISTIC_MESSAGE, "a failure a retry repeats"),
    ]
