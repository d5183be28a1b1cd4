"""The weather tool the client tests use, in each front door's format, and what the fake answers with it
(the ``tool_loop`` scenario: a get_weather Paris call, then ``The weather in Paris is <result>.``)."""

from __future__ import annotations

from typing import Any

RESULT = "21°C and sunny"
ANSWER = f"The weather in Paris is {RESULT}."

_NAME = "get_weather"
_DESCRIPTION = "Current weather for a city"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
ANTHROPIC_TOOL = {"name": _NAME, "description": _DESCRIPTION, "input_schema": _SCHEMA}
OPENAI_TOOL = {
    "type": "function",
    "function": {"name": _NAME, "description": _DESCRIPTION, "parameters": _SCHEMA},
}
RESPONSES_TOOL = {"type": "function", "name": _NAME, "description": _DESCRIPTION, "parameters": _SCHEMA}


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return {"Paris": RESULT}.get(city, "unknown")
