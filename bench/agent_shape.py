"""What Claude Code sends to ``/v1/messages``, turn after turn: the agent-shaped benchmark's requests.

The shape is the recorded one (``tests/fixtures/request_pairs/claude-code-print.json``, Claude Code
2.1.332 through the proxy): the request's top-level fields (``max_tokens``, ``thinking``,
``context_management``, ``stream``), a system of three blocks (the billing header, the agent line,
the long prompt; here cut to ``SYSTEM_CHARS`` in all), the first user message's text blocks (the
environment, agents, skills, date reminders) before the task, the 12 tools it offered (names as
recorded; the recording keeps no schemas, so each has a JSON Schema of the kind Claude Code sends:
draft-07, ``additionalProperties: false``, enums, nested arrays), and after each turn the assistant's
content blocks as received, then a user message with the ``tool_result`` (``TOOL_RESULT_CHARS``),
the cache breakpoint moved onto the newest result as Claude Code moves it.

Each turn's answer is the benchmark workload (``end=call``): the text, then a call of ``Bash``; the
marker in the task names it, so both fakes answer every turn alike. No thinking blocks: the fakes'
answers carry none. This module imports neither litellm nor aiohttp.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .workload import AGENT_CALL, AGENT_TOOL, Workload

FIXTURE = Path(__file__).resolve().parent.parent / "tests/fixtures/request_pairs/claude-code-print.json"
SYSTEM_CHARS = 16_000
TOOL_RESULT_CHARS = 2_048
TURNS = 20  # the fixed-shape requests are a conversation's turn 20: 19 tool calls and results before
MODEL = "claude-haiku-4-5"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
EPHEMERAL = {"type": "ephemeral"}


@functools.cache
def _recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def _block_text(block: dict[str, Any]) -> dict[str, Any]:
    text = block.get("text")
    if isinstance(text, dict):  # stored once: {"$string": n}
        return {**block, "text": _recorded()["strings"][text["$string"]]}
    return dict(block)


@functools.cache
def system_blocks() -> tuple[dict[str, Any], ...]:
    """The recorded system blocks, the long prompt cut so that all of them hold ``SYSTEM_CHARS``."""
    data = _recorded()
    blocks = [_block_text(data["parts"][i]) for i in data["requests"][0]["raw"]["system"]]
    rest = SYSTEM_CHARS - sum(len(b["text"]) for b in blocks[:-1])
    blocks[-1]["text"] = blocks[-1]["text"][:rest]
    return tuple(blocks)


@functools.cache
def _reminders() -> tuple[dict[str, Any], ...]:
    """The first user message's text blocks before the task (Claude Code's system reminders)."""
    data = _recorded()
    first = data["parts"][data["requests"][0]["raw"]["messages"][0]]
    return tuple(_block_text(b) for b in first["content"][:-1])


def first_user(marker: str) -> dict[str, Any]:
    task = {
        "type": "text",
        "text": f"{marker} Look around and refactor the project.",
        "cache_control": EPHEMERAL,
    }
    return {"role": "user", "content": [*copy.deepcopy(_reminders()), task]}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "$schema": DRAFT_07,
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _s(description: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **more}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    text = f"{description} " + f"How and when to use {name}: read the instructions carefully. " * 12
    return {"name": name, "description": text.strip(), "input_schema": _object(properties, required)}


_FINDING = {
    "type": "object",
    "properties": {
        "file": _s("Path of the file"),
        "line": {"type": "integer", "minimum": 1},
        "severity": {"type": "string", "enum": ["low", "medium", "high", "critical"]},
        "summary": _s("One sentence"),
    },
    "required": ["file", "summary"],
    "additionalProperties": False,
}


_NUMBER = {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"}
_FLAG = {"type": "boolean", "description": "Set to true to run this command in the background."}
# The 12 tools of the recorded request, in its order, each with its JSON Schema.
TOOLS: tuple[dict[str, Any], ...] = tuple(
    [
        _tool(
            "Agent",
            "Launch a new agent to handle complex, multi-step tasks autonomously.",
            {
                "description": _s("A short (3-5 word) description of the task"),
                "prompt": _s("The task for the agent to perform"),
                "subagent_type": _s("The type of specialized agent to use for this task"),
                "model": {"type": "string", "enum": ["sonnet", "opus", "haiku"]},
                "run_in_background": _FLAG,
            },
            ["description", "prompt"],
        ),
        _tool(
            "Bash",
            "Executes a given bash command and returns its output.",
            {
                "command": _s("The command to execute"),
                "timeout": _NUMBER,
                "description": _s("Clear, concise description of what this command does in active voice."),
                "run_in_background": _FLAG,
                "dangerouslyDisableSandbox": {"type": "boolean"},
            },
            ["command"],
        ),
        _tool(
            "Edit",
            "Performs exact string replacements in files.",
            {
                "file_path": _s("The absolute path to the file to modify"),
                "old_string": _s("The text to replace"),
                "new_string": _s("The text to replace it with (must be different from old_string)"),
                "replace_all": {"type": "boolean", "default": False},
            },
            ["file_path", "old_string", "new_string"],
        ),
        _tool("ListAgents", "Lists the agents running in the background.", {"status": _s("Filter")}, []),
        _tool(
            "Read",
            "Reads a file from the local filesystem.",
            {
                "file_path": _s("The absolute path to the file to read"),
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "exclusiveMinimum": 0},
                "pages": _s("Page range for PDF files (e.g., '1-5')"),
            },
            ["file_path"],
        ),
        _tool(
            "ReportFindings",
            "Report the findings of a review.",
            {"findings": {"type": "array", "items": _FINDING, "maxItems": 50}, "summary": _s("Overall")},
            ["findings"],
        ),
        _tool(
            "ScheduleWakeup",
            "Schedule a wake-up to continue later.",
            {
                "delay_seconds": {"type": "integer", "minimum": 60, "maximum": 86400},
                "reason": _s("Why"),
                "recurring": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            },
            ["delay_seconds", "reason"],
        ),
        _tool(
            "Skill",
            "Execute a skill within the main conversation.",
            {"skill": _s("The skill name"), "args": _s("Optional arguments for the skill")},
            ["skill"],
        ),
        _tool(
            "ToolSearch",
            "Fetches full schema definitions for deferred tools so they can be called.",
            {"query": _s("Query to find deferred tools"), "max_results": {"type": "number", "default": 5}},
            ["query", "max_results"],
        ),
        _tool(
            "Workflow",
            "Run a multi-step workflow.",
            {
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": _s("The step", minLength=1),
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": _s("Present continuous form", minLength=1),
                        },
                        "required": ["content", "status", "activeForm"],
                        "additionalProperties": False,
                    },
                }
            },
            ["steps"],
        ),
        _tool("DeferredToolPlaceholder", "A placeholder for deferred tools.", {}, []),
        _tool(
            "Write",
            "Writes a file to the local filesystem.",
            {
                "file_path": _s("The absolute path to the file to write"),
                "content": _s("The content to write"),
            },
            ["file_path", "content"],
        ),
    ]
)


def tool_output(turn: int) -> str:
    line = f"turn {turn:02d}: -rw-r--r--  1 user staff  4096 Dec  4 10:00 src/module_{turn:02d}.py\n"
    return (line * (TOOL_RESULT_CHARS // len(line) + 1))[:TOOL_RESULT_CHARS]


def tool_result(call_id: str, turn: int) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": tool_output(turn), "is_error": False}
    return {"role": "user", "content": [{**block, "cache_control": EPHEMERAL}]}


def recorded_answer(work: Workload, turn: int) -> list[dict[str, Any]]:
    """The content blocks of a turn's answer, as both fakes send it (the ids are the fixed shape's)."""
    call = {
        "type": "tool_use",
        "id": f"toolu_bench_{turn:02d}",
        "name": AGENT_TOOL,
        "input": dict(AGENT_CALL),
    }
    return [{"type": "text", "text": work.text}, call]


@dataclass
class Conversation:
    """One Claude Code conversation: its messages grow by each answer and the tool's result."""

    marker: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 1

    def __post_init__(self) -> None:
        if not self.messages:
            self.messages = [first_user(self.marker)]

    def body(self, model: str) -> dict[str, Any]:
        raw = _recorded()["requests"][0]["raw"]
        return {
            "model": model,
            "stream": True,
            "max_tokens": raw["max_tokens"],
            "thinking": raw["thinking"],
            "context_management": raw["context_management"],
            "system": list(system_blocks()),
            "messages": self.messages,
            "tools": list(TOOLS),
        }

    def answered(self, content: list[dict[str, Any]]) -> None:
        """The answer's content blocks appended, then the result of its tool call (the next turn)."""
        calls = [b for b in content if b.get("type") == "tool_use"]
        if not calls:
            raise ValueError(f"turn {self.turn}: the answer called no tool")
        for block in self.messages[-1]["content"]:  # Claude Code keeps one breakpoint: the newest message
            block.pop("cache_control", None)
        self.messages.append({"role": "assistant", "content": content})
        self.messages.append(tool_result(calls[0]["id"], self.turn))
        self.turn += 1


def at_turn(marker: str, work: Workload, turn: int = TURNS) -> Conversation:
    """The conversation at ``turn`` as if every earlier answer had been ``recorded_answer``."""
    conversation = Conversation(marker)
    for number in range(1, turn):
        conversation.answered(recorded_answer(work, number))
    return conversation
