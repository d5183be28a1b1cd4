"""Unit tests of the pure protocol core: plain lists of events in, pieces and final state out."""

from __future__ import annotations

import hashlib
import json

import pytest
from support.events import delta, msg, parsed, snapshots, stage, tool_log, user_log

from litellm_conol import AgentFailed, BadRequest, ModelNotFound
from litellm_conol.core.answer.assembler import (
    Assembler,
    BuiltinToolUse,
    ClientToolCall,
    ReasoningDelta,
    TextDelta,
)
from litellm_conol.core.models.catalog import default_catalog
from litellm_conol.core.models.effort import map_effort
from litellm_conol.core.protocol.wire import CreateSessionBody, parse_event
from litellm_conol.core.request.images import ImageLimits
from litellm_conol.core.request.render import content_text, convert_tools, render_messages


def stream(assembler: Assembler, *events) -> list:
    return assembler.feed_all(parsed(*events))


def texts(pieces) -> str:
    return "".join(p.text for p in pieces if isinstance(p, TextDelta))


# --- snapshot diffing ---------------------------------------------------------------------------


def test_cumulative_snapshots_stream_only_the_new_suffix():
    a = Assembler()
    pieces = stream(
        a,
        *(
            delta(stage(preview=[msg(t)]))
            for t in ["Hello", "Hello world", "Hello world, how ", "Hello world, how are you?"]
        ),
    )
    assert [p.text for p in pieces] == ["Hello", " world", ", how ", "are you?"]
    assert a.final_text == "Hello world, how are you?"


def test_repeated_snapshot_emits_nothing():
    a = Assembler()
    assert texts(stream(a, delta(stage(preview=[msg("Hi")])))) == "Hi"
    assert stream(a, delta(stage(preview=[msg("Hi")]))) == []


def test_rewrite_emits_nothing_until_it_extends_again_and_final_is_last_snapshot():
    a = Assembler()
    out = stream(
        a,
        delta(stage(preview=[msg("The answer is 4")])),
        delta(stage(preview=[msg("The answer is four")])),
        delta(stage(preview=[msg("The answer is four.")])),
    )
    assert texts(out) == "The answer is 4"
    assert a.final_text == "The answer is four."
    assert a.answer.rewritten


def test_rewrite_that_extends_the_streamed_text_again_resumes():
    a = Assembler()
    out = stream(
        a,
        delta(stage(preview=[msg("Hello wor")])),
        delta(stage(preview=[msg("Hello")])),  # a glitch: shorter
        delta(stage(preview=[msg("Hello world")])),
    )
    assert texts(out) == "Hello world"
    assert a.final_text == "Hello world"


def test_content_as_list_of_parts():
    a = Assembler()
    out = stream(
        a, delta(stage(preview=[msg([{"type": "text", "text": "Bon"}, {"type": "text", "text": "jour"}])]))
    )
    assert texts(out) == "Bonjour"


def test_unicode_split_anywhere():
    text = "Привет 👋🏽 世界 — שלום"
    a = Assembler()
    out = stream(a, *snapshots(text, len(text)))
    assert texts(out) == text


# --- reasoning ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["thinking", "reasoning", "thought", "plan"])
def test_reasoning_is_split_from_content(kind):
    a = Assembler()
    out = stream(
        a,
        delta(stage(preview=[msg("Let me", kind)])),
        delta(stage(preview=[msg("Let me think.", kind), msg("Answer")])),
        delta(stage(preview=[msg("Let me think.", kind), msg("Answer: 42")])),
    )
    assert [type(p).__name__ for p in out] == ["ReasoningDelta", "ReasoningDelta", "TextDelta", "TextDelta"]
    assert "".join(p.text for p in out if isinstance(p, ReasoningDelta)) == "Let me think."
    assert a.final_text == "Answer: 42"
    assert a.final_reasoning == "Let me think."


# --- logs ---------------------------------------------------------------------------------------


