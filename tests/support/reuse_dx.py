"""The fake's side of the reuse differential test (tests/integration/test_reuse_differential.py): the
readings it runs under, and the scenario every session of it plays.

The ``dx`` scenario answers from what its session holds, the way a model would: the answer names the
last user message, the turn number, the tool results since that message and a digest of every user
message, tool result and image of the session's transcript. A session that holds another history
than the client's (another caller's, an edited one, the previous turn's answer taken for this one)
therefore answers differently, and the differential test sees it. What the digest leaves out is what
the client may legitimately send differently on a follow-up: conol's own answers (the session holds
them, a new session gets them as ``[Assistant]`` parts), system parts, a tool result's label (only its
text after ``]: `` counts), line endings and trailing spaces.

Every turn thinks first (a ``plan`` preview in a ``notes`` stage: reasoning the client gets). Asked
``weather: <city>, <city>`` with no tool result after it, the turn ends on one ``get_weather`` call
per city in one log entry (parallel calls to one tool), and the agent waits; with the results, it
answers with them. Asked ``search: <words>``, it runs conol's own ``WebSearch`` (its result names the
digest), waits 0.5 s, then answers: a client that has built-in tools exposed stops at the call, and
the answer it never read is the previous turn's tail on the next follow-up.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from litellm_conol.fake import (
    CommitMessage,
    Done,
    Log,
    Preview,
    Scenario,
    ScenarioContext,
    SetStatus,
    Sleep,
    Step,
    ToolCall,
    UserTurn,
    snapshots,
    tool_call_entry,
)

# The readings that meet where a follow-up's turn begins (covered 3 values at a time: every
# combination of any three of them in some row), three-or-more-valued factors first.
BOUNDARY: dict[str, tuple[Any, ...]] = {
    "late_events": ("none", "note", "tool_call", "answer"),
    "followup_replayed_end": ("none", "done", "error"),
    "followup_stage": ("new", "same"),
    "followup_replay": (True, False),
    "log_mode": ("cumulative", "once"),
    "followup_status_lag": (0.0, 0.3),
    "first_token_delay": (0.0, 1.0),
    "followup_previews": ("cleared", "kept"),
    "user_log_time": ("stamped", "none"),
}
# The other readings and options (covered in pairs, with each other and with the above).
OTHERS: dict[str, tuple[Any, ...]] = {
    "stageless_turns": ("none", "follow-ups", "all"),
    "framing": ("sse", "ndjson", "message"),
    "model_pinning": ("create", "pin", "auto"),
    "stage_mode": ("changed", "all"),
    "preview_mode": ("all", "changed"),
    "end": ("status", "done"),
    "create_model": ("honour", "ignore"),
    "context_usage": (False, True),
    "builtin_tools": ("hide", "expose"),
}
FACTORS = {**BOUNDARY, **OTHERS}
# FakeConfig switches (the rest: the dx scenario's variant, or the client's options)
CONFIG_KEYS = (
    "late_events",
    "followup_replayed_end",
    "followup_stage",
    "followup_replay",
    "followup_status_lag",
    "first_token_delay",
    "followup_previews",
    "user_log_time",
    "stageless_turns",
    "framing",
    "create_model",
    "context_usage",
)
CLIENT_KEYS = ("model_pinning", "builtin_tools")
LATE_AFTER = 0.2  # seconds after a turn's readers left that its late events come

WEATHER_ASK = re.compile(r"weather: (.+)")
SEARCH_ASK = re.compile(r"search: (.+)")
TOOL_RESULT = "[Tool result"
OWN_PARTS = ("[Assistant]", "[System]")
SNAPSHOT_DELAY = 0.005
THINKING = 0.1  # seconds of silence after the user turn, above the client's poll_after_idle (0.05 here)
SEARCHING = 0.5  # seconds between a WebSearch's result and the answer


@dataclass(frozen=True)
class Reading:
    """One row of the covering array."""

    values: Mapping[str, Any]

    @property
    def config(self) -> dict[str, Any]:
        return {key: self.values[key] for key in CONFIG_KEYS} | {"late_after": LATE_AFTER}

    @property
    def client(self) -> dict[str, Any]:
        return {key: self.values[key] for key in CLIENT_KEYS}

    @property
    def scenario(self) -> Scenario:
        v = self.values
        name = f"dx_{v['log_mode']}_{v['stage_mode']}_{v['preview_mode']}_{v['end']}"
        return Scenario(
            name,
            lambda ctx: dx_steps(ctx, with_done=v["end"] == "done"),
            description="the reuse differential test's scenario (tests/support/reuse_dx.py)",
            log_mode=v["log_mode"],
            stage_mode=v["stage_mode"],
            preview_mode=v["preview_mode"],
        )

    @property
    def label(self) -> str:
        return " ".join(f"{key}={value}" for key, value in self.values.items())


@dataclass(frozen=True)
class Transcript:
    users: tuple[str, ...]
    results: tuple[str, ...]  # every tool result's text, in order
    results_since_user: tuple[str, ...]


def read_transcript(messages: Sequence[str]) -> Transcript:
    users: list[str] = []
    results: list[str] = []
    since: list[str] = []
    for text in messages:
        if text.startswith(TOOL_RESULT):
            body = text.split("]: ", 1)[1] if "]: " in text else ""
            results.append(body)
            since.append(body)
        elif not text.startswith(OWN_PARTS):
            users.append(text)
            since = []
    return Transcript(tuple(users), tuple(results), tuple(since))


def normalised(text: str) -> str:
    """What a client may rewrite of a message without changing it: line endings, trailing spaces."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n"))


