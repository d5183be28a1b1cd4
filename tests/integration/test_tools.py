"""Tool use: OpenAI tool calling over conol's native tools, in all four paths and end to end."""

from __future__ import annotations

import json

import litellm
import pytest
from support.chat import MODEL, ask
from support.weather import OPENAI_TOOL as WEATHER

import litellm_conol
from litellm_conol.fake import BUILTINS

litellm.suppress_debug_info = True
litellm_conol.register()

pytestmark = pytest.mark.timeout(90)
CLOCK = {
    "name": "get_time",
    "description": "Time in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


@pytest.fixture
def kw(conol_fake):
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


def ask_weather(text: str, **extra):
    """A request offering the weather tool (``extra`` may replace ``tools``)."""
    return ask(text, **{"tools": [WEATHER], **extra})


def stream_result(chunks) -> dict:
    """Tool-call deltas are merged by index, as OpenAI clients do."""
    content, calls, finish, builtins, ids = [], {}, None, [], set()
    for chunk in chunks:
        ids.add(chunk.id)
        choice = chunk.choices[0]
        content.append(choice.delta.content or "")
        for call in choice.delta.tool_calls or []:
            if call.index not in calls:
                calls[call.index] = (call.id, call.function.name, call.function.arguments)
            else:  # each call arrives whole in its first delta; later ones only continue it, emptily
                assert (call.id, call.function.name, call.function.arguments) == (None, None, "")
        finish = choice.finish_reason or finish
        fields = getattr(chunk, "provider_specific_fields", None) or {}
        if "builtin_tool" in fields:
            builtins.append(fields["builtin_tool"])
    return {
        "content": "".join(content),
        "calls": list(calls.values()),
        "finish": finish,
        "builtins": builtins,
        "ids": ids,
    }


def message_calls(response) -> list[tuple[str, str]]:
    return [(c.function.name, c.function.arguments) for c in response.choices[0].message.tool_calls or []]


def expected_calls(scenario: str) -> list[tuple[str, str]]:
    return [(c.name, c.arguments_json) for c in BUILTINS[scenario].tool_calls]


# --- requests -----------------------------------------------------------------------------------


def test_tools_are_sent_in_anthropic_format(kw, conol_fake):
    litellm.completion(**ask_weather("[[fake:tool_call]]", tools=[WEATHER, CLOCK]), **kw)
    body = next(r.body for r in conol_fake.requests if r.method == "POST")
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city",
            "input_schema": WEATHER["function"]["parameters"],
        },
        {"name": "get_time", "description": "Time in a city", "input_schema": CLOCK["input_schema"]},
    ]


def test_no_tools_key_without_tools(kw, conol_fake):
    litellm.completion(model=MODEL, messages=[{"role": "user", "content": "[[fake:done]]"}], **kw)
    assert "tools" not in next(r.body for r in conol_fake.requests if r.method == "POST")


