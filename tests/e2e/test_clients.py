"""Clients users already run, end to end through the real proxy (shipped config, fake conol): the async
openai SDK, LangChain's ``ChatOpenAI``, plain HTTP with hand-parsed SSE.
(Sync openai SDK: test_proxy.py; tools and openai-agents: test_proxy_tools.py; Router in code:
tests/integration/test_router_in_code.py.)"""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
from support.chat import MODEL, user
from support.estimates import estimated_completion_tokens, estimated_prompt_tokens
from support.proxyproc import MASTER_KEY
from support.weather import ANSWER, get_weather

import litellm_conol
from litellm_conol.fake import BUILTINS

litellm_conol.register()


pytestmark = pytest.mark.timeout(120)


HELLO = BUILTINS["hello"]


DONE = BUILTINS["done"]


CALL = BUILTINS["tool_call"].tool_calls[0]


# --- openai SDK, async --------------------------------------------------------------------------


async def test_async_openai_non_streamed_and_streamed(proxy_fake_and_client, shipped_proxy):
    async with openai.AsyncOpenAI(
        base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as client:
        response = await client.chat.completions.create(model=MODEL, messages=user("Hi"))
        assert response.choices[0].message.content == HELLO.final_text
        assert response.choices[0].message.model_extra["reasoning_content"] == HELLO.final_reasoning

        stream = await client.chat.completions.create(
            model=MODEL, messages=user("[[fake:done]]"), stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == DONE.final_text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert len({c.id for c in chunks}) == 1


async def test_async_openai_concurrent_streams_each_get_their_own_answer(
    proxy_fake_and_client, shipped_proxy
):
    prompts = [f"[[fake:echo]] stream number {n}, with its own text" for n in range(4)]

    async def streamed(proxy_client: openai.AsyncOpenAI, prompt: str) -> str:
        stream = await proxy_client.chat.completions.create(model=MODEL, messages=user(prompt), stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async with openai.AsyncOpenAI(
        base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as client:
        answers = await asyncio.gather(*(streamed(client, p) for p in prompts))
    assert answers == [BUILTINS["echo"].expected_for(p).final_text for p in prompts]


# --- plain HTTP, SSE parsed by hand (what curl shows) -------------------------------------------


def test_raw_http_sse_stream(proxy_fake_and_client, shipped_proxy):
    body = {
        "model": MODEL,
        "messages": user("Hi"),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    with httpx.stream(
        "POST", f"{shipped_proxy.base_url}/v1/chat/completions", json=body, headers=headers, timeout=60
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines), lines
    payloads = [line.removeprefix("data: ") for line in lines]
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert len({c["id"] for c in chunks}) == 1
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("content") or "" for d in deltas) == HELLO.final_text
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == HELLO.final_reasoning
    finishes = [c["choices"][0].get("finish_reason") for c in chunks if c["choices"]]
    assert [f for f in finishes if f] == ["stop"]
    # usage rides on the last chunk, and is the same estimate as the non-streamed answer's
    whole = httpx.post(
        f"{shipped_proxy.base_url}/v1/chat/completions",
        json={**body, "stream": False},
        headers=headers,
        timeout=60,
    ).json()
    usage = chunks[-1]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (
        whole["usage"]["prompt_tokens"],
        whole["usage"]["completion_tokens"],
    )
    assert usage["completion_tokens"] > 0
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (
        estimated_prompt_tokens(user("Hi")),
        estimated_completion_tokens(HELLO),
    )


def test_raw_http_non_streamed(proxy_fake_and_client, shipped_proxy):
    headers = {"Authorization": f"Bearer {MASTER_KEY}"}
    r = httpx.post(
        f"{shipped_proxy.base_url}/v1/chat/completions",
        json={"model": MODEL, "messages": user("[[fake:done]]")},
        headers=headers,
        timeout=60,
    )
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == DONE.final_text
    assert body["choices"][0]["finish_reason"] == "stop"


# --- LangChain ChatOpenAI -----------------------------------------------------------------------


@pytest.fixture
def chat_openai(proxy_fake_and_client, shipped_proxy):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=MODEL,
        base_url=shipped_proxy.base_url,
        api_key=MASTER_KEY,
        max_retries=0,
        timeout=60,
        stream_usage=True,
    )


def test_langchain_invoke_and_stream(chat_openai):
    assert chat_openai.invoke("Hi").content == HELLO.final_text
    chunks = list(chat_openai.stream("[[fake:done]]"))
    assert "".join(chunk.content for chunk in chunks) == DONE.final_text
    assert len([c for c in chunks if c.content]) > 1  # it really streamed
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = whole + chunk
    assert whole.usage_metadata["output_tokens"] > 0  # from the usage on the last chunk
    assert whole.usage_metadata["output_tokens"] == estimated_completion_tokens(DONE)


def test_langchain_bind_tools_and_the_tool_message_turn(chat_openai):
    from langchain_core.messages import HumanMessage, ToolMessage

    llm = chat_openai.bind_tools([get_weather])
    question = HumanMessage("Weather in Paris? [[fake:tool_loop]]")
    first = llm.invoke([question])
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [(CALL.name, dict(CALL.arguments))]
    assert first.response_metadata["finish_reason"] == "tool_calls"

    streamed = None
    for chunk in llm.stream([question]):
        streamed = chunk if streamed is None else streamed + chunk
    assert [(c["name"], c["args"]) for c in streamed.tool_calls] == [(CALL.name, dict(CALL.arguments))]

    (call,) = first.tool_calls
    result = ToolMessage(get_weather(**call["args"]), tool_call_id=call["id"])
    assert llm.invoke([question, first, result]).content == ANSWER