def test_user_logs_with_system_reminder_are_never_echoed():
    a = Assembler()
    out = stream(a, delta(stage(logs=[user_log("What is 2+2?")], preview=[msg("4")])))
    assert texts(out) == "4"
    assert "system-reminder" not in a.final_text and "2+2" not in a.final_text


def test_committed_message_completes_a_tail_the_previews_missed():
    a = Assembler()
    out = stream(
        a,
        delta(stage(preview=[msg("The capital of France")])),
        delta(stage(logs=[msg("The capital of France is Paris.")])),
    )
    assert texts(out) == "The capital of France is Paris."
    assert a.committed
    assert a.final_text == "The capital of France is Paris."


def test_committed_message_repeated_or_replayed_is_not_duplicated():
    a = Assembler()
    done = delta(stage(preview=[msg("Done.")], logs=[msg("Done.")]))
    stream(a, done, done, delta(stage("stg_2", logs=[msg("Done.")])))
    assert a.final_text == "Done."


def test_committed_rewrite_replaces_the_preview():
    a = Assembler()
    stream(a, delta(stage(preview=[msg("Answer: 4")])), delta(stage(logs=[msg("Answer: four")])))
    assert a.final_text == "Answer: four"


def test_two_stages_are_joined_in_order():
    a = Assembler()
    out = stream(
        a,
        delta(stage("s1", preview=[msg("Let me look.")])),
        delta(stage("s2", preview=[msg("It is sunny.")])),
    )
    assert a.final_text == "Let me look.\n\nIt is sunny."
    assert texts(out) == a.final_text


def test_error_event_raises_agent_failed_with_message():
    a = Assembler()
    with pytest.raises(AgentFailed, match="upstream model crashed"):
        stream(a, delta(stage(preview=[msg("Par")])), {"type": "error", "message": "upstream model crashed"})


def test_done_event_and_marker():
    for done in ({"type": "done"}, "[DONE]"):
        a = Assembler()
        stream(a, done)
        assert a.done


def test_junk_and_unknown_events_are_skipped():
    assert parse_event("{not json") is None
    assert parse_event('{"type": "mystery", "x": 1}') is None
    assert parse_event('{"type": "history_delta", "stages": 5}') is None
    deep = parse_event('{"type": "history_delta", "stages": [], "extra": {"deep": [1]}}')
    assert deep is not None and (deep.type, deep.stages) == ("history_delta", [])  # the extra key ignored


def test_raw_bytes_payloads_parse_exactly_like_text():
    # A bytes-level SSE reader hands payloads over undecoded (no copy of tens of MB of snapshots).
    text = json.dumps(delta(stage(preview=[msg("café 🇺🇦")])), ensure_ascii=False)
    assert parse_event(text.encode()) == parse_event(text)
    assert parse_event(b"[DONE]") == parse_event(" [DONE]\n") == parse_event(b" [DONE]\r")
    assert parse_event(b"{not json") is None
    # invalid UTF-8 is read as a text reader would: replacement characters, not a dropped event
    broken = text.encode().replace("é".encode(), b"\xe9")
    assert parse_event(broken) == parse_event(broken.decode(errors="replace"))
    event = parse_event(broken)
    assert event is not None and [e.content for e in event.stages[0].preview] == ["caf\ufffd 🇺🇦"]


# --- tool calls ---------------------------------------------------------------------------------


def test_client_tool_call_becomes_openai_tool_call():
    a = Assembler(client_tools=frozenset({"get_weather"}), new_call_id=lambda: "call_abc")
    out = stream(a, delta(stage(logs=[tool_log("get_weather", {"city": "Kyiv — Київ"})])))
    assert out == [
        ClientToolCall(index=0, id="call_abc", name="get_weather", arguments='{"city": "Kyiv — Київ"}')
    ]
    assert json.loads(out[0].arguments) == {"city": "Kyiv — Київ"}
    assert a.wants_client_tool