@pytest.mark.parametrize(
    "tools, problem",
    [
        ([{"type": "function", "function": {"name": "", "parameters": {"type": "object"}}}], "has no name"),
        ([WEATHER, WEATHER], "'get_weather' is defined more than once"),
        (
            [{"type": "function", "function": {"name": "Fetch", "parameters": {"type": "object"}}}],
            "'Fetch' clashes",
        ),
        ([{"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}}], "tool 'f'"),
    ],
)
def test_invalid_tools_are_400_before_any_session(kw, conol_fake, tools, problem):
    with pytest.raises(litellm.BadRequestError, match=problem):
        litellm.completion(**ask_weather("[[fake:tool_call]]", tools=tools), **kw)
    assert conol_fake.requests == []


# --- responses, the four paths ------------------------------------------------------------------


def test_client_tool_call_sync(kw):
    response = litellm.completion(**ask_weather("[[fake:tool_call]]"), **kw)
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.choices[0].message.content is None
    assert message_calls(response) == expected_calls("tool_call") == [("get_weather", '{"city": "Paris"}')]
    assert response.choices[0].message.tool_calls[0].id.startswith("call_")


async def test_client_tool_call_async(kw):
    response = await litellm.acompletion(**ask_weather("[[fake:tool_call]]"), **kw)
    assert message_calls(response) == expected_calls("tool_call")


def test_client_tool_call_sync_stream(kw, conol_fake):
    got = stream_result(litellm.completion(**ask_weather("[[fake:tool_call]]"), stream=True, **kw))
    assert [(name, args) for _, name, args in got["calls"]] == expected_calls("tool_call")
    assert got["finish"] == "tool_calls"
    assert len(got["ids"]) == 1


async def test_client_tool_call_async_stream_ends_without_waiting_and_closes_upstream(kw, conol_fake):
    stream = await litellm.acompletion(**ask_weather("[[fake:tool_call]]"), stream=True, **kw)
    got = stream_result([c async for c in stream])
    assert [(name, args) for _, name, args in got["calls"]] == expected_calls("tool_call")
    session = conol_fake.last_session
    assert session.status == "running"  # the agent waits for a result it will never get
    assert conol_fake.wait_until(lambda: session.connections[-1].closed_at is not None, 2.0)


@pytest.mark.parametrize(
    "scenario", ["tool_call", "tool_call_twice", "text_and_tool", "multi_tool", "builtin_websearch"]
)
async def test_streamed_and_non_streamed_tool_results_agree(kw, scenario):
    response = await litellm.acompletion(**ask_weather(f"[[fake:{scenario}]]"), **kw)
    got = stream_result(
        [c async for c in await litellm.acompletion(**ask_weather(f"[[fake:{scenario}]]"), stream=True, **kw)]
    )
    expected = BUILTINS[scenario]
    assert message_calls(response) == [(n, a) for _, n, a in got["calls"]] == expected_calls(scenario)
    assert response.choices[0].finish_reason == got["finish"] == expected.finish_reason
    assert response.choices[0].message.content == expected.content
    if expected.tool_calls:
        # content is null, but the text the model wrote alongside is kept; the stream sent it as it came
        fields = response.choices[0].message.provider_specific_fields
        assert fields.get("text_with_tool_calls", "") == expected.final_text == got["content"]
    else:
        assert got["content"] == expected.final_text
    ids = [i for i, _, _ in got["calls"]]
    assert len(set(ids)) == len(ids)


def test_duplicate_tool_call_is_returned_once(kw):
    response = litellm.completion(**ask_weather("[[fake:tool_call_twice]]"), **kw)
    assert message_calls(response) == [("get_weather", '{"city": "Paris"}')]


def test_builtin_websearch_stays_server_side_and_is_surfaced(kw, conol_fake):
    expected = BUILTINS["builtin_websearch"]
    response = litellm.completion(**ask_weather("[[fake:builtin_websearch]]"), **kw)
    assert response.choices[0].message.tool_calls is None
    assert response.choices[0].finish_reason == "stop"
    assert response.choices[0].message.content == expected.final_text
    (search,) = conol_fake.last_session.expected.builtin_tool_calls
    assert response.choices[0].message.provider_specific_fields["builtin_tools"] == [
        {"name": "WebSearch", "input": dict(search.arguments), "result": search.result}
    ]
    got = stream_result(litellm.completion(**ask_weather("[[fake:builtin_websearch]]"), stream=True, **kw))
    assert got["calls"] == []
    assert [b["name"] for b in got["builtins"]] == ["WebSearch", "WebSearch"]  # seen, then its result
    assert got["builtins"][-1]["result"] == search.result


def test_builtin_tools_expose_option_returns_them_as_tool_calls(kw):
    response = litellm.completion(**ask_weather("[[fake:builtin_websearch]]"), builtin_tools="expose", **kw)
    assert [name for name, _ in message_calls(response)] == ["WebSearch"]
    assert response.choices[0].finish_reason == "tool_calls"


def test_tool_call_after_a_long_silence_is_still_caught(kw):
    response = litellm.completion(**ask_weather("[[fake:tool_after_silence]]"), **kw)
    assert message_calls(response) == expected_calls("tool_after_silence")


def test_parallel_tool_calls_false_keeps_the_first(kw):
    response = litellm.completion(**ask_weather("[[fake:multi_tool]]"), parallel_tool_calls=False, **kw)
    assert message_calls(response) == expected_calls("multi_tool")[:1]
    both = litellm.completion(**ask_weather("[[fake:multi_tool]]"), **kw)
    assert message_calls(both) == expected_calls("multi_tool") and len(expected_calls("multi_tool")) == 2


# --- tool_choice --------------------------------------------------------------------------------


def test_tool_choice_none_sends_no_tools_and_returns_no_calls(kw, conol_fake):
    response = litellm.completion(
        **ask_weather("[[fake:tool_call]]", tool_choice="none"), settle_window=0.2, timeout=5, **kw
    )
    assert "tools" not in next(r.body for r in conol_fake.requests if r.method == "POST")
    assert response.choices[0].message.tool_calls is None
    # the model called it anyway: dropped, reported, and the turn ends instead of waiting forever
    fields = response.choices[0].message.provider_specific_fields
    assert fields["dropped_tool_calls"] == [
        {"name": "get_weather", "input": {"city": "Paris"}, "result": None}
    ]
    assert response.choices[0].finish_reason == "stop"


def test_tool_choice_named_sends_only_that_tool_and_drops_other_calls(kw, conol_fake):
    response = litellm.completion(
        **ask_weather(
            "[[fake:tool_call]]",
            tools=[CLOCK, WEATHER],
            tool_choice={"type": "function", "function": {"name": "get_time"}},
        ),
        timeout=5,
        **kw,
    )
    body = next(r.body for r in conol_fake.requests if r.method == "POST")
    assert [t["name"] for t in body["tools"]] == ["get_time"]
    assert response.choices[0].message.tool_calls is None  # the get_weather call was dropped
    fields = response.choices[0].message.provider_specific_fields
    assert fields["builtin_tools"] == []
    assert [d["name"] for d in fields["dropped_tool_calls"]] == ["get_weather"]


def test_tool_choice_required_without_a_call_is_a_clear_error(kw):
    with pytest.raises(litellm.BadRequestError, match="tool_choice is 'required'"):
        litellm.completion(**ask_weather("[[fake:done]]", tool_choice="required"), **kw)


def test_tool_choice_unknown_name_is_400(kw, conol_fake):
    with pytest.raises(litellm.BadRequestError, match="'nope'"):
        litellm.completion(
            **ask_weather("x", tool_choice={"type": "function", "function": {"name": "nope"}}), **kw
        )
    assert conol_fake.requests == []


# --- the tool loop ------------------------------------------------------------------------------


def _loop_messages(call) -> list[dict]:
    return [
        {"role": "user", "content": "Weather in Paris? [[fake:tool_loop]]"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "21°C and sunny"},
    ]


def test_tool_loop_renders_call_and_result_and_answers(kw, conol_fake):
    first = litellm.completion(**ask_weather("Weather in Paris? [[fake:tool_loop]]"), **kw)
    call = first.choices[0].message.tool_calls[0].model_dump()
    second = litellm.completion(
        model=MODEL, messages=_loop_messages(call), tools=[WEATHER], extra_body={"session_reuse": "off"}, **kw
    )
    assert second.choices[0].message.content == "The weather in Paris is 21°C and sunny."
    assert second.choices[0].finish_reason == "stop"
    sent = conol_fake.last_session.messages
    assert (
        sent[1]
        == f"[Assistant]\n[Tool call #{call['id']}: get_weather({json.dumps({'city': 'Paris'}, ensure_ascii=False)})]"
    )
    assert sent[2] == f'[Tool result #{call["id"]}: get_weather({{"city": "Paris"}})]: 21°C and sunny'


def test_multi_round_loop_renders_in_order(kw, conol_fake):
    def call(i: int, city: str) -> dict:
        return {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }

    messages = [
        {"role": "user", "content": "Paris then Tokyo [[fake:echo]]"},
        {"role": "assistant", "content": None, "tool_calls": [call(1, "Paris")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "assistant", "content": "Now Tokyo.", "tool_calls": [call(2, "Tokyo")]},
        {"role": "tool", "tool_call_id": "call_2", "content": "rainy"},
    ]
    litellm.completion(model=MODEL, messages=messages, tools=[WEATHER], **kw)
    assert conol_fake.last_session.messages == [
        "Paris then Tokyo [[fake:echo]]",
        '[Assistant]\n[Tool call #call_1: get_weather({"city": "Paris"})]',
        '[Tool result #call_1: get_weather({"city": "Paris"})]: sunny',
        '[Assistant]\nNow Tokyo.\n[Tool call #call_2: get_weather({"city": "Tokyo"})]',
        '[Tool result #call_2: get_weather({"city": "Tokyo"})]: rainy',
    ]
