"""response_format and tool-argument validation through the four LiteLLM paths, against the fake:
the validated JSON, repair turns (sessions, transcript, usage), and the typed error when it never
validates. Streamed and non-streamed answers must agree exactly."""

from __future__ import annotations

import json

import litellm
import pydantic
import pytest
from litellm.exceptions import MidStreamFallbackError
from support.chat import ask
from support.weather import OPENAI_TOOL as WEATHER

import litellm_conol
from litellm_conol.fake._library import NOT_JSON, PERSON, PERSON_CUT

litellm.suppress_debug_info = True
litellm_conol.register()

pytestmark = pytest.mark.timeout(60)

PERSON_TEXT = json.dumps(PERSON)  # the canonical JSON a validated answer comes back as


class Person(pydantic.BaseModel):
    name: str
    age: int


@pytest.fixture
def kw(conol_fake):
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


def asking(scenario: str, **extra):
    return ask(f"Who? [[fake:{scenario}]]", **extra)


async def call(path: str, request: dict) -> dict:
    """One request on one of the four paths, as {content, tool_calls, finish, fields, usage}."""
    stream = path.endswith("stream")
    if path.startswith("sync"):
        result = litellm.completion(
            **request, stream=stream, stream_options={"include_usage": True} if stream else None
        )
    else:
        result = await litellm.acompletion(
            **request, stream=stream, stream_options={"include_usage": True} if stream else None
        )
    if not stream:
        message = result.choices[0].message
        return {
            "content": message.content,
            "tool_calls": [(c.function.name, c.function.arguments) for c in message.tool_calls or []],
            "finish": result.choices[0].finish_reason,
            "fields": message.provider_specific_fields,
            "usage": result.usage.total_tokens,
        }
    chunks = [c async for c in result] if path.startswith("async") else list(result)
    assert len({c.id for c in chunks}) == 1
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    merged: dict[int, tuple[str, str]] = {}  # tool-call deltas merge by index, as OpenAI clients do
    for c in chunks:
        for t in (c.choices[0].delta.tool_calls or []) if c.choices else []:
            name, arguments = merged.get(t.index, (t.function.name, ""))
            merged[t.index] = (name, arguments + (t.function.arguments or ""))
    calls = list(merged.values())
    fields = [c.provider_specific_fields for c in chunks if (c.provider_specific_fields or {}).get("turns")]
    usage = [c.usage.total_tokens for c in chunks if getattr(c, "usage", None)]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    return {
        "content": content if not calls else None,
        "tool_calls": calls,
        "finish": finish[-1],
        "fields": fields[-1] if fields else {},
        "usage": usage[-1],
    }


PATHS = ["sync", "sync_stream", "async", "async_stream"]
# Streamed, LiteLLM wraps a provider error in MidStreamFallbackError (keeping the original and status)
FAILED = (litellm.BadGatewayError, MidStreamFallbackError)


def original(exc: BaseException) -> BaseException:
    return getattr(exc, "original_exception", None) or exc


@pytest.mark.parametrize("path", PATHS)
async def test_an_answer_repaired_in_one_turn_on_every_path(path, kw, conol_fake):
    got = await call(path, asking("json_repair", response_format=Person, **kw))
    assert (got["content"], got["finish"], got["tool_calls"]) == (PERSON_TEXT, "stop", [])
    assert got["fields"]["turns"] == 2
    sessions = list(conol_fake.sessions.values())
    assert got["fields"]["session_ids"] == [s.id for s in sessions]
    # the repair turn: the conversation, the bad answer, what is wrong with it, the instruction again
    repair = sessions[1].messages
    assert repair[0] == "Who? [[fake:json_repair]]"
    assert repair[1] == f"[Assistant]\n{PERSON_CUT}"
    assert repair[2].startswith(
        "Your previous answer was rejected: the answer is not valid JSON: Expecting ','"
    )
    assert repair[3].startswith("[System]\nAnswer with a single JSON object") and '"age"' in repair[3]
    assert sessions[0].messages == [repair[0], repair[3]]


@pytest.mark.parametrize("path", ["sync", "async_stream"])
@pytest.mark.parametrize(
    ("scenario", "turns"), [("json_valid", 1), ("json_fenced", 1), ("json_schema_repair", 2)]
)
async def test_valid_fenced_and_schema_repaired_answers(path, scenario, turns, kw):
    got = await call(path, asking(scenario, response_format=Person, **kw))
    assert (got["content"], got["finish"], got["fields"]["turns"]) == (PERSON_TEXT, "stop", turns)