def test_duplicate_tool_calls_are_deduplicated_across_stages():
    a = Assembler(client_tools=frozenset({"get_weather"}))
    log = tool_log("get_weather", {"city": "Paris", "units": "C"})
    same_reordered = tool_log("get_weather", {"units": "C", "city": "Paris"})
    out = stream(a, delta(stage("s1", logs=[log])), delta(stage("s2", logs=[same_reordered])))
    assert len([p for p in out if isinstance(p, ClientToolCall)]) == 1
    assert len(a.tool_calls) == 1


def test_builtin_tool_is_kept_server_side_and_a_late_result_updates_it():
    a = Assembler(client_tools=frozenset({"get_weather"}))
    out = stream(
        a,
        delta(stage("s1", logs=[tool_log("WebSearch", {"query": "Paris weather"})])),
        delta(stage("s2", logs=[tool_log("WebSearch", {"query": "Paris weather"}, result="21°C, sunny")])),
    )
    assert out == [
        BuiltinToolUse("WebSearch", {"query": "Paris weather"}, None),
        BuiltinToolUse("WebSearch", {"query": "Paris weather"}, "21°C, sunny"),
    ]
    assert a.tool_calls == []
    assert a.builtin_tools == [BuiltinToolUse("WebSearch", {"query": "Paris weather"}, "21°C, sunny")]


def test_expose_builtins_returns_them_as_tool_calls():
    a = Assembler(expose_builtins=True)
    stream(a, delta(stage(logs=[tool_log("WebSearch", {"query": "x"}, result="r")])))
    assert [c.name for c in a.tool_calls] == ["WebSearch"]


def test_max_tool_calls_keeps_the_first():
    a = Assembler(client_tools=frozenset({"f"}), max_tool_calls=1)
    stream(a, delta(stage(logs=[tool_log("f", {"n": 1}), tool_log("f", {"n": 2})])))
    assert [c.arguments for c in a.tool_calls] == ['{"n": 1}']


def test_text_deltas_come_before_the_tool_call_of_the_same_event():
    a = Assembler(client_tools=frozenset({"f"}))
    out = stream(a, delta(stage(preview=[msg("Checking.")], logs=[tool_log("f", {})])))
    assert [type(p) for p in out] == [TextDelta, ClientToolCall]


# --- rendering ----------------------------------------------------------------------------------


def test_render_roles_in_order():
    parts = render_messages(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                ],
            },
        ],
        ImageLimits(fetch="public"),
    )
    assert [p.content for p in parts] == [
        "[System]\nBe brief.",
        "Hi",
        "[Assistant]\nHello!",
        "Look:",
        # the URL and the limits it is fetched under (10 MiB, ports 80 and 443)
        "pending-image:url:" + hashlib.sha256(b"https://x/y.png\x0010485760\x0080,443").hexdigest(),
    ]


def test_render_tool_loop_shows_calls_and_results_with_names():
    parts = render_messages(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "83°F, Overcast"},
        ]
    )
    assert [p.content for p in parts] == [
        "Weather in Paris?",
        '[Assistant]\n[Tool call #call_1: get_weather({"city":"Paris"})]',
        '[Tool result #call_1: get_weather({"city": "Paris"})]: 83°F, Overcast',
    ]


def test_render_skips_empty_and_none_content_and_keeps_long_unicode():
    long = "ж" * 200_000
    parts = render_messages(
        [
            {"role": "assistant", "content": None},
            {"role": "user", "content": ""},
            {"role": "user", "content": long},
        ]
    )
    assert [p.content for p in parts] == [long]


@pytest.mark.parametrize(
    "messages, problem",
    [
        ([], "at least one message"),
        ([{"role": "wizard", "content": "x"}], "unsupported role 'wizard'"),
        ([{"role": "user", "content": 42}], "messages[0].content must be a string"),
        ([{"role": "user", "content": [{"type": "audio"}]}], "unsupported type 'audio'"),
        ([{"role": "user", "content": ""}], "no text"),
    ],
)
def test_render_refuses_bad_input_naming_the_problem(messages, problem):
    with pytest.raises(BadRequest, match=problem.replace("[", r"\[").replace("]", r"\]")):
        render_messages(messages)


