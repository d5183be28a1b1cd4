"""Structured-output scenarios: JSON answers and tool arguments that are bad until a repair turn.

What a model sees on a repair turn is its own earlier answer ("[Assistant]" after the request)
followed by a complaint; these scenarios answer by how many times they have answered since the
request that carries the marker, whatever the complaint says. ``valid_after=K``: the first K
answers are the bad one, later ones the good one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._scenarios import MARKER_RE, Scenario, ScenarioContext
from .._steps import Sleep, Step, ToolCall
from ._common import commit_then_complete, json_param, say, think

PERSON = {"name": "Ada Lovelace", "age": 36}
PERSON_JSON = json.dumps(PERSON)
PERSON_WRONG_TYPE = {"name": "Ada Lovelace", "age": "thirty-six"}  # a schema violation, valid JSON
PERSON_CUT = PERSON_JSON[:-1]  # the closing brace missing: not JSON at all
NOT_JSON = "I am sorry, but I cannot give you that as JSON."
CITY_WRONG_KEY = {"town": "Paris"}  # get_weather requires "city"


def answers_since_request(messages: Sequence[str]) -> int:
    """How often the model has answered since the (last) message carrying the marker."""
    marked = [i for i, text in enumerate(messages) if MARKER_RE.search(text)]
    start = marked[-1] + 1 if marked else 0
    return sum(1 for text in messages[start:] if text.startswith("[Assistant]"))


def _answer(text: str) -> list[Step]:
    thinking = think("Answer with the JSON.", 2)
    return [*thinking, Sleep(0.03), *say(text, 4), *commit_then_complete(text, 0.3)]


def _fenced(text: str) -> str:
    closing = "Let me know if you need anything else."
    return f"Here is the JSON you asked for:\n\n```json\n{text}\n```\n\n{closing}"


def _json_turns(bad: str, default_valid_after: int, fenced: bool = False) -> Any:
    def steps(ctx: ScenarioContext) -> list[Step]:
        good = json.dumps(json_param(ctx, "json", PERSON))
        valid_after = ctx.param_int("valid_after", default_valid_after)
        text = good if answers_since_request(ctx.messages) >= valid_after else bad
        return _answer(_fenced(text) if fenced else text)

    return steps


def _tool_turns(default_valid_after: int) -> Any:
    def steps(ctx: ScenarioContext) -> list[Step]:
        name = ctx.params.get("name", "get_weather")
        good = json_param(ctx, "json", {"city": "Paris"})
        bad = json_param(ctx, "bad", CITY_WRONG_KEY)
        valid_after = ctx.param_int("valid_after", default_valid_after)
        arguments = good if answers_since_request(ctx.messages) >= valid_after else bad
        return [*think(f"Call {name}.", 2), Sleep(0.05), ToolCall(name, arguments)]

    return steps


def structured_scenarios() -> list[Scenario]:
    params = " Params: json=<the good JSON> (default PERSON), valid_after=K."
    wait = "; then the agent waits for the result (status running, stream open)"
    return [
        Scenario(
            "json_valid",
            _json_turns(NOT_JSON, 0),
            description=f"answers {PERSON_JSON} (committed, completed 0.3 s later)." + params,
        ),
        Scenario(
            "json_fenced",
            _json_turns(NOT_JSON, 0, fenced=True),
            description="answers 'Here is the JSON you asked for:' + a ```json fence holding "
            f"{PERSON_JSON} + a closing sentence; validated, the answer is that JSON." + params,
        ),
        Scenario(
            "json_repair",
            _json_turns(PERSON_CUT, 1),
            description=f"first answer {PERSON_CUT} (not JSON: the closing brace is missing); once it "
            f"has answered after the request (a repair turn), {PERSON_JSON}." + params,
        ),
        Scenario(
            "json_schema_repair",
            _json_turns(json.dumps(PERSON_WRONG_TYPE), 1),
            description=f"first answer {json.dumps(PERSON_WRONG_TYPE)} (valid JSON, but age is not an "
            f"integer); on a repair turn {PERSON_JSON}." + params,
        ),
        Scenario(
            "json_never_valid",
            _json_turns(NOT_JSON, 1_000_000),
            description=f"always answers {NOT_JSON!r}, repair turns or not: a validating client fails",
        ),
        Scenario(
            "tool_args_invalid",
            _tool_turns(1),
            description="first calls get_weather {'town': 'Paris'} (no 'city': violates the schema); on a "
            "repair turn get_weather {'city': 'Paris'}. Params: name=, json=, bad=, valid_after=K" + wait,
        ),
        Scenario(
            "tool_call_json",
            _tool_turns(0),
            description="calls tool `name` (default get_weather) with `json` (default {'city': 'Paris'})"
            + wait,
        ),
    ]
