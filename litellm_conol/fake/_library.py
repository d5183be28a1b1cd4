"""The built-in scenarios. Each is small and deterministic; delays are realistic (10-50 ms apart).

``BUILTINS`` maps name -> Scenario; each scenario's ``final_text`` / ``final_reasoning`` /
``tool_calls`` / ``outcome`` (and ``expected_for(...)`` for prompt-dependent ones) say what a correct
client returns, so tests never hard-code texts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ._scenarios import MARKER_RE, Scenario, ScenarioContext, ScenarioError
from ._steps import (
    CloseStream,
    CommitMessage,
    Done,
    DoneMarker,
    Error,
    Event,
    Log,
    Preview,
    RawLine,
    SetPings,
    SetStatus,
    Sleep,
    Step,
    Together,
    ToolCall,
    UserTurn,
    snapshots,
    tool_call_entry,
)

PARIS = ToolCall("get_weather", {"city": "Paris"})
TOKYO = ToolCall("get_weather", {"city": "Tokyo"})
WEATHER_THINKING = "The user wants the current weather in Paris. I'll call get_weather."


def _think(text: str, n: int = 3, stage: str = "main", kind: str = "thinking") -> list[Step]:
    return snapshots(text, n, 0.03, kind=kind, stage=stage)


def _say(text: str, n: int = 6, stage: str = "main") -> list[Step]:
    return snapshots(text, n, 0.02, stage=stage)


def _complete_after(seconds: float, status: str = "completed") -> list[Step]:
    return [Sleep(seconds), SetStatus(status)]


def _commit_then_complete(text: str, after_last: float = 0.5, stage: str = "main") -> list[Step]:
    """Commit the message 20 ms after the last snapshot; status terminal ``after_last`` s after it."""
    return [Sleep(0.02), CommitMessage(text, stage=stage), *_complete_after(after_last - 0.02)]


@lru_cache(maxsize=8)
def long_text(chars: int) -> str:
    """Deterministic filler of exactly ``chars`` characters (numbered lines, so diffs are readable)."""
    lines: list[str] = []
    total = 0
    while total < chars:
        line = f"Line {len(lines):06d}: the quick brown fox jumps over the lazy dog.\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:chars]


# ----------------------------------------------------------------------------------------------- core
HELLO_THINKING = "The user is greeting me. A short, friendly reply is best."
HELLO_TEXT = "Hello! I am the fake conol agent, running offline. How can I help you today?"


def _hello_steps(text: str = HELLO_TEXT) -> list[Step]:
    return [
        Sleep(0.05),
        *_think(HELLO_THINKING),
        Sleep(0.03),
        *_say(text),
        *_commit_then_complete(text),
    ]


def _early_terminal() -> list[Step]:
    text = "The status says completed early, but this closing sentence arrives 0.6 seconds later."
    answer = _say(text)
    # the final snapshot comes 0.6 s after the status turned terminal (spec §2.5, observed)
    return [*_think("Answer, then finish.", 2), *answer[:-2], SetStatus("completed"), Sleep(0.6), answer[-1]]


def _close_early() -> list[Step]:
    text = "This stream is closed by the server halfway through; a reconnect replays it and sees the rest."
    answer = _say(text)
    return [*answer[:5], Sleep(0.2), CloseStream(), Sleep(0.2), *answer[5:], *_commit_then_complete(text)]


def _silence() -> list[Step]:
    text = "Part one arrives, then three seconds of silence with only pings, then part two arrives."
    answer = _say(text)
    return [*answer[:5], Sleep(3.0), *answer[5:], *_commit_then_complete(text)]


def _parts() -> list[Step]:
    first, second = "Parts are lists of text blocks. ", "This answer arrives as two of them."
    return [
        *snapshots("Send the answer as content parts.", 2, 0.03, kind="thinking", as_parts=True),
        Sleep(0.03),
        Preview("Parts are", as_parts=True),
        Sleep(0.02),
        Preview(first, as_parts=True),
        Sleep(0.02),
        Preview((first, "This answer")),
        Sleep(0.02),
        Preview((first, second)),
        Sleep(0.02),
        CommitMessage(first + second, as_parts=True),
        *_complete_after(0.4),
    ]


def _multi_stage() -> list[Step]:
    one, two = "Step 1: I looked the fact up.\n\n", "Step 2: the capital of France is Paris."
    return [
        *_think("Plan: look the fact up, then answer.\n", 2, stage="s1", kind="plan"),
        *_say(one, 3, stage="s1"),
        CommitMessage(one, stage="s1"),
        Sleep(0.05),
        Event({"type": "session_title", "title": "Capital of France"}),  # unknown type: ignore it
        *_think("Now write the answer.", 2, stage="s2"),
        *_say(two, 4, stage="s2"),
        *_commit_then_complete(two, 0.4, stage="s2"),
    ]


def _echo(ctx: ScenarioContext) -> list[Step]:
    text = ctx.messages[-1] if ctx.messages else ""
    return [Sleep(0.03), *_say(text, 4), *_commit_then_complete(text, 0.3)]


def _long(ctx: ScenarioContext) -> list[Step]:
    text = long_text(ctx.param_int("chars", 2000, minimum=1))
    n = ctx.param_int("snapshots", 20, minimum=1)
    delay = ctx.param_float("delay", 0.01)
    end = ctx.param_choice("end", "done", ("done", "status"))
    steps = [*snapshots(text, n, delay), SetStatus("completed")]
    return [*steps, Done()] if end == "done" else steps


UNICODE_TEXT = (
    "Unicode check: 👨\u200d👩\u200d👧\u200d👦 family, 🇺🇦 flag, cafe\u0301 (combining accent), "
    "你好，世界！ مرحبا بالعالم — שלום עולם, and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢."
)
UNICODE_THINKING = "Проверка: 考虑一下 🤔 — ok."


def _unicode() -> list[Step]:
    t = UNICODE_TEXT
    # cut inside grapheme clusters and scripts: before a ZWJ, between regional indicators, before a
    # combining mark, mid-CJK, mid-RTL, between astral-plane letters
    cuts = [
        t.index("\u200d"),
        t.index("🇺") + 1,
        t.index("\u0301"),
        t.index("世"),
        t.index("بالعالم") + 3,
        t.index("עולם") + 2,
        t.index("𝔫"),
    ]
    return [
        *snapshots(UNICODE_THINKING, 2, 0.03, kind="thinking", cuts=[UNICODE_THINKING.index("一")]),
        *snapshots(t, 0, 0.02, cuts=cuts),
        *_commit_then_complete(t, 0.3),
    ]


# ------------------------------------------------------------------------------ stop and max_tokens
STOP_SEQUENCE = "[END]"
STOP_SPLIT_ANSWER = "The password is swordfish."
STOP_SPLIT_TEXT = (
    STOP_SPLIT_ANSWER
    + STOP_SEQUENCE
    + " Everything after the stop marker is text nobody should see, and the agent keeps writing it"
    + " for another second, ten snapshots in all, before it commits the message and completes."
)


def _stop_split() -> list[Step]:
    marker = STOP_SPLIT_TEXT.index(STOP_SEQUENCE)
    # the stop sequence straddles the 2nd and 3rd snapshots ("…swordfish.[E" | "ND] Every…");
    # then ten more snapshots 0.1 s apart: a client that waits for the end waits a second for nothing
    rest = len(STOP_SPLIT_TEXT) - marker - 20
    cuts = [STOP_SPLIT_TEXT.index("sword"), marker + 2, *(marker + 20 + rest * i // 10 for i in range(10))]
    answer = snapshots(STOP_SPLIT_TEXT, 0, 0.1, cuts=cuts)
    return [Sleep(0.03), *answer, *_commit_then_complete(STOP_SPLIT_TEXT)]


def _long_writer(ctx: ScenarioContext) -> list[Step]:
    text = long_text(ctx.param_int("chars", 20000, minimum=1))
    n = ctx.param_int("snapshots", 40, minimum=1)
    answer = snapshots(text, n, ctx.param_float("delay", 0.03))
    return [Sleep(0.03), *answer, *_commit_then_complete(text, 0.3)]


# ---------------------------------------------------------------------------------------------- tools
def _builtin_websearch() -> list[Step]:
    query = {"query": "current weather in Paris"}
    found = "Paris, France: 18°C, light rain, wind 12 km/h."
    answer = "According to a web search, it is 18°C with light rain in Paris right now."
    first, *rest = _say(answer, 5, stage="s2")
    assert isinstance(first, Preview)
    return [
        *_think("I should search the web for the current weather in Paris.", 2, stage="s1"),
        ToolCall("WebSearch", query, stage="s1"),
        Sleep(0.3),
        # the duplicate adds the result, in the same event as the answer's first snapshot
        Together((ToolCall("WebSearch", query, result=found, stage="s2"), first)),
        *rest,
        *_commit_then_complete(answer, 0.4, stage="s2"),
    ]


def tool_result_in(messages: Sequence[str]) -> str | None:
    """The text after ``]: `` of the last ``[Tool result #...]`` up to the end of its line, if any."""
    text = "\n".join(messages)
    start = text.rfind("[Tool result #")
    if start < 0:
        return None
    sep = text.find("]: ", start)
    if sep < 0:
        return ""
    end = text.find("\n", sep)
    return text[sep + 3 : end if end >= 0 else len(text)]


def _tool_loop(ctx: ScenarioContext) -> list[Step]:
    result = tool_result_in(ctx.messages)
    if result is None:
        return [*_think(WEATHER_THINKING), Sleep(0.05), PARIS]
    answer = f"The weather in Paris is {result}."
    return [
        *_think("I have the tool result; answer with it.", 2),
        *_say(answer, 4),
        *_commit_then_complete(answer, 0.3),
    ]


# --------------------------------------------------------------------------------------------- faults
def _http(status: int, body: dict[str, str] | str, **headers: str) -> Scenario:
    return Scenario(
        f"http_{status}",
        [],
        description=f"create answers HTTP {status}; no session is created",
        create_status=status,
        create_body=body,
        create_headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


BAD_GATEWAY_HTML = (
    "<html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)


def _stall_before_first(ctx: ScenarioContext) -> list[Step]:
    seconds = ctx.param_float("seconds", 30.0)
    pings = ctx.param_bool("pings", False)
    return [SetPings(pings), Sleep(seconds), SetPings(True), UserTurn(), *_hello_steps()]


def _stall_mid(ctx: ScenarioContext) -> list[Step]:
    text = "This answer starts, then the agent goes quiet for thirty seconds before it finishes."
    answer = _say(text)
    return [*answer[:5], Sleep(ctx.param_float("seconds", 30.0)), *answer[5:], *_commit_then_complete(text)]


def _malformed_line() -> list[Step]:
    text = "A malformed line arrives mid-stream; a tolerant client skips it and keeps reading."
    answer = _say(text)
    return [
        *answer[:5],
        RawLine("data: {not json"),
        Event({"type": "session_title", "title": "Malformed line"}),
        Sleep(0.02),
        *answer[5:],
        *_commit_then_complete(text, 0.3),
    ]


def _huge_event(ctx: ScenarioContext) -> list[Step]:
    head = "Here comes a huge answer:\n"
    text = head + long_text(int(ctx.param_float("mb", 5.0, minimum=0.001) * 1024 * 1024))
    return [Preview(head), Sleep(0.02), Preview(text), Sleep(0.05), SetStatus("completed"), Done()]


def _out_of_order() -> list[Step]:
    # a stale snapshot, then a duplicate, then the newest: a client diffing against the previous
    # snapshot instead of what it already emitted would repeat " blue"
    texts = [
        "The",
        "The sky is",
        "The sky is blue",
        "The sky is",
        "The sky is blue",
        "The sky is blue today.",
    ]
    steps: list[Step] = []
    for text in texts:
        steps += [Preview(text), Sleep(0.03)]
    return [*steps, *_complete_after(0.4)]


# ------------------------------------------------------------------------------------------- registry
def _core() -> list[Scenario]:
    rewrite_texts = ["The answer", "The answer is 4", "The answer is four", "The answer is four."]
    rewrite: list[Step] = []
    for text in rewrite_texts:
        rewrite += [Preview(text), Sleep(0.03)]
    tail = "The previews stop early, but the committed message carries the whole answer, tail included."
    return [
        Scenario(
            "hello",
            _hello_steps(),
            description="thinking x3, answer x6, committed log, status completed 0.5 s after the last "
            "snapshot; no done; stream stays open. logs cumulative, previews all",
            log_mode="cumulative",
        ),
        Scenario(
            "done",
            [
                Sleep(0.03),
                SetStatus("running"),
                *_think("Answer and say done.", 2),
                *_say("Finished, and the stream says so with a done event.", 5),
                Sleep(0.05),
                SetStatus("complete"),
                Done(),
            ],
            description="status pending -> running; answer x5; status 'complete' and a done event "
            "50 ms after the last snapshot; stream stays open. previews changed-only",
            initial_status="pending",
            preview_mode="changed",
        ),
        Scenario(
            "done_marker",
            [
                *_say("Finished, and the stream ends with a [DONE] marker.", 4),
                Sleep(0.05),
                SetStatus("done"),
                DoneMarker(),
            ],
            description="answer x4; status 'done' and data: [DONE] 50 ms later; stream stays open",
            log_mode="cumulative",
        ),
        Scenario(
            "early_terminal",
            _early_terminal(),
            description="status completed 0.6 s BEFORE the final snapshot; no commit, no done; stream open",
            preview_mode="changed",
        ),
        Scenario(
            "late_terminal",
            [
                *_say("The status turns terminal three seconds after this last snapshot.", 5),
                *_complete_after(3.0),
            ],
            description="answer x5; status completed 3 s after the last snapshot; no commit, no done",
        ),
        Scenario(
            "rewrite",
            [*rewrite, *_complete_after(0.5)],
            description="'The answer is 4' -> 'The answer is four' -> 'The answer is four.' (a rewrite); "
            "status completed 0.5 s later; no commit",
        ),
        Scenario(
            "committed_tail",
            [*_say(tail[: tail.index(", tail")], 4), Sleep(0.05), CommitMessage(tail), *_complete_after(0.3)],
            description="previews stop short; the committed log holds the full text; status completed "
            "0.3 s after the commit. logs cumulative",
            log_mode="cumulative",
        ),
        Scenario(
            "close_after_terminal",
            [
                *_say("The server closes this stream right after the status turns terminal.", 5),
                Sleep(0.3),
                SetStatus("completed"),
                CloseStream(permanent=True),
            ],
            description="answer x5; status completed 0.3 s later and the stream closed at once; later "
            "connections get the replay and are closed",
        ),
        Scenario(
            "close_early",
            _close_early(),
            description="snapshots 1-3/6, 0.2 s later the server closes the stream (status running), "
            "0.2 s later 4-6/6; committed; completed 0.5 s after the last snapshot. Reconnects replay",
        ),
        Scenario(
            "silence",
            _silence(),
            description="snapshots 1-3/6, 3 s of pings only, 4-6/6, committed, completed 0.5 s later",
            preview_mode="changed",
        ),
        Scenario(
            "error",
            [
                *_think("Try to answer.", 2),
                *_say("I will try to answer, but", 3),
                Sleep(0.05),
                Error("agent failed: upstream model crashed"),
                SetStatus("failed"),
            ],
            description="partial text, then an error event and status failed; stream stays open",
        ),
        Scenario(
            "parts",
            _parts(),
            description="previews and commit as [{type:text,text}] lists, last ones with two parts; "
            "empty keys omitted",
            omit_empty=True,
        ),
        Scenario(
            "multi_stage",
            _multi_stage(),
            description="two stages (plan+message, thinking+message), each committed; answer is the "
            "concatenation; every event carries all stages; an unknown event type between",
            log_mode="cumulative",
            stage_mode="all",
        ),
        Scenario(
            "echo",
            _echo,
            description="answers with the exact text of the last message part received (x4, committed, "
            "completed 0.3 s later)",
        ),
        Scenario(
            "long",
            _long,
            description="params chars=2000 snapshots=20 delay=0.01 end=done|status: long_text(chars) as "
            "N snapshots, then status completed (+ done event unless end=status)",
            preview_mode="changed",
        ),
        Scenario(
            "downgrade",
            _hello_steps("I am running on the fallback model, as the create response said."),
            description="hello, but the create says modelDowngraded: true",
            downgrade=True,
        ),
        Scenario(
            "unicode",
            _unicode(),
            description="emoji/ZWJ/flags/combining/CJK/RTL/astral text cut inside clusters; committed",
            log_mode="cumulative",
        ),
        Scenario(
            "alt_id",
            _hello_steps(),
            description="hello, but the create response carries the id under 'id'",
            id_key="id",
        ),
        Scenario(
            "nested_id",
            _hello_steps(),
            description="hello, but the create response carries the id under 'session.id'",
            id_key="session.id",
        ),
    ]


def _limits() -> list[Scenario]:
    return [
        Scenario(
            "stop_split",
            _stop_split(),
            description=f"{STOP_SPLIT_TEXT!r} as 13 snapshots 0.1 s apart, the stop sequence "
            f"{STOP_SEQUENCE!r} split across the 2nd and 3rd; committed; completed 0.5 s after the last. "
            f"With stop={STOP_SEQUENCE!r} a correct client answers {STOP_SPLIT_ANSWER!r} "
            "(finish_reason 'stop') and closes the stream after the 3rd snapshot",
        ),
        Scenario(
            "long_writer",
            _long_writer,
            description="params chars=20000 snapshots=40 delay=0.03: long_text(chars) as N snapshots "
            "(1.2 s of writing by default), committed, completed 0.3 s later. With max_tokens=M a "
            "correct client answers the longest prefix of long_text(chars) that is at most M tokens "
            "by LiteLLM's token counter for the model (finish_reason 'length') and closes the stream "
            "as soon as a snapshot passes M tokens",
            preview_mode="changed",
        ),
    ]


AGENT_THINKING = "The user asked me to call a tool; I'll call it."
AGENT_TEXT = "Hello! This is the fake conol agent."


def _agent(ctx: ScenarioContext) -> list[Step]:
    """Does what a health check asks, quickly: with tools, call the first one; else a short answer."""
    if ctx.tools:
        return [*_think(AGENT_THINKING, 2), Sleep(0.05), ToolCall(ctx.tools[0], {})]
    return [*_think("Greet briefly.", 2), *_say(AGENT_TEXT, 3), *_commit_then_complete(AGENT_TEXT, 0.2)]


def _tools() -> list[Scenario]:
    wait = "; then the agent waits: status stays running, no done, stream open"
    return [
        Scenario(
            "tool_call",
            [*_think(WEATHER_THINKING), Sleep(0.05), PARIS],
            description="thinking x3, then get_weather {city: Paris}" + wait,
        ),
        Scenario(
            "tool_call_twice",
            [
                *_think(WEATHER_THINKING, 2, stage="s1"),
                PARIS,
                Sleep(0.1),
                ToolCall("get_weather", {"city": "Paris"}, stage="s2"),
            ],
            description="the same get_weather Paris call logged in two stages" + wait,
            log_mode="cumulative",
        ),
        Scenario(
            "text_and_tool",
            [*_say("Let me check the weather.", 3), Sleep(0.05), PARIS],
            description="message 'Let me check the weather.' then the get_weather Paris call" + wait,
        ),
        Scenario(
            "builtin_websearch",
            _builtin_websearch(),
            description="WebSearch call, a duplicate in a later stage adding the result (together with "
            "the answer's first snapshot), the answer; committed; completed 0.4 s later. No client calls",
            log_mode="cumulative",
        ),
        Scenario(
            "multi_tool",
            [
                *_think("Two cities: call get_weather twice.", 2),
                Sleep(0.05),
                Log(tool_call_entry(PARIS, TOKYO)),
            ],
            description="ONE tool_call log with two calls: get_weather Paris, get_weather Tokyo" + wait,
            omit_empty=True,
        ),
        Scenario(
            "tool_after_silence",
            [*_think(WEATHER_THINKING, 2), Sleep(2.5), PARIS],
            description="thinking, 2.5 s of pings only, then the get_weather Paris call" + wait,
        ),
        Scenario(
            "agent",
            _agent,
            description="prompt-driven: with tools, thinking x2 then a call of the first tool with {}"
            + wait
            + "; without tools, thinking x2, 'Hello! This is the fake conol agent.' x3, committed, "
            "completed 0.2 s later",
        ),
        Scenario(
            "tool_loop",
            _tool_loop,
            description="with a '[Tool result #..]: X' in the messages: answers 'The weather in Paris is "
            "X.' (committed, completed 0.3 s later); else the get_weather Paris call" + wait,
        ),
    ]


def _faults() -> list[Scenario]:
    return [
        _http(401, {"error": "Unauthorized"}),
        _http(403, {"error": "Forbidden"}),
        _http(429, {"error": "Too many requests, slow down"}, Retry_After="2"),
        _http(500, {"error": "Internal Server Error"}),
        _http(502, BAD_GATEWAY_HTML),
        _http(503, {"error": "Service temporarily unavailable"}),
        Scenario(
            "bad_create_body",
            [],
            description="201 whose body has no session id under any key",
            id_key=None,
        ),
        Scenario(
            "stall_before_first",
            _stall_before_first,
            description="params seconds=30 pings=0: no events (and no pings unless pings=1) for "
            "`seconds`, then the hello answer",
        ),
        Scenario(
            "stall_mid",
            _stall_mid,
            description="param seconds=30: snapshots 1-3/6, then silence (pings) with status running, "
            "then the rest, committed, completed",
        ),
        Scenario(
            "malformed_line",
            _malformed_line(),
            description="'data: {not json' and an unknown event type mid-stream, then the rest; committed",
        ),
        Scenario(
            "huge_event",
            _huge_event,
            description="param mb=5: a small snapshot then ONE snapshot of >= mb MiB; completed + done",
        ),
        Scenario(
            "status_flaky",
            _hello_steps(),
            description="hello, but status polls 1, 3, 5, ... answer HTTP 500",
            status_flaky=True,
        ),
        Scenario(
            "never_terminal",
            [*_say("This answer is complete, but the session never says so.", 5)],
            description="answer x5; status stays running forever; no commit, no done",
        ),
        Scenario(
            "out_of_order",
            _out_of_order(),
            description="'The sky is blue' then a stale 'The sky is', a duplicate, then 'The sky is blue "
            "today.'; completed 0.4 s later. previews changed-only",
            preview_mode="changed",
        ),
    ]


# ------------------------------------------------------------------------------- structured output
# What a model sees on a repair turn is its own earlier answer ("[Assistant]" after the request)
# followed by a complaint; these scenarios answer by how many times they have answered since the
# request that carries the marker, whatever the complaint says. `valid_after=K`: the first K
# answers are the bad one, later ones the good one.
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


def _json_param(ctx: ScenarioContext, name: str, default: Mapping[str, Any]) -> Any:
    """A JSON value from ``name=`` (percent-encoded where it needs spaces or brackets)."""
    raw = ctx.params.get(name)
    if raw is None:
        return dict(default)
    try:
        return json.loads(unquote(raw))
    except json.JSONDecodeError:
        raise ScenarioError(f"parameter {name}={raw!r} is not JSON") from None


def _answer(text: str) -> list[Step]:
    thinking = _think("Answer with the JSON.", 2)
    return [*thinking, Sleep(0.03), *_say(text, 4), *_commit_then_complete(text, 0.3)]


def _fenced(text: str) -> str:
    closing = "Let me know if you need anything else."
    return f"Here is the JSON you asked for:\n\n```json\n{text}\n```\n\n{closing}"


def _json_turns(bad: str, default_valid_after: int, fenced: bool = False) -> Any:
    def steps(ctx: ScenarioContext) -> list[Step]:
        good = json.dumps(_json_param(ctx, "json", PERSON))
        valid_after = ctx.param_int("valid_after", default_valid_after)
        text = good if answers_since_request(ctx.messages) >= valid_after else bad
        return _answer(_fenced(text) if fenced else text)

    return steps


def _tool_turns(default_valid_after: int) -> Any:
    def steps(ctx: ScenarioContext) -> list[Step]:
        name = ctx.params.get("name", "get_weather")
        good = _json_param(ctx, "json", {"city": "Paris"})
        bad = _json_param(ctx, "bad", CITY_WRONG_KEY)
        valid_after = ctx.param_int("valid_after", default_valid_after)
        arguments = good if answers_since_request(ctx.messages) >= valid_after else bad
        return [*_think(f"Call {name}.", 2), Sleep(0.05), ToolCall(name, arguments)]

    return steps


def _structured() -> list[Scenario]:
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


BUILTINS: dict[str, Scenario] = {
    s.name: s for s in [*_core(), *_limits(), *_tools(), *_faults(), *_structured()]
}
