"""Agent failures, classified (core/protocol/agent_failures) and remembered (KnownFailures), and what LiteLLM's
exception mapping and the Router make of each class."""

from __future__ import annotations

import json

import litellm
import pytest
from litellm.litellm_core_utils.exception_mapping_utils import exception_type
from litellm.router_utils.fallback_event_handlers import is_bad_request_without_fallback

from litellm_conol import AgentFailed, AgentFailedPermanently, InvalidStructuredOutput, OutOfCredits
from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.agent_failures import classify_failure, failure_error
from litellm_conol.core.protocol.wire import parse_event
from litellm_conol.fake._library import (
    CREDIT_MESSAGE,
    DETERMINISTIC_MESSAGE,
    TRANSIENT_MESSAGE,
    UNEXPLAINED_MESSAGE,
)
from litellm_conol.reuse.known_failures import KnownFailures, failure_key

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    "message, source, kind",
    [
        (CREDIT_MESSAGE, "event", "out_of_credits"),
        ("credit balance is too low", "preview", "out_of_credits"),
        ("Credit Balance Is Too Low", "event", "out_of_credits"),
        (DETERMINISTIC_MESSAGE, "event", "deterministic"),
        ("invalid_request_error: tools.3.input_schema", "event", "deterministic"),
        (TRANSIENT_MESSAGE, "event", "transient"),
        ("upstream rate limit reached", "preview", "transient"),
        (UNEXPLAINED_MESSAGE, "event", "unexplained"),
        ("agent failed: upstream model crashed", "event", "unexplained"),
        (None, "event", "unexplained"),
        ("", "event", "unexplained"),
        ("credit balance is too low", "status", "unexplained"),  # a status carries no words
    ],
)
def test_classification_is_a_function_of_the_words_and_the_source(message, source, kind):
    assert classify_failure(message, source) == kind


def test_each_class_is_its_exception_with_a_signature_free_of_session_ids():
    credits = failure_error(CREDIT_MESSAGE)
    assert type(credits) is OutOfCredits and credits.status_code == 429
    assert credits.headers == {"x-should-retry": "false"}
    assert type(failure_error(DETERMINISTIC_MESSAGE)) is AgentFailedPermanently
    unexplained = failure_error(UNEXPLAINED_MESSAGE)
    assert type(unexplained) is AgentFailed and unexplained.status_code == 500 and unexplained.headers == {}
    assert unexplained.signature == f"event:{UNEXPLAINED_MESSAGE}"
    a = failure_error(None, "status", status="failed", session_id="s1")
    b = failure_error(None, "status", status="failed", session_id="s2")
    assert str(a) == "conol session s1 ended with status 'failed'"
    assert a.signature == b.signature == "status:failed"


def test_the_assembler_raises_the_classified_error_for_an_error_event():
    with pytest.raises(OutOfCredits, match="credit balance is too low"):
        Assembler().feed(parse_event(json.dumps({"type": "error", "message": CREDIT_MESSAGE})))


def _litellm(error: Exception) -> Exception:
    with pytest.raises(Exception) as caught:
        exception_type(model="conol/x", original_exception=error, custom_llm_provider="conol")
    return caught.value


def test_what_litellm_and_its_router_make_of_each_class(monkeypatch):
    monkeypatch.setattr(litellm, "suppress_debug_info", True)
    credits = _litellm(failure_error(CREDIT_MESSAGE))
    permanent = _litellm(failure_error(DETERMINISTIC_MESSAGE))
    unexplained = _litellm(failure_error(UNEXPLAINED_MESSAGE))
    # out of credits is OpenAI's exhausted quota: a 429 the Router retries on the group's other
    # deployments (other accounts) and cools this one down for (docs/team-deployment.md#several-accounts)
    assert (type(credits), credits.status_code) == (litellm.RateLimitError, 429)
    assert (type(permanent), permanent.status_code) == (litellm.BadRequestError, 400)
    assert (type(unexplained), unexplained.status_code) == (litellm.InternalServerError, 500)
    assert [litellm.should_retry(e.status_code) for e in (credits, permanent, unexplained)] == [
        True,
        False,
        True,
    ]
    assert not is_bad_request_without_fallback(credits, False)
    assert is_bad_request_without_fallback(permanent, False)


REQUEST = failure_key("http://conol", "tok", b'{"messages": 1}')
OTHER = failure_key("http://conol", "tok", b'{"messages": 2}')


def test_keys_are_hashes_of_account_and_body():
    assert "tok" not in REQUEST and len(REQUEST) == 64
    assert failure_key("http://conol", "tok2", b'{"messages": 1}') != REQUEST
    assert failure_key("http://other", "tok", b'{"messages": 1}') != REQUEST
    assert OTHER != REQUEST


def test_an_unexplained_failure_is_retryable_once_then_deterministic_then_refused():
    memory = KnownFailures(ttl=300)
    first = memory.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=0)
    assert type(first) is AgentFailed
    assert memory.refusal(REQUEST, now=1) is None
    second = memory.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=5)
    assert type(second) is AgentFailedPermanently and second.status_code == 400
    assert "the same request failed the same way 5 s before" in str(second)
    refused = memory.refusal(REQUEST, now=6)
    assert type(refused) is AgentFailedPermanently
    assert str(refused).startswith("refused without starting a conol session: conol agent error: ")
    assert memory.refusal(OTHER, now=6) is None  # another request of the account runs
    assert memory.refusal(REQUEST, now=306) is None  # remembered for ttl only


