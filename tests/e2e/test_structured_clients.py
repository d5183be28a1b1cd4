"""Structured output end to end through the real proxy (shipped config): the openai SDK's
``parse`` and ``stream`` with a pydantic model, openai-agents' ``output_type`` and LangChain's
``with_structured_output`` (json_schema and function_calling), all against the session fake."""

from __future__ import annotations

import asyncio
import json

import openai
import pydantic
import pytest
from support.chat import MODEL, user
from support.proxyproc import MASTER_KEY

from litellm_conol.fake._library import PERSON

pytestmark = pytest.mark.timeout(120)

ADA = {"name": "Ada Lovelace", "age": 36}
assert ADA == PERSON  # the fake's default answer


class Person(pydantic.BaseModel):
    name: str
    age: int


def asking(scenario: str) -> list[dict]:
    return user(f"Who wrote the first program? [[fake:{scenario}]]")


def test_parse_returns_the_model_after_a_repair_turn(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    completion = client.chat.completions.parse(
        model=MODEL, messages=asking("json_schema_repair"), response_format=Person
    )
    message = completion.choices[0].message
    assert message.parsed == Person(**ADA)
    assert message.content == json.dumps(ADA)
    fields = message.model_extra["provider_specific_fields"]
    assert fields["turns"] == 2
    assert fields["session_ids"] == list(fake.sessions)
    assert completion.usage.total_tokens > 0


def test_stream_sends_only_the_validated_json(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    contents: list[str] = []
    with client.chat.completions.stream(
        model=MODEL, messages=asking("json_repair"), response_format=Person
    ) as stream:
        for event in stream:
            if event.type == "content.delta":
                contents.append(event.delta)
        final = stream.get_final_completion()
    assert "".join(contents) == json.dumps(ADA)  # the first, broken answer never reached the client
    assert final.choices[0].message.parsed == Person(**ADA)


# A 502 is retried by the proxy's Router (num_retries): each retry is another 1 + max_repair_turns
# sessions. Once is enough to see it here.
NO_ROUTER_RETRIES = {"x-litellm-num-retries": "0"}


def test_a_never_valid_answer_is_a_502_not_a_success(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.parse(
            model=MODEL,
            messages=asking("json_never_valid"),
            response_format=Person,
            extra_body={"max_repair_turns": 1},
            extra_headers=NO_ROUTER_RETRIES,
        )
    assert caught.value.status_code == 502
    assert "the answer failed validation (2 turn(s), max_repair_turns=1" in str(caught.value)
    assert len(fake.sessions) == 2


def test_a_never_valid_stream_ends_in_an_error_without_content(proxy_fake_and_client):
    _, client = proxy_fake_and_client
    contents: list[str] = []
    with pytest.raises(openai.APIStatusError, match="failed validation") as caught:
        stream = client.chat.completions.create(
            model=MODEL,
            messages=asking("json_never_valid"),
            response_format={"type": "json_object"},
            extra_body={"max_repair_turns": 0},
            extra_headers=NO_ROUTER_RETRIES,
            stream=True,
        )
        for chunk in stream:
            if chunk.choices:
                contents.append(chunk.choices[0].delta.content or "")
    assert "".join(contents) == ""
    assert caught.value.status_code == 502  # nothing was sent before it: a plain HTTP error


@pytest.mark.parametrize("mode", ["TOOLS", "JSON"])
def test_instructor_tools_and_json_modes(proxy_fake_and_client, mode):
    """instructor itself (``instructor.from_openai``) in its default TOOLS mode (one tool named after
    the model, forced by tool_choice) and in JSON mode (json_object + the schema in a message).

    instructor 1.x caps jiter below 0.15 while the pinned openai needs jiter >= 0.16, so the Makefile
    installs it with ``--no-deps`` (its other requirements are in the test extra); it runs fine on
    the newer jiter."""
    import instructor

    fake, client = proxy_fake_and_client
    patched = instructor.from_openai(client, mode=getattr(instructor.Mode, mode))
    scenario = (
        "json_repair"
        if mode == "JSON"
        else 'tool_args_invalid name=Person json={"name":"Ada%20Lovelace","age":36} bad={"name":"Ada%20Lovelace"}'
    )
    person = patched.chat.completions.create(
        model=MODEL, messages=asking(scenario), response_model=Person, max_retries=0
    )
    assert (type(person).__name__, person.model_dump()) == ("Person", ADA)
    # Each mode's first answer was invalid (broken JSON; arguments missing "age"): our repair turn,
    # not instructor's own retries (max_retries=0), made it valid.
    assert len(fake.sessions) == 2


def test_openai_agents_output_type(proxy_fake_and_client, shipped_proxy):
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)  # no trace upload to the network
    client = openai.AsyncOpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0)
    agent = agents.Agent(
        name="biographer",
        instructions="Answer with the person.",
        output_type=Person,
        model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
    )

    async def run() -> object:
        try:
            result = await agents.Runner.run(agent, "Who wrote the first program? [[fake:json_fenced]]")
            return result.final_output
        finally:
            await client.close()

    assert asyncio.run(run()) == Person(**ADA)


@pytest.mark.parametrize(
    ("method", "scenario"),
    [
        ("json_schema", "json_repair"),
        # function_calling forces a call of a tool named after the model; its arguments are the answer
        (
            "function_calling",
            'tool_args_invalid name=Person bad={"name":"Ada"} json={"name":"Ada%20Lovelace","age":36}',
        ),
    ],
)
def test_langchain_with_structured_output(proxy_fake_and_client, shipped_proxy, method, scenario):
    langchain_openai = pytest.importorskip("langchain_openai")
    fake, _ = proxy_fake_and_client
    llm = langchain_openai.ChatOpenAI(
        model=MODEL, base_url=f"{shipped_proxy.base_url}/v1", api_key=MASTER_KEY, max_retries=0, timeout=60
    )
    structured = llm.with_structured_output(Person, method=method)
    assert structured.invoke(f"Who wrote the first program? [[fake:{scenario}]]") == Person(**ADA)
    assert len(fake.sessions) == 2  # each scenario needs one repair turn
