"""The complete tool loop through the real proxy, with the openai SDK and with the openai-agents SDK."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from support.weather import OPENAI_TOOL as WEATHER
from support.weather import get_weather

pytestmark = pytest.mark.timeout(120)


def _run_locally(call) -> dict:
    arguments = json.loads(call.function.arguments)
    return {"role": "tool", "tool_call_id": call.id, "content": get_weather(**arguments)}


def _assistant_turn(calls) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in calls
        ],
    }


def test_tool_loop_non_streamed(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    messages = [{"role": "user", "content": "Weather in Paris? [[fake:tool_loop]]"}]
    first = client.chat.completions.create(model="conol/claude-haiku-4-5", messages=messages, tools=[WEATHER])
    assert first.choices[0].finish_reason == "tool_calls"
    assert first.choices[0].message.content is None
    calls = first.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    messages += [_assistant_turn(calls), *(_run_locally(c) for c in calls)]
    final = client.chat.completions.create(model="conol/claude-haiku-4-5", messages=messages, tools=[WEATHER])
    assert final.choices[0].message.content == "The weather in Paris is 21°C and sunny."
    assert final.choices[0].finish_reason == "stop"


def _stream_turn(proxy_client, messages):
    stream = proxy_client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=messages, tools=[WEATHER], stream=True
    )
    content, calls, finish = [], {}, None
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        for call in delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": call.id, "name": "", "arguments": ""})
            entry["name"] += call.function.name or ""
            entry["arguments"] += call.function.arguments or ""
        finish = chunk.choices[0].finish_reason or finish
    return "".join(content), list(calls.values()), finish


def test_tool_loop_streamed(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    messages = [{"role": "user", "content": "Weather in Paris? [[fake:tool_loop]]"}]
    _, calls, finish = _stream_turn(client, messages)
    assert finish == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert calls[0]["id"].startswith("call_")
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for c in calls
            ],
        },
        *(
            {"role": "tool", "tool_call_id": c["id"], "content": get_weather(**json.loads(c["arguments"]))}
            for c in calls
        ),
    ]
    content, calls, finish = _stream_turn(client, messages)
    assert (content, calls, finish) == ("The weather in Paris is 21°C and sunny.", [], "stop")


@pytest.mark.parametrize(
    "front_door, streamed",
    [("chat", False), ("responses", True)],
    ids=["chat-completions", "responses-streamed"],
)
def test_openai_agents_sdk_completes_a_tool_round_trip(
    proxy_fake_and_client, shipped_proxy, front_door, streamed
):
    """Through /v1/chat/completions, and through /v1/responses (the SDK's default model, a streamed run)."""
    agents = pytest.importorskip("agents")
    from support.proxyproc import MASTER_KEY

    agents.set_tracing_disabled(True)  # no trace upload to the network
    calls: list[str] = []

    @agents.function_tool(name_override="get_weather")
    def get_weather_tool(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return get_weather(city)

    client = openai.AsyncOpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0)
    agent = agents.Agent(
        name="weather",
        instructions="Answer weather questions with the tool.",
        tools=[get_weather_tool],
        model=(agents.OpenAIChatCompletionsModel if front_door == "chat" else agents.OpenAIResponsesModel)(
            model="conol/claude-haiku-4-5", openai_client=client
        ),
    )

    async def run() -> str:
        question = "Weather in Paris? [[fake:tool_loop]]"
        try:
            if not streamed:
                return str((await agents.Runner.run(agent, question)).final_output)
            result = agents.Runner.run_streamed(agent, question)
            async for _ in result.stream_events():
                pass
            return str(result.final_output)
        finally:
            await client.close()

    assert asyncio.run(run()) == "The weather in Paris is 21°C and sunny."
    assert calls == ["Paris"]
