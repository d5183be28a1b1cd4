"""Session reuse through the real LiteLLM proxy: multi-turn agent conversations over the openai SDK
(chat), the anthropic SDK (``/v1/messages``, shaped as Claude Code sends it) and ``/v1/responses``; the
answers are exactly reuse-off's, every turn after the first continues the one conol session; two
proxy instances sharing Redis continue each other's sessions, and a dead Redis costs nothing but reuse
across instances."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
import yaml
from support.proxyproc import MASTER_KEY, ProxyProcess
from support.redisproc import RedisServer, require_redis_server

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(180)

MODEL = "claude-haiku-4-5"
CUSTOM = {"custom_provider_map": [{"provider": "conol", "custom_handler": "litellm_conol.conol_llm"}]}
STEP = {
    "type": "function",
    "function": {
        "name": "run_step",
        "description": "Run one step of the task",
        "parameters": {"type": "object", "properties": {"step": {"type": "integer"}}, "required": ["step"]},
    },
}
# Claude Code's shape: a long system prompt in blocks with cache_control, its tools, thinking on.
CLAUDE_SYSTEM = [
    {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
    {"type": "text", "text": "Use the tools available to you. " * 40, "cache_control": {"type": "ephemeral"}},
]
CLAUDE_TOOLS = [
    {
        "name": "get_weather",
        "description": "Current weather of a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "Bash",
        "description": "Run a shell command",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
]


def write_config(directory: Path, fake: FakeConol, name: str = "config.yaml") -> Path:
    params = {"model": f"conol/{MODEL}", "api_base": fake.base_url, "api_key": fake.token}
    config = {
        "model_list": [
            {"model_name": MODEL, "litellm_params": params},
            {"model_name": "no-reuse", "litellm_params": {**params, "session_reuse": "off"}},
        ],
        "litellm_settings": {**CUSTOM, "telemetry": False, "suppress_debug_info": True},
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
    }
    path = directory / name
    path.write_text(yaml.safe_dump(config))
    return path


def start_proxy(config: Path, env: dict[str, str] | None = None) -> ProxyProcess:
    process = ProxyProcess(config=config, env=env or {}, log_path=config.with_suffix(".log"))
    process.wait_ready()
    return process


@pytest.fixture(scope="module")
def fake():
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(fake, tmp_path_factory):
    process = start_proxy(write_config(tmp_path_factory.mktemp("reuse"), fake))
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def conol(fake):
    fake.reset()
    return fake


def turn_posts(fake: FakeConol) -> list:
    return [r for r in fake.requests if r.method == "POST" and r.path.endswith("/messages")]


# --- openai SDK, chat ---------------------------------------------------------------------------------


def chat_agent_task(client: openai.OpenAI, model: str) -> tuple[list[str | None], list[dict]]:
    """An agent task (two tool calls, then the answer) and a follow-up question: answers and fields."""
    messages: list = [{"role": "user", "content": "[[fake:agent_loop calls=2]] Check the weather twice."}]
    answers, fields = [], []
    for step in range(4):
        choice = client.chat.completions.create(model=model, messages=messages, tools=[STEP]).choices[0]
        messages.append(choice.message.model_dump(exclude_none=True))
        answers.append(choice.message.content)
        fields.append(choice.message.provider_specific_fields)
        if choice.message.tool_calls:
            call = choice.message.tool_calls[0]
            assert json.loads(call.function.arguments) == {"step": step + 1}
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"{10 + step}°C"})
        else:
            messages.append({"role": "user", "content": "[[fake:echo]] Thanks!"})
    return answers, fields


def test_openai_chat_agent_task_continues_one_session(proxy, conol):
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        answers, fields = chat_agent_task(client, MODEL)
        assert answers[2:] == ["Finished after 2 tool call(s).", "[[fake:echo]] Thanks!"]
        assert [f["session_reused"] for f in fields] == [False, True, True, True]
        assert len(conol.sessions) == 1 and conol.last_session.turns == 4
        assert [len(r.body["messages"]) for r in turn_posts(conol)] == [1, 1, 1]
        conol.reset()
        off_answers, off_fields = chat_agent_task(client, "no-reuse")
    assert off_answers == answers
    assert {f["session_reused"] for f in off_fields} == {False}
    assert len(conol.sessions) == 4


# --- anthropic SDK, /v1/messages as Claude Code sends it -----------------------------------------------


def claude_message(client: anthropic.Anthropic, streamed: bool, **request: Any) -> Any:
    if not streamed:
        return client.messages.create(**request)
    with client.messages.stream(**request) as stream:  # what Claude Code does
        for _ in stream:
            pass
        return stream.get_final_message()


def claude_turns(client: anthropic.Anthropic, model: str, streamed: bool = False) -> list[list[tuple]]:
    messages: list = [{"role": "user", "content": [{"type": "text", "text": "[[fake:tool_loop]] Weather?"}]}]
    shapes = []
    for result in ("sunny", None):
        message = claude_message(
            client,
            streamed,
            model=model,
            max_tokens=32000,
            system=CLAUDE_SYSTEM,
            tools=CLAUDE_TOOLS,
            thinking={"type": "enabled", "budget_tokens": 31999},
            messages=messages,
        )
        shapes.append(
            [(b.type, getattr(b, "text", None), getattr(b, "input", None)) for b in message.content]
        )
        if result is None:
            break
        # Claude Code sends the whole assistant message back (thinking with its signature included),
        # and moves its cache_control breakpoint to the newest message
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
        )
        tool_use = next(b for b in message.content if b.type == "tool_use")
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_use.id,
                        "content": [{"type": "text", "text": result}],
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        )
    return shapes


@pytest.mark.parametrize("streamed", [False, True], ids=["non-streamed", "streamed"])
def test_anthropic_messages_claude_code_shaped_continue_one_session(proxy, conol, streamed):
    with anthropic.Anthropic(
        base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as client:
        shapes = claude_turns(client, MODEL, streamed)
        assert [s for s in shapes[1] if s[0] == "text"] == [("text", "The weather in Paris is sunny.", None)]
        assert len(conol.sessions) == 1
        assert len(turn_posts(conol)) == 1
        assert turn_posts(conol)[0].body["messages"][0]["content"].endswith("]: sunny")
        conol.reset()
        assert claude_turns(client, "no-reuse", streamed) == shapes
    assert len(conol.sessions) == 2


# --- /v1/responses -------------------------------------------------------------------------------------


def responses_turns(client: openai.OpenAI, model: str) -> list[str]:
    items: list = []
    answers = []
    for text in ("[[fake:echo]] one", "two", "three"):
        items.append({"role": "user", "content": text})
        response = client.responses.create(model=model, input=items)
        answers.append(response.output_text)
        items += [item.model_dump(exclude_none=True) for item in response.output]
    return answers


def test_responses_api_continues_one_session(proxy, conol):
    with openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as client:
        answers = responses_turns(client, MODEL)
        assert answers == ["[[fake:echo]] one", "two", "three"]
        assert len(conol.sessions) == 1 and conol.last_session.turns == 3
        conol.reset()
        assert responses_turns(client, "no-reuse") == answers
    assert len(conol.sessions) == 3


# --- openai-agents ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("front_door", ["chat", "responses"])
def test_openai_agents_task_continues_one_session(proxy, conol, front_door):
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)  # no trace upload to the network
    steps: list[int] = []

    @agents.function_tool(name_override="run_step")
    def run_step(step: int) -> str:
        """Run one step of the task."""
        steps.append(step)
        return f"step {step} done"

    async def run() -> str:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0)
        kind = agents.OpenAIChatCompletionsModel if front_door == "chat" else agents.OpenAIResponsesModel
        agent = agents.Agent(
            name="worker",
            instructions="Do the task step by step with the tool.",
            tools=[run_step],
            model=kind(model=MODEL, openai_client=client),
        )
        try:
            result = agents.Runner.run_streamed(agent, "[[fake:agent_loop calls=2]] Do the task.")
            async for _ in result.stream_events():
                pass
            return str(result.final_output)
        finally:
            await client.close()

    assert asyncio.run(run()) == "Finished after 2 tool call(s)."
    assert steps == [1, 2]
    assert len(conol.sessions) == 1 and conol.last_session.turns == 3


# --- two instances sharing Redis -------------------------------------------------------------------------


def post_chat(proxy: ProxyProcess, messages: list) -> dict:
    response = httpx.post(
        f"{proxy.base_url}/v1/chat/completions",
        json={"model": MODEL, "messages": messages},
        headers={"Authorization": f"Bearer {MASTER_KEY}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]["message"]


def alternate(proxies: list[ProxyProcess], turns: list[str]) -> tuple[list[str], list[bool]]:
    messages: list = []
    answers, reused = [], []
    for index, text in enumerate(turns):
        messages.append({"role": "user", "content": text})
        message = post_chat(proxies[index % len(proxies)], messages)
        messages.append({"role": "assistant", "content": message["content"]})
        answers.append(message["content"])
        reused.append(message["provider_specific_fields"]["session_reused"])
    return answers, reused


def test_two_instances_sharing_redis_continue_each_others_sessions(fake, tmp_path):
    binary = require_redis_server()
    fake.reset()
    redis_server = RedisServer(binary, tmp_path / "redis.log")
    redis_server.wait_ready()
    config = write_config(tmp_path, fake)
    env = {"REDIS_URL": redis_server.url}
    proxies = []
    try:
        proxies = [start_proxy(config, env), start_proxy(write_config(tmp_path, fake, "b.yaml"), env)]
        turns = ["[[fake:echo]] one", "two", "three", "four"]
        answers, reused = alternate(proxies, turns)
        assert answers == turns and reused == [False, True, True, True]
        assert len(fake.sessions) == 1
        keys = redis_server.client.keys("litellm-conol:reuse:*")
        assert len(keys) == 1
        stored = redis_server.client.get(keys[0]).decode()
        assert fake.token not in stored and "four" not in stored
        assert json.loads(stored)["session_id"] == fake.last_session.id
        # Redis dies: every answer stays exact; reuse carries on within each instance
        redis_server.kill()
        fake.reset()
        answers, reused = alternate(proxies[:1], ["[[fake:echo]] uno", "dos", "tres"])
        assert answers == ["[[fake:echo]] uno", "dos", "tres"]
        assert reused == [False, True, True]
    finally:
        for process in proxies:
            process.stop()
        redis_server.stop()
