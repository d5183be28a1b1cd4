"""Bad requests are refused through the SDK with a clear 400/404 before any session is created
(the same cases through the proxy: tests/e2e/test_bad_input_proxy.py)."""

from __future__ import annotations

import litellm
import pytest
from support.chat import MODEL

import litellm_conol
from litellm_conol.core._options import MAX_PROMPT_CHARS

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


HI = [{"role": "user", "content": "Hi"}]


def tool(parameters: object, name: object = "get_weather") -> dict:
    return {"type": "function", "function": {"name": name, "description": "d", "parameters": parameters}}


# name, request fields, expected status, text the error must contain
CASES = [
    ("empty messages", {"messages": []}, 400, "messages"),
    ("unknown role", {"messages": [{"role": "wizard", "content": "Hi"}]}, 400, "role"),
    ("content an object", {"messages": [{"role": "user", "content": {"text": "Hi"}}]}, 400, "content"),
    (
        "content part of unknown type",
        {"messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]},
        400,
        "input_audio",
    ),
    ("tool schema not an object schema", {"tools": [tool({"type": "string"})]}, 400, "get_weather"),
    ("tool schema not a dict", {"tools": [tool(["a", "b"])]}, 400, "parameters"),
    ("tool without a name", {"tools": [tool({"type": "object"}, name="")]}, 400, "name"),
    (
        "tool clashing with a built-in",
        {"tools": [tool({"type": "object"}, name="WebSearch")]},
        400,
        "WebSearch",
    ),
    (
        "tool_choice naming no tool",
        {
            "tools": [tool({"type": "object"})],
            "tool_choice": {"type": "function", "function": {"name": "nope"}},
        },
        400,
        "nope",
    ),
    ("unknown model", {"model": "conol/gpt-9000"}, 404, "gpt-9000"),
    ("n > 1", {"n": 2}, 400, "n=2"),
    # response_format json_object / json_schema are enforced (tests/test_structured*.py); these are not
    ("response_format of an unknown type", {"response_format": {"type": "yaml"}}, 400, "'yaml'"),
    (
        "response_format json_schema without a schema",
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
        400,
        "json_schema.schema",
    ),
    (
        "response_format schema that is no JSON Schema",
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 5}}}},
        400,
        "not a valid JSON Schema",
    ),
    ("max_repair_turns out of range", {"max_repair_turns": 99}, 400, "max_repair_turns"),
    ("tool_validation unknown", {"tool_validation": "sometimes"}, 400, "tool_validation"),
    ("reasoning_effort unknown", {"reasoning_effort": "extreme"}, 400, "extreme"),
    ("first_event_timeout negative", {"first_event_timeout": -1}, 400, "first_event_timeout"),
    ("idle_timeout not a number", {"idle_timeout": "soon"}, 400, "idle_timeout"),
    (
        "prompt beyond the documented limit",
        {"messages": [{"role": "user", "content": "x" * (MAX_PROMPT_CHARS + 1)}]},
        400,
        f"{MAX_PROMPT_CHARS:,}",
    ),
]


IDS = [case[0] for case in CASES]


EXCEPTIONS = {400: litellm.BadRequestError, 404: litellm.NotFoundError}


def request_fields(fields: dict) -> dict:
    return {"model": MODEL, "messages": HI, **fields}


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("name, fields, status, mentions", CASES, ids=IDS)
async def test_sdk_refuses_before_any_session(conol_fake, name, fields, status, mentions, stream):
    with pytest.raises(EXCEPTIONS[status]) as info:
        response = await litellm.acompletion(
            **request_fields(fields), stream=stream, api_base=conol_fake.base_url, api_key=conol_fake.token
        )
        if stream:
            async for _ in response:
                pass
    assert info.value.status_code == status
    assert mentions in str(info.value)
    assert conol_fake.requests == [], "conol was called for a request that should have been refused"