def digest(transcript: Transcript, images: Sequence[str]) -> str:
    held = [[normalised(u) for u in transcript.users], list(transcript.results), list(images)]
    return hashlib.sha256(json.dumps(held).encode()).hexdigest()[:10]


def dx_answer(transcript: Transcript, images: Sequence[str]) -> str:
    last = transcript.users[-1] if transcript.users else ""
    weather = ""
    ask = WEATHER_ASK.fullmatch(last)
    if ask is not None:
        pairs = zip(ask.group(1).split(", "), transcript.results_since_user, strict=False)
        weather = " Weather: " + "; ".join(f"{city} {result}" for city, result in pairs) + "."
    turn = len(transcript.users)
    return f"Turn {turn}: you said {json.dumps(last)}.{weather} Context {digest(transcript, images)}."


def dx_steps(ctx: ScenarioContext, *, with_done: bool) -> list[Step]:
    transcript = read_transcript(ctx.messages)
    last = transcript.users[-1] if transcript.users else ""
    waiting = not transcript.results_since_user
    # the agent thinks a moment before its first word: a client polls the status meanwhile, and under
    # followup_status_lag it reads the previous turn's
    start: list[Step] = [UserTurn("main"), Sleep(THINKING), Preview("Planning.", kind="plan", stage="notes")]
    ask = WEATHER_ASK.fullmatch(last)
    if ask is not None and waiting:
        calls = [ToolCall("get_weather", {"city": city}) for city in ask.group(1).split(", ")]
        return [*start, Sleep(SNAPSHOT_DELAY), Log(tool_call_entry(*calls))]  # the agent waits
    search = SEARCH_ASK.fullmatch(last)
    if search is not None and waiting:
        found = f"Found nothing on {search.group(1)} ({digest(transcript, ctx.images)})."
        start += [ToolCall("WebSearch", {"query": search.group(1)}, result=found), Sleep(SEARCHING)]
    answer = dx_answer(transcript, ctx.images)
    end: list[Step] = [CommitMessage(answer), SetStatus("completed")]
    return [*start, *snapshots(answer, 3, SNAPSHOT_DELAY), *end, *([Done()] if with_done else [])]


def tool_calls_of(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
        for call in message.get("tool_calls") or ()
    ]
