"""The bad requests both tiers send (the SDK in integration, the proxy in e2e): each must be
refused with its status and a message naming the problem, before any conol session."""

from __future__ import annotations

from litellm_conol.core.config.options import MAX_PROMPT_CHARS

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
    # response_format json_object / json_schema are enforced (tests/*/test_structured*.py); these are not
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
