"""The proxy's ``/v1/responses`` front door on ``conol/…`` models, driven by the openai SDK's Responses
API: LiteLLM's bridge runs our chat completion and turns its chunks into Responses items and events."""

from __future__ import annotations

import json

import pytest
from support.chat import MODEL, user
from support.estimates import estimated_completion_tokens, estimated_prompt_tokens
from support.weather import ANSWER, get_weather
from support.weather import RESPONSES_TOOL as WEATHER

from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(120)

HELLO = BUILTINS["hello"]
CALL = BUILTINS["tool_call"].tool_calls[0]


def reasoning_text(item) -> str:
    """A reasoning item's text: the bridge puts it in ``content`` (non-streamed) or ``summary`` (streamed)."""
    parts = item.summary or item.content or []
    return "".join(part.text for part in parts)


def test_non_streamed_response_has_reasoning_and_the_exact_text(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    response = client.responses.create(model=MODEL, input="Hi")
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert reasoning_text(response.output[0]) == HELLO.final_reasoning
    assert response.output_text == HELLO.final_text
    assert response.status == "completed"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    assert (response.usage.input_tokens, response.usage.output_tokens) == (
        estimated_prompt_tokens(user("Hi")),
        estimated_completion_tokens(HELLO),
    )


def test_streamed_response_events_carry_the_exact_text(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    events = list(client.responses.create(model=MODEL, input="Hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    reasoning = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert (text, reasoning) == (HELLO.final_text, HELLO.final_reasoning)
    (done,) = [e for e in events if e.type == "response.output_text.done"]
    assert done.text == HELLO.final_text
    final = events[-1].response
    assert final.output_text == HELLO.final_text
    assert final.id == events[0].response.id  # one response id from response.created to the end
    (message,) = [item for item in final.output if item.type == "message"]
    assert {e.item_id for e in events if e.type == "response.output_text.delta"} == {message.id}
    assert final.usage.output_tokens > 0
    assert final.usage.output_tokens == estimated_completion_tokens(HELLO)


def _result_turn(question: str, call) -> list[dict]:
    return [
        {"role": "user", "content": question},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": get_weather(**json.loads(call.arguments)),
        },
    ]


def test_function_call_then_its_output_non_streamed(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    question = "Weather in Paris? [[fake:tool_loop]]"
    first = client.responses.create(model=MODEL, input=question, tools=[WEATHER])
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert (call.name, call.arguments) == (CALL.name, CALL.arguments_json)
    assert call.call_id.startswith("call_")
    final = client.responses.create(model=MODEL, input=_result_turn(question, call), tools=[WEATHER])
    assert final.output_text == ANSWER
    assert [item.type for item in final.output if item.type != "reasoning"] == ["message"]


def test_function_call_streamed_then_its_output_streamed(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    question = "Weather in Paris? [[fake:tool_loop]]"
    events = list(client.responses.create(model=MODEL, input=question, tools=[WEATHER], stream=True))
    (added,) = [
        e.item for e in events if e.type == "response.output_item.added" and e.item.type == "function_call"
    ]
    arguments = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert (added.name, arguments, done.arguments) == (CALL.name, CALL.arguments_json, CALL.arguments_json)
    final_items = events[-1].response.output
    (call,) = [item for item in final_items if item.type == "function_call"]
    assert (call.call_id, call.name, json.loads(call.arguments)) == (
        added.call_id,
        CALL.name,
        dict(CALL.arguments),
    )

    answer = list(
        client.responses.create(model=MODEL, input=_result_turn(question, call), tools=[WEATHER], stream=True)
    )
    text = "".join(e.delta for e in answer if e.type == "response.output_text.delta")
    assert text == answer[-1].response.output_text == ANSWER


def test_an_agent_error_mid_stream_ends_in_response_failed(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    events = list(client.responses.create(model=MODEL, input="Responses [[fake:error]]", stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == BUILTINS["error"].final_text
    assert events[-1].type == "response.failed"
    assert "upstream model crashed" in events[-1].response.error.message
    assert not [e for e in events if e.type == "response.completed"]