async def test_usage_covers_every_turn(kw):
    one = await call("async", asking("json_valid", response_format=Person, **kw))
    two = await call("async", asking("json_schema_repair", response_format=Person, **kw))
    # the repair turn re-sends the conversation plus the bad answer: well over twice one turn
    assert two["usage"] > 2 * one["usage"]


async def test_json_object_mode_and_dict_json_schema(kw):
    got = await call("async", asking("json_fenced", response_format={"type": "json_object"}, **kw))
    assert got["content"] == PERSON_TEXT
    schema = {"type": "json_schema", "json_schema": {"name": "P", "schema": Person.model_json_schema()}}
    got = await call("async_stream", asking("json_repair", response_format=schema, **kw))
    assert (got["content"], got["fields"]["turns"]) == (PERSON_TEXT, 2)


@pytest.mark.parametrize("path", ["sync", "async_stream"])
async def test_never_valid_is_a_502_after_the_repair_turns(path, kw, conol_fake):
    with pytest.raises(FAILED) as caught:
        await call(path, asking("json_never_valid", response_format=Person, max_repair_turns=1, **kw))
    assert isinstance(original(caught.value), litellm.BadGatewayError)
    assert caught.value.status_code == 502
    message = str(original(caught.value))
    assert "the answer failed validation (2 turn(s), max_repair_turns=1; sessions " in message
    assert (
        f"the answer is not valid JSON: Expecting value (line 1, column 1); it begins {NOT_JSON!r}" in message
    )
    assert all(s.id in message for s in conol_fake.sessions.values())
    assert len(conol_fake.sessions) == 2


async def test_no_repair_turns_fail_at_once(kw, conol_fake):
    with pytest.raises(litellm.BadGatewayError, match=r"1 turn\(s\), max_repair_turns=0"):
        await call(
            "async", asking("json_repair", response_format=Person, extra_body={"max_repair_turns": 0}, **kw)
        )
    assert len(conol_fake.sessions) == 1


# --- tool arguments -----------------------------------------------------------------------------

PARIS = [("get_weather", '{"city": "Paris"}')]


@pytest.mark.parametrize("path", PATHS)
async def test_invalid_tool_arguments_get_a_repair_turn(path, kw, conol_fake):
    got = await call(path, asking("tool_args_invalid", tools=[WEATHER], **kw))
    assert (got["tool_calls"], got["finish"], got["content"]) == (PARIS, "tool_calls", None)
    assert got["fields"]["turns"] == 2
    repair = list(conol_fake.sessions.values())[1].messages
    assert repair[1].startswith("[Assistant]\n[Tool call #call_") and repair[1].endswith(
        ': get_weather({"town": "Paris"})]'
    )
    assert repair[2] == (
        "Your tool call was rejected and not run: the arguments of get_weather "
        """{"town": "Paris"} do not match its schema at $: 'city' is a required property.\n"""
        "Call the tool again with arguments that match its input schema."
    )


@pytest.mark.parametrize("path", ["sync", "async_stream"])
async def test_tool_validation_error_fails_at_once(path, kw, conol_fake):
    with pytest.raises(FAILED, match="tool_validation is 'error'") as caught:
        await call(path, asking("tool_args_invalid", tools=[WEATHER], tool_validation="error", **kw))
    assert isinstance(original(caught.value), litellm.BadGatewayError)
    assert "'city' is a required property" in str(caught.value)
    assert len(conol_fake.sessions) == 1


async def test_tool_validation_off_passes_the_call_through(kw):
    got = await call(
        "async_stream", asking("tool_args_invalid", tools=[WEATHER], tool_validation="off", **kw)
    )
    assert got["tool_calls"] == [("get_weather", '{"town": "Paris"}')]
    assert got["fields"] == {}  # no chunk carries "turns": nothing was validated


async def test_a_valid_tool_call_takes_one_turn(kw):
    got = await call("async_stream", asking("tool_call_json", tools=[WEATHER], **kw))
    assert (got["tool_calls"], got["fields"]["turns"]) == (PARIS, 1)
