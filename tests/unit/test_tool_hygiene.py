"""Tool hygiene (core/request/tool_hygiene): deferred tools are not sent to conol, and conol's input_schema
holds JSON Schema keywords only."""

from __future__ import annotations

import json

import pydantic
import pytest

from litellm_conol import BadRequest
from litellm_conol.core.request.render import convert_tools
from litellm_conol.core.request.tool_hygiene import schema_keywords_only

pytestmark = pytest.mark.timeout(30)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


@pytest.mark.parametrize(
    "deferred",
    [
        # Anthropic format, as Claude Code sends it
        {
            "name": "mcp__x",
            "description": "never call this tool",
            "input_schema": SCHEMA,
            "defer_loading": True,
        },
        # what LiteLLM's /v1/messages adapter hands the handler: the flag inside the schema
        {
            "type": "function",
            "function": {
                "name": "mcp__x",
                "description": "d",
                "parameters": {**SCHEMA, "defer_loading": True},
            },
        },
        {"type": "function", "function": {"name": "mcp__x", "parameters": SCHEMA, "defer_loading": True}},
        {"type": "function", "defer_loading": True, "function": {"name": "mcp__x", "parameters": SCHEMA}},
    ],
)
def test_a_deferred_tool_is_not_sent(deferred):
    weather = {"name": "get_weather", "description": "w", "input_schema": SCHEMA}
    assert [t.name for t in convert_tools([weather, deferred])] == ["get_weather"]


def test_a_false_defer_flag_keeps_the_tool_and_loses_the_key():
    (tool,) = convert_tools([{"name": "t", "input_schema": {**SCHEMA, "defer_loading": False}}])
    assert tool.input_schema == SCHEMA


def test_non_schema_keys_are_removed_at_every_depth_and_schema_keywords_kept():
    schema = {
        "type": "object",
        "defer_loading": True,
        "cache_control": {"type": "ephemeral"},
        "x-vendor": 1,
        "$defs": {"Pos": {"type": "integer", "minimum": 0, "strict": True}},
        "properties": {
            # a property may be named like a non-keyword: names are kept, its schema is cleaned
            "defer_loading": {"type": "boolean", "x-ui": "toggle", "description": "d"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Pos", "junk": 1}, "minItems": 1},
            "pair": {"type": "array", "items": [{"type": "string", "junk": 1}, {"type": "number"}]},
            "choice": {"anyOf": [{"type": "string", "junk": 1}, {"const": {"junk": "kept: a value"}}]},
            "deps": {"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"], "junk": 1}}},
        },
        "additionalProperties": {"type": "string", "junk": 1},
        "required": ["items"],
        "default": {"junk": "kept: a value"},
    }
    assert schema_keywords_only(schema) == {
        "type": "object",
        "$defs": {"Pos": {"type": "integer", "minimum": 0}},
        "properties": {
            "defer_loading": {"type": "boolean", "description": "d"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Pos"}, "minItems": 1},
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
            "choice": {"anyOf": [{"type": "string"}, {"const": {"junk": "kept: a value"}}]},
            "deps": {"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
        },
        "additionalProperties": {"type": "string"},
        "required": ["items"],
        "default": {"junk": "kept: a value"},
    }
    assert schema_keywords_only(True) is True
    kept = {**schema, "defer_loading": False}  # (True would leave the tool out)
    (tool,) = convert_tools([{"type": "function", "function": {"name": "f", "parameters": kept}}])
    assert tool.input_schema == schema_keywords_only(schema)


def test_the_same_tools_are_converted_once_and_shared():
    """Agents resend their tools with every request: one converted list serves them all."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": SCHEMA}}]
    first = convert_tools(tools)
    again = convert_tools(json.loads(json.dumps(tools)))  # the next request's copy
    assert again == first and again[0] is first[0]
    with pytest.raises(pydantic.ValidationError):
        first[0].name = "g"  # frozen: no request can change another's tools


def test_bad_tools_are_refused_every_time():
    for _ in range(2):
        with pytest.raises(BadRequest, match=r"tools\[0\] has no name"):
            convert_tools([{"type": "function", "function": {"parameters": SCHEMA}}])