def test_content_text_of_none_and_parts():
    assert content_text(None) == ""
    assert content_text([{"type": "text", "text": "a"}, "b"]) == "a\nb"


# --- tools conversion ---------------------------------------------------------------------------


def test_convert_openai_and_anthropic_tools():
    specs = convert_tools(
        [
            {
                "type": "function",
                "function": {
                    "name": "a",
                    "description": "A",
                    "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
                },
            },
            {"name": "b", "description": "B", "input_schema": {"type": "object"}},
        ]
    )
    assert [s.model_dump() for s in specs] == [
        {
            "name": "a",
            "description": "A",
            "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        {"name": "b", "description": "B", "input_schema": {"type": "object"}},
    ]


@pytest.mark.parametrize(
    "tools, problem",
    [
        ([{"type": "function", "function": {"parameters": {"type": "object"}}}], "has no name"),
        (
            [{"name": "a", "input_schema": {}}, {"name": "a", "input_schema": {}}],
            "'a' is defined more than once",
        ),
        ([{"name": "WebSearch", "input_schema": {"type": "object"}}], "clashes with conol's built-in"),
        ([{"name": "a", "input_schema": {"type": "array"}}], "must be a JSON object schema"),
    ],
)
def test_invalid_tools_are_refused_naming_the_tool(tools, problem):
    with pytest.raises(BadRequest, match=problem):
        convert_tools(tools)


# --- effort, catalog, body ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "effort, expected",
    [
        (None, "low"),
        ("minimal", "low"),
        ("low", "low"),
        ("medium", "medium"),
        ("high", "high"),
        ("xhigh", "max"),
    ],
)
def test_effort_mapping(effort, expected):
    assert map_effort(effort) == expected


def test_effort_from_reasoning_object_and_bad_value():
    assert map_effort(None, {"effort": "high"}) == "high"
    with pytest.raises(BadRequest, match="'extreme'"):
        map_effort("extreme")


@pytest.mark.parametrize(
    "thinking, expected",
    [
        ({"type": "enabled", "budget_tokens": 1024}, "low"),
        ({"type": "enabled", "budget_tokens": 2048}, "medium"),
        ({"type": "enabled", "budget_tokens": 4000}, "medium"),
        ({"type": "enabled", "budget_tokens": 4096}, "high"),
        ({"type": "enabled", "budget_tokens": 31999}, "max"),
        ({"type": "disabled"}, "low"),
        ({"type": "adaptive"}, "high"),  # adaptive, no effort given: Anthropic's default
    ],
)
def test_effort_from_anthropic_thinking(thinking, expected):
    assert map_effort(None, None, thinking) == expected
    assert map_effort("high", None, thinking) == "high"  # an explicit effort wins


def test_effort_from_the_messages_adapters_effort_object_and_bad_thinking_budget():
    assert map_effort({"effort": "medium", "summary": "detailed"}) == "medium"
    with pytest.raises(BadRequest, match="budget_tokens 'lots'"):
        map_effort(None, None, {"type": "enabled", "budget_tokens": "lots"})


def test_catalog_accepts_both_forms_and_refuses_unknown():
    catalog = default_catalog()
    assert catalog.resolve("deepseek-v4-pro").agent_model == "deepseek/deepseek-v4-pro"
    assert catalog.resolve("deepseek/deepseek-v4-pro").id == "deepseek-v4-pro"
    assert catalog.resolve("conol/claude-haiku-4-5").agent_model == "claude-haiku-4-5"
    with pytest.raises(ModelNotFound, match="'gpt-9'.*Known models: gpt-5.6-luna"):
        catalog.resolve("gpt-9")