def test_a_different_failure_or_a_success_in_between_is_not_a_repeat():
    memory = KnownFailures(ttl=300)
    memory.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=0)
    assert type(memory.record(REQUEST, failure_error("something else"), now=1)) is AgentFailed
    memory.forget(REQUEST)
    assert type(memory.record(REQUEST, failure_error("something else"), now=2)) is AgentFailed


def test_transient_failures_stay_retryable_however_often():
    memory = KnownFailures(ttl=300)
    for now in range(5):
        assert type(memory.record(REQUEST, failure_error(TRANSIENT_MESSAGE), now=now)) is AgentFailed
    assert memory.refusal(REQUEST, now=5) is None


def test_out_of_credits_is_the_accounts_not_the_requests_and_ttl_zero_remembers_nothing():
    memory = KnownFailures(ttl=60)
    credits = failure_error(CREDIT_MESSAGE)
    assert memory.record(REQUEST, credits, now=0) is credits
    # the account rests instead (reuse/accounts.py): another deployment's account runs the request
    assert memory.refusal(REQUEST, now=10) is None
    off = KnownFailures(ttl=0)
    for now in range(3):
        assert type(off.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=now)) is AgentFailed
    assert off.refusal(REQUEST, now=3) is None


def test_the_memory_is_bounded():
    memory = KnownFailures(ttl=300, capacity=3)
    keys = [failure_key("b", "t", str(i).encode()) for i in range(5)]
    for key in keys:
        memory.record(key, failure_error(DETERMINISTIC_MESSAGE), now=0)
    assert [memory.refusal(key, now=1) is not None for key in keys] == [
        False,
        False,
        True,
        True,
        True,
    ]


# --- validation failures (the answer never validated after the repair turns) ---------------------


def invalid(sessions: str) -> InvalidStructuredOutput:
    return InvalidStructuredOutput(
        f"the answer failed validation (3 turn(s), max_repair_turns=2; sessions {sessions}): not JSON"
    )


def test_a_validation_failure_gets_one_more_round_then_is_refused_as_a_502_not_retried():
    memory = KnownFailures(ttl=300)
    first = memory.record(REQUEST, invalid("s1, s2, s3"), now=0)
    assert type(first) is InvalidStructuredOutput and first.headers == {}  # retryable: one more round
    assert memory.refusal(REQUEST, now=1) is None
    second = memory.record(REQUEST, invalid("s4, s5, s6"), now=7)
    assert type(second) is InvalidStructuredOutput and second.status_code == 502
    assert second.headers == {"x-should-retry": "false"}
    assert str(second) == (
        "the answer failed validation (3 turn(s), max_repair_turns=2; sessions s4, s5, s6): not JSON "
        "(the same request failed validation in 2 rounds in a row, the one before 7 s earlier: a retry "
        "would fail again, so identical requests are refused without a conol session for the next "
        "300 s; not retried)"
    )
    refused = memory.refusal(REQUEST, now=19)
    assert type(refused) is InvalidStructuredOutput and refused.status_code == 502
    assert refused.headers == {"x-should-retry": "false"} and refused.refused_by == "failure_memory"
    assert str(refused) == f"refused without starting a conol session: {second} (12 s ago)"
    assert memory.refusal(OTHER, now=19) is None
    assert memory.refusal(REQUEST, now=7 + 301) is None  # remembered for ttl after the last round


def test_what_litellm_and_its_router_make_of_a_remembered_validation_failure(monkeypatch):
    """Still a 502 (BadGatewayError): the Router runs fallbacks (another model may conform); the
    header tells the openai and anthropic SDKs not to retry it."""
    monkeypatch.setattr(litellm, "suppress_debug_info", True)
    memory = KnownFailures(ttl=300)
    memory.record(REQUEST, invalid("s1"), now=0)
    memory.record(REQUEST, invalid("s2"), now=1)
    mapped = _litellm(memory.refusal(REQUEST, now=2))
    assert (type(mapped), mapped.status_code) == (litellm.BadGatewayError, 502)
    assert mapped.litellm_response_headers["x-should-retry"] == "false"
    assert not is_bad_request_without_fallback(mapped, False)


def test_a_validation_failure_and_an_agent_failure_are_not_repeats_of_each_other():
    memory = KnownFailures(ttl=300)
    memory.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=0)
    assert type(memory.record(REQUEST, invalid("s1"), now=1)) is InvalidStructuredOutput
    assert memory.refusal(REQUEST, now=2) is None
    assert type(memory.record(REQUEST, failure_error(UNEXPLAINED_MESSAGE), now=3)) is AgentFailed


def test_a_refusal_of_an_agent_failure_says_who_refused_it():
    memory = KnownFailures(ttl=300)
    memory.record(REQUEST, failure_error(DETERMINISTIC_MESSAGE), now=0)
    refused = memory.refusal(REQUEST, now=1)
    assert refused is not None and refused.refused_by == "failure_memory"
    assert failure_error(DETERMINISTIC_MESSAGE).refused_by == ""


def test_failure_keys_are_per_caller():
    alice = failure_key("http://conol", "tok", b'{"messages": 1}', "alice-digest")
    bob = failure_key("http://conol", "tok", b'{"messages": 1}', "bob-digest")
    assert len({REQUEST, alice, bob}) == 3
    memory = KnownFailures(ttl=300)
    memory.record(alice, failure_error(DETERMINISTIC_MESSAGE), now=0)
    assert memory.refusal(alice, now=1) is not None and memory.refusal(bob, now=1) is None
