"""Event shapes other clients read (docs/protocol.md#stream), through ``parse_event`` and the ``Assembler``:
``{"done": true}``, ``assistant`` and ``stream_event`` events, ``contextUsage`` on any event,
``windowReset`` (dropped, also mid-answer) and the credit-error preview (an ``AgentFailed``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from litellm_conol import AgentFailed, OutOfCredits
from litellm_conol.core.answer.assembler import Assembler, ReasoningDelta, TextDelta
from litellm_conol.core.protocol.event_fields import ContextUsage, read_context_usage
from litellm_conol.core.protocol.wire import DoneEvent, UsageEvent, parse_event, unreadable_reason

CREDIT = "Your credit balance is too low to run this request."


def snap(text: str, stage: str = "s1", kind: str = "message", **extra: Any) -> bytes:
    entry = {"role": "assistant", "type": kind, "content": text}
    return json.dumps(
        {"type": "history_delta", "stages": [{"id": stage, "preview": [entry]}], **extra}
    ).encode()


def event(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def feed(assembler: Assembler, *payloads: bytes) -> list[Any]:
    pieces: list[Any] = []
    for payload in payloads:
        parsed = parse_event(payload)
        if parsed is not None:
            pieces += assembler.feed(parsed)
    return pieces


def text_of(pieces: list[Any]) -> str:
    return "".join(p.text for p in pieces if isinstance(p, TextDelta))


def test_done_flag_without_a_type_is_a_done_event_and_ends_the_answer():
    assembler = Assembler()
    feed(assembler, snap("Hi"), event({"done": True}))
    assert assembler.done and assembler.final_text == "Hi"
    assert parse_event(b'{"done": true}') == DoneEvent(type="done", contextUsage=None)
    assert parse_event(b'{"done": false}') is None and parse_event(b'{"done": "yes"}') is None


def test_stream_event_deltas_append_and_the_assistant_event_completes_them():
    assembler = Assembler()
    pieces = feed(
        assembler,
        event({"type": "stream_event", "delta": {"type": "thinking_delta", "thinking": "Hmm. "}}),
        event({"type": "stream_event", "delta": "Hello"}),
        event({"type": "stream_event", "delta": {"type": "text_delta", "text": " wor"}}),
        event({"type": "stream_event", "event": {"delta": {"text": "ld"}}}),  # Anthropic SDK nesting
        event({"type": "assistant", "content": [{"type": "text", "text": "Hello world."}]}),
    )
    assert [type(p) for p in pieces] == [ReasoningDelta, TextDelta, TextDelta, TextDelta, TextDelta]
    assert text_of(pieces) == "Hello world." and assembler.final_text == "Hello world."
    assert assembler.final_reasoning == "Hmm. "


@pytest.mark.parametrize("field", ["content", "message", "text"])
def test_the_assistant_event_completes_a_tail_the_previews_missed(field):
    assembler = Assembler()
    value: Any = "The whole answer." if field != "message" else {"content": "The whole answer."}
    pieces = feed(assembler, snap("The whole"), event({"type": "assistant", field: value}))
    assert text_of(pieces) == "The whole answer." and assembler.committed


def test_context_usage_rides_on_any_event_and_the_latest_wins_field_by_field():
    assembler = Assembler()
    usage = {"usedTokens": 42, "contextWindow": 200000, "modelId": "claude-fable-5"}
    feed(assembler, snap("Hi", contextUsage=usage))
    assert assembler.context_usage == ContextUsage(42, 200000, "claude-fable-5")
    feed(
        assembler,
        event({"type": "session_title", "title": "x", "contextUsage": {"usedTokens": 90}}),  # unknown type
        event({"type": "done", "contextUsage": {"usedTokens": "95", "modelId": ""}}),
    )
    assert assembler.context_usage == ContextUsage(95, 200000, "claude-fable-5") and assembler.done
    assert parse_event(event({"type": "x", "contextUsage": usage})) == UsageEvent(
        type="x", contextUsage=usage
    )


def test_an_unreadable_context_usage_never_costs_the_event_it_rides_on():
    for bad in ("lots", [1, 2], {"usedTokens": "many", "contextWindow": -1, "modelId": 7}, None):
        assembler = Assembler()
        feed(assembler, snap("Still read", contextUsage=bad))
        assert assembler.final_text == "Still read" and assembler.context_usage is None, bad
        assert unreadable_reason(snap("x", contextUsage=bad)) is None
    assert read_context_usage({"usedTokens": float("nan"), "contextWindow": True}) is None


def test_a_window_reset_mid_answer_is_dropped_and_the_answer_continues_exactly():
    assembler = Assembler()
    pieces = feed(
        assembler,
        snap("Before the reset "),
        snap("[summary of the earlier conversation]", stage="s_reset", windowReset=True),
        snap("Before the reset and after it."),
    )
    assert text_of(pieces) == "Before the reset and after it." == assembler.final_text
    assert assembler.window_resets == 1 and not assembler.answer.rewritten


def test_a_window_reset_with_the_whole_answer_is_not_taken_either():
    # other clients drop the event whole; so the committed tail must come from a later event (or the logs)
    assembler = Assembler()
    feed(assembler, snap("Half"), snap("Half and the rest.", windowReset=True), snap("Half and"))
    assert assembler.final_text == "Half and" and assembler.window_resets == 1
    read = Assembler()
    assert text_of(feed(read, snap("Read", windowReset=False))) == "Read" and read.window_resets == 0


def test_the_credit_error_preview_is_out_of_credits_carrying_conols_text():
    assembler = Assembler()
    feed(assembler, snap("Partial"))
    with pytest.raises(OutOfCredits) as caught:
        feed(assembler, snap(CREDIT, kind="error"))
    assert caught.value.agent_message == CREDIT
    assert caught.value.message.startswith(
        f"conol agent error: {CREDIT} (the conol account is out of credits"
    )
    assert (
        caught.value.status_code == 429
    )  # the one rule (core.protocol.agent_failures): other accounts serve
    assert caught.value.signature == f"preview:{CREDIT}"


def test_an_error_event_carries_its_text_too():
    with pytest.raises(AgentFailed) as caught:
        Assembler().feed(parse_event(event({"type": "error", "message": CREDIT})))  # type: ignore[arg-type]
    assert caught.value.agent_message == CREDIT