def test_session_body_omits_tools_when_none():
    body = CreateSessionBody(
        messages=render_messages([{"role": "user", "content": "x"}]), timezone="UTC", agent_model="m"
    )
    assert json.loads(body.to_json()) == {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": "x"}],
        "timezone": "UTC",
        "agentModel": "m",
        "agentEffort": "low",
    }


# --- end policy ---------------------------------------------------------------------------------


def test_a_closed_stream_is_checked_at_once_not_at_the_next_poll_slot():
    from litellm_conol.core.protocol.end_policy import EndPolicy, Finish, Poll, Timing, WaitUntil

    policy = EndPolicy(Timing(), now=0.0)
    policy.on_activity(0.0)
    policy.on_event(0.0)
    assert policy.next_step(0.2) == Poll()
    policy.on_poll_started(0.2)
    policy.on_status(0.21, "running")
    assert policy.next_step(0.3) == WaitUntil(0.4)  # the next poll slot
    policy.on_stream_closed()
    assert policy.next_step(0.3) == Poll()  # not at 0.4
    policy.on_poll_started(0.3)
    policy.on_status(0.31, "completed")
    assert policy.next_step(0.31) == Finish("stream closed, status terminal")


def test_terminal_status_alone_settles_from_the_later_of_status_and_last_event():
    from litellm_conol.core.protocol.end_policy import EndPolicy, Finish, Poll, Timing, WaitUntil

    policy = EndPolicy(Timing(settle_window=1.0), now=0.0)
    policy.on_activity(0.0)
    policy.on_event(0.0)
    assert policy.next_step(0.2) == Poll()
    policy.on_poll_started(0.2)
    policy.on_status(0.2, "completed")
    assert policy.next_step(0.5) == WaitUntil(1.2)
    policy.on_activity(0.9)
    policy.on_event(0.9)  # the final snapshot after the terminal status restarts the window
    assert policy.next_step(1.5) == WaitUntil(1.9)
    assert policy.next_step(1.9) == Finish("status terminal, settled")
    assert policy.polls == 1  # never polled again once terminal


def poll_times(timing, until: float) -> list[float]:
    """When a quiet, still-running session is polled (last event at 0; polls answer at once)."""
    from litellm_conol.core.protocol.end_policy import EndPolicy, Poll, WaitUntil

    policy = EndPolicy(timing, now=0.0)
    policy.on_activity(0.0)
    policy.on_event(0.0)
    now, times = 0.0, []
    while now < until:
        step = policy.next_step(now)
        if step == Poll():
            times.append(round(now, 3))
            policy.on_poll_started(now)
            policy.on_status(now, "running")
            continue
        assert isinstance(step, WaitUntil)
        now = step.deadline
    return times


def test_polls_thin_out_once_the_settle_window_of_silence_has_passed():
    from litellm_conol.core.protocol.end_policy import Timing

    times = poll_times(Timing(settle_window=1.0, medium_poll_after=1.2, idle_timeout=100), until=13.0)
    assert times[:6] == [0.2, 0.4, 0.6, 0.8, 1.0, 1.2]  # every 0.2 s while an end is likely
    assert times[6:11] == [1.7, 2.2, 2.7, 3.2, 3.7]  # then every 0.5 s
    assert times[-4:] == [9.7, 10.2, 11.2, 12.2]  # every 1 s after 10 s
    assert len([t for t in times if t <= 6.0]) == 15  # 30 at a flat 0.2 s


def test_poll_schedule_options_keep_the_finish_within_the_settle_window():
    from litellm_conol.core.config.boundary import settings_of
    from litellm_conol.core.config.budgets import request_timing

    def _timing(params):
        return request_timing(settings_of(params))

    assert _timing({}).medium_poll_after == 1.2 and _timing({}).medium_poll_interval == 0.5
    quick = _timing({"settle_window": 0.1})
    assert quick.medium_poll_interval == 0.2  # never slower than the settle window (or the interval)
