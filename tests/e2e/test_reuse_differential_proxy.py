"""The reuse differential test through the real LiteLLM proxy: its subset on the three routes agents
use (tests/integration/test_reuse_differential.py is the whole test, through the SDK).

Routes: chat (openai SDK), ``/v1/messages`` (anthropic SDK, a system prompt, tool results as
``tool_result`` blocks) and ``/v1/responses`` (openai SDK, the input items sent back whole, as Codex
does). Callers: two virtual keys of two teams (``support.two_keys``, a ``custom_auth`` hook: the
proxy's own keys need its database, which cannot run here) send word for word the same
conversation, interleaved turn by turn: a text turn, a weather question answered with the tool's
result, and a short reply, with reuse on and with ``session_reuse: off`` in the request. Readings:
``ROWS`` rows of the differential test's covering array under which a session goes on throughout
(the deployment's options, ``model_pinning`` and ``builtin_tools``, at their defaults: a caller may
not set them). Compared: each route's whole answer as its client reads it (text, thinking, tool calls
with their arguments, the stop reason), request by request. Checked in the fake: with reuse on, each
key's conversation on each route is one conol session (six per row, none shared), with reuse off one
session per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from support.proxyproc import running_proxy
from support.reuse_dx import Reading
from support.two_keys import KEYS

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(600)

MODEL = "claude-haiku-4-5"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CLAUDE_WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
# each route's conversation its own (one caller sending one history on two routes at once would race
# for one binding, as two requests for one history do: docs/session-reuse.md#two-requests-for-one-history)
TURNS = ("Tell me about stages on the {route} route.", "weather: Paris", "continue")
RESULT = "18°C"
ROUTES = ("chat", "messages", "responses")


def rows() -> list[Reading]:
    """Four rows of the covering array where a session goes on throughout, the client's options at
    their defaults, as different as they come (stage, replay, log mode, lag)."""
    import importlib.util

    from support.paths import TESTS

    spec = importlib.util.spec_from_file_location(
        "diff", TESTS / "integration" / "test_reuse_differential.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    picked: list[Reading] = []
    seen: set[tuple[Any, ...]] = set()
    for reading in module.READINGS:
        v = reading.values
        shape = (v["followup_stage"], v["followup_replay"], v["log_mode"], v["followup_status_lag"])
        if module.continues_throughout(reading) and shape not in seen:
            seen.add(shape)
            picked.append(Reading({**v, "model_pinning": "create", "builtin_tools": "hide"}))
    return picked[:4]


ROWS = rows()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    scenarios = list({reading.scenario.name: reading.scenario for reading in ROWS}.values())
    with FakeConol(scenarios=scenarios, default_scenario=scenarios[0].name) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    params = {"model": f"conol/{MODEL}", "api_base": fake.base_url, "api_key": fake.token}
    config = {
        "model_list": [{"model_name": MODEL, "litellm_params": params}],
        "litellm_settings": {
            "custom_provider_map": [{"provider": "conol", "custom_handler": "litellm_conol.conol_llm"}],
            "telemetry": False,
            "suppress_debug_info": True,
        },
        "general_settings": {"custom_auth": "support.two_keys.user_api_key_auth"},
    }
    env = {"CONOL_FAILURE_MEMORY_SECONDS": "0"}
    with running_proxy(
        config, tmp_path_factory.mktemp("reuse-diff-proxy"), env=env, secrets=[fake.token]
    ) as p:
        yield p


# --- one conversation on one route ---------------------------------------------------------------------


async def chat(base_url: str, key: str, reuse: bool) -> list[Any]:
    extra = {} if reuse else {"extra_body": {"session_reuse": "off"}}
    messages: list[dict[str, Any]] = []
    answers: list[Any] = []
    async with openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=60) as client:
        for text in TURNS:
            messages.append({"role": "user", "content": text.format(route="chat")})
            while True:
                reply = await client.chat.completions.create(
                    model=MODEL, messages=messages, tools=[WEATHER], **extra
                )
                choice = reply.choices[0]
                message = choice.message
                calls = [
                    (c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()
                ]
                thinking = (message.model_extra or {}).get("reasoning_content")
                answers.append((message.content, thinking, calls, choice.finish_reason))
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": RESULT})
    return answers


async def messages_route(base_url: str, key: str, reuse: bool) -> list[Any]:
    extra = {} if reuse else {"extra_body": {"session_reuse": "off"}}
    messages: list[dict[str, Any]] = []
    answers: list[Any] = []
    async with anthropic.AsyncAnthropic(base_url=base_url, api_key=key, max_retries=0, timeout=60) as client:
        for text in TURNS:
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": text.format(route="messages")}]}
            )
            while True:
                reply = await client.messages.create(
                    model=MODEL,
                    max_tokens=4096,
                    system="You are a careful assistant.",
                    tools=[CLAUDE_WEATHER],
                    messages=messages,
                    **extra,
                )
                blocks = [
                    (
                        b.type,
                        getattr(b, "text", None) or getattr(b, "thinking", None),
                        getattr(b, "input", None),
                    )
                    for b in reply.content
                ]
                answers.append((blocks, reply.stop_reason))
                messages.append(
                    {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
                )
                uses = [b for b in reply.content if b.type == "tool_use"]
                if not uses:
                    break
                results = [{"type": "tool_result", "tool_use_id": b.id, "content": RESULT} for b in uses]
                messages.append({"role": "user", "content": results})
    return answers


async def responses_route(base_url: str, key: str, reuse: bool) -> list[Any]:
    extra = {} if reuse else {"extra_body": {"session_reuse": "off"}}
    items: list[Any] = []
    answers: list[Any] = []
    tool = {"type": "function", **WEATHER["function"]}
    async with openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=60) as client:
        for text in TURNS:
            items.append({"role": "user", "content": text.format(route="responses")})
            while True:
                reply = await client.responses.create(model=MODEL, input=items, tools=[tool], **extra)
                calls = [item for item in reply.output if item.type == "function_call"]
                kinds = [item.type for item in reply.output]
                answers.append((reply.output_text, kinds, [(c.name, json.loads(c.arguments)) for c in calls]))
                items += [item.model_dump(exclude_none=True) for item in reply.output]
                if not calls:
                    break
                items += [
                    {"type": "function_call_output", "call_id": c.call_id, "output": RESULT} for c in calls
                ]
    return answers


DRIVERS = {"chat": chat, "messages": messages_route, "responses": responses_route}


async def everyone(base_url: str, reuse: bool) -> dict[tuple[str, str], list[Any]]:
    """Every route's conversation by both keys at once."""
    jobs = {(route, key): DRIVERS[route](base_url, key, reuse) for route in ROUTES for key in KEYS}
    answers = await asyncio.gather(*jobs.values())
    return dict(zip(jobs, answers, strict=True))


def turn_posts(fake: FakeConol) -> int:
    return sum(1 for r in fake.requests if r.method == "POST" and r.path.endswith("/messages"))


@pytest.mark.parametrize("reading", ROWS, ids=[f"row{i}" for i in range(len(ROWS))])
def test_reuse_on_answers_as_reuse_off_on_every_route_for_both_keys(fake, proxy, reading):
    fake.reset()
    fake.configure(**reading.config, default_scenario=reading.scenario.name)
    on = asyncio.run(everyone(proxy.base_url, reuse=True))
    on_sessions, on_posts = len(fake.sessions), turn_posts(fake)
    fake.reset()
    fake.configure(**reading.config, default_scenario=reading.scenario.name)
    off = asyncio.run(everyone(proxy.base_url, reuse=False))
    requests = {caller: len(answers) for caller, answers in off.items()}
    assert on == off, reading.label
    assert requests == dict.fromkeys(off, len(TURNS) + 1)  # the weather turn takes two requests
    # reuse on: one session per key and route, every later request a follow-up on it
    assert (on_sessions, on_posts) == (len(off), sum(requests.values()) - len(off)), reading.label
    assert len(fake.sessions) == sum(requests.values())
