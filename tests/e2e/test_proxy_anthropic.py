"""The proxy's Anthropic-format front door, ``/v1/messages``, on ``conol/…`` models, driven by the real
``anthropic`` SDK as Claude-Code-style clients use it: LiteLLM's adapter turns our OpenAI-shaped chunks
into Anthropic blocks and events."""

from __future__ import annotations

import anthropic
import pytest
from support.chat import MODEL, user
from support.estimates import estimated_completion_tokens, estimated_prompt_tokens
from support.proxyproc import MASTER_KEY
from support.weather import ANSWER, RESULT
from support.weather import ANTHROPIC_TOOL as WEATHER

from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(120)

HELLO = BUILTINS["hello"]
TOOL_CALL = BUILTINS["tool_call"].tool_calls[0]


@pytest.fixture
def claude(proxy_fake, shipped_proxy):
    proxy_fake.reset()
    with anthropic.Anthropic(
        base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as c:
        yield c


def blocks(message) -> list[tuple]:
    """A message's content as comparable tuples."""
    shapes = {
        "thinking": lambda b: ("thinking", b.thinking),
        "text": lambda b: ("text", b.text),
        "tool_use": lambda b: ("tool_use", b.name, b.input),
    }
    return [shapes[block.type](block) for block in message.content]


def test_count_tokens_answers_without_a_conol_session(claude, proxy_fake):
    counted = claude.messages.count_tokens(model=MODEL, messages=user("Hello there, how are you today?"))
    assert counted.input_tokens > 0
    assert counted.input_tokens == estimated_prompt_tokens(user("Hello there, how are you today?"))
    assert proxy_fake.requests == []


def test_non_streamed_message_has_thinking_and_exact_text(claude):
    message = claude.messages.create(model=MODEL, max_tokens=256, messages=user("Hi"))
    assert blocks(message) == [("thinking", HELLO.final_reasoning), ("text", HELLO.final_text)]
    assert message.stop_reason == "end_turn"
    assert message.role == "assistant"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert (message.usage.input_tokens, message.usage.output_tokens) == (
        estimated_prompt_tokens(user("Hi")),
        estimated_completion_tokens(HELLO),
    )


def test_streamed_message_is_the_anthropic_event_sequence_with_exact_text(claude):
    with claude.messages.stream(model=MODEL, max_tokens=256, messages=user("Hi")) as stream:
        events = list(stream)
        final = stream.get_final_message()
    kinds = [e.type for e in events if e.type not in ("text", "thinking", "signature", "input_json")]
    deltas = kinds.count("content_block_delta")
    assert kinds == [
        "message_start",
        "content_block_start",  # thinking
        *["content_block_delta"] * 3,
        "content_block_stop",
        "content_block_start",  # text
        *["content_block_delta"] * (deltas - 3),
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    starts = [e.content_block.type for e in events if e.type == "content_block_start"]
    assert starts == ["thinking", "text"]
    text = "".join(
        e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )
    assert text == HELLO.final_text
    assert blocks(final) == [("thinking", HELLO.final_reasoning), ("text", HELLO.final_text)]
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens > 0
    assert final.usage.output_tokens == estimated_completion_tokens(HELLO)


def _tool_result_turn(first) -> list[dict]:
    """The assistant's tool_use turn as the SDK returned it, then our tool's result."""
    (use,) = [b for b in first.content if b.type == "tool_use"]
    return [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": RESULT}],
        },
    ]


def test_tool_use_then_tool_result_non_streamed(claude):
    messages = user("Weather in Paris? [[fake:tool_loop]]")
    first = claude.messages.create(model=MODEL, max_tokens=256, messages=messages, tools=[WEATHER])
    assert first.stop_reason == "tool_use"
    assert [b for b in blocks(first) if b[0] == "tool_use"] == [
        ("tool_use", TOOL_CALL.name, TOOL_CALL.arguments)
    ]
    final = claude.messages.create(
        model=MODEL, max_tokens=256, messages=messages + _tool_result_turn(first), tools=[WEATHER]
    )
    assert [b for b in blocks(final) if b[0] == "text"] == [("text", ANSWER)]
    assert final.stop_reason == "end_turn"


def test_tool_use_streamed_is_one_block_with_the_exact_input_and_nothing_after_it(claude):
    messages = user("Weather in Paris? [[fake:text_and_tool]]")
    with claude.messages.stream(model=MODEL, max_tokens=256, messages=messages, tools=[WEATHER]) as stream:
        events = list(stream)
        first = stream.get_final_message()
    # no empty text block after the tool_use: a client replaying this turn would send it back
    assert blocks(first) == [
        ("text", "Let me check the weather."),
        ("tool_use", TOOL_CALL.name, TOOL_CALL.arguments),
    ]
    assert first.stop_reason == "tool_use"
    assert [e.type for e in events][-2:] == ["message_delta", "message_stop"]
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.id.startswith(("call_", "toolu_"))


def test_tool_result_turn_streamed(claude):
    messages = user("Weather in Paris? [[fake:tool_loop]]")
    with claude.messages.stream(model=MODEL, max_tokens=256, messages=messages, tools=[WEATHER]) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    assert blocks(first) == [
        ("thinking", BUILTINS["tool_call"].final_reasoning),
        ("tool_use", TOOL_CALL.name, TOOL_CALL.arguments),
    ]
    turn = messages + _tool_result_turn(first)
    with claude.messages.stream(model=MODEL, max_tokens=256, messages=turn, tools=[WEATHER]) as stream:
        final = stream.get_final_message()
    assert [b for b in blocks(final) if b[0] == "text"] == [("text", ANSWER)]
    assert final.stop_reason == "end_turn"


def test_an_agent_error_mid_stream_is_an_anthropic_error_event_not_a_short_answer(claude):
    text = []
    with (
        pytest.raises(anthropic.APIError, match="upstream model crashed"),
        claude.messages.stream(
            model=MODEL, max_tokens=256, messages=user("Anthropic [[fake:error]]")
        ) as stream,
    ):
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text.append(event.delta.text)
    assert "".join(text) == BUILTINS["error"].final_text


def test_a_claude_code_style_request_thinking_enabled_is_accepted_and_sets_the_effort(claude, proxy_fake):
    """What Claude Code sends: system blocks with cache_control, extended thinking, metadata, tool_choice."""
    message = claude.messages.create(
        model=MODEL,
        max_tokens=32000,
        system=[{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}],
        thinking={"type": "enabled", "budget_tokens": 10000},
        metadata={"user_id": "user_1"},
        tool_choice={"type": "auto"},
        tools=[{**WEATHER, "cache_control": {"type": "ephemeral"}}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris? [[fake:tool_call]]"}]}
        ],
    )
    assert blocks(message) == [
        ("thinking", BUILTINS["tool_call"].final_reasoning),
        ("tool_use", TOOL_CALL.name, TOOL_CALL.arguments),
    ]
    assert proxy_fake.last_session.effort == "high"  # the top of claude-haiku-4-5's ladder
