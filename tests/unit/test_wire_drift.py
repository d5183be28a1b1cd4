"""Parsing conol's events when their shape drifts: read where the meaning is clear, a clear error
naming the shape where it is not."""

from __future__ import annotations

import json

import pytest
from support.events import delta, msg, stage, tool_log

import litellm_conol
from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.wire import HistoryDelta, parse_event, unreadable_reason

pytestmark = pytest.mark.timeout(30)


litellm_conol.register()


def _read(*events: dict) -> tuple[str, str, list[str]]:
    """(answer, reasoning, client tool names) the core makes of these events."""
    assembler = Assembler(client_tools=frozenset({"get_weather"}))
    for event in events:
        parsed = parse_event(json.dumps(event))
        assert parsed is not None, event
        assembler.feed(parsed)
    return assembler.final_text, assembler.final_reasoning, [c.name for c in assembler.tool_calls]


def test_unknown_fields_at_every_level_are_ignored():
    event = {
        "type": "history_delta",
        "v": 2,
        "stages": [
            {
                "id": "s",
                "kind": "agent",
                "preview": [{**msg("Hi there"), "id": "p1", "tokens": 3}],
                "logs": [{**tool_log("get_weather", {"city": "Kyiv"}), "ts": 1}],
            }
        ],
    }
    assert _read(event) == ("Hi there", "", ["get_weather"])


def test_content_as_a_string_or_as_parts_reads_the_same():
    as_text = delta(stage(preview=[msg("Hello world")]))
    as_parts = delta(
        stage(preview=[msg([{"type": "text", "text": "Hello "}, {"type": "text", "text": "world"}])])
    )
    as_one_part = delta(stage(preview=[msg({"type": "text", "text": "Hello world"})]))  # type: ignore[arg-type]
    assert _read(as_text) == _read(as_parts) == _read(as_one_part) == ("Hello world", "", [])


@pytest.mark.parametrize(
    "event",
    [
        {"type": "history_delta", "data": {"stages": [stage(preview=[msg("Nested")])]}},
        {"type": "history_delta", "delta": {"stages": [stage(preview=[msg("Nested")])], "seq": 4}},
        {"type": "history_delta", "stages": {"stg_1": {"preview": [msg("Nested")]}}},
        {
            "type": "history_delta",
            "stages": [{"id": "stg_1", "stage": {"preview": [msg("Nested")], "logs": []}}],
        },
        {"type": "history_delta", "stages": [{"id": "stg_1", "preview": msg("Nested")}]},
    ],
    ids=["data-wrapper", "delta-wrapper", "stages-by-id", "nested-stage", "single-entry"],
)
def test_extra_nesting_is_read_where_the_meaning_is_clear(event):
    assert _read(event) == ("Nested", "", [])
    parsed = parse_event(json.dumps(event))
    assert isinstance(parsed, HistoryDelta) and parsed.stages[0].id == "stg_1"


def test_an_empty_delta_stays_empty_and_unknown_types_stay_skipped():
    event = parse_event('{"type": "history_delta", "stages": [], "extra": {"deep": [1]}}')
    assert isinstance(event, HistoryDelta) and event.stages == []
    assert parse_event('{"type": "session_title", "stages": [{"preview": []}]}') is None
    assert unreadable_reason('{"type": "session_title"}') is None
    assert unreadable_reason("{not json") is None and unreadable_reason("[1]") is None
    assert unreadable_reason(json.dumps(delta(stage(preview=[msg("ok")])))) is None


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"type": "history_delta", "stages": 5}, "a history_delta event whose stages is int 5 ("),
        (
            {
                "type": "history_delta",
                "stages": [{"id": "s", "preview": [{"type": "message", "content": 42}]}],
            },
            "a history_delta event whose stages.0.preview.0.content is int 42 (",
        ),
        (
            {"type": "history_delta", "stages": [{"id": "s", "logs": "user said hi"}]},
            'a history_delta event whose stages.0.logs is str "user said hi" (',
        ),
        (
            {"type": "error", "message": {"code": 1}},
            "a error event whose message is an object with keys code (",
        ),
    ],
)
def test_what_cannot_be_read_is_named(payload, reason):
    assert parse_event(json.dumps(payload)) is None
    assert unreadable_reason(json.dumps(payload)).startswith(reason)
    assert unreadable_reason(json.dumps(payload).encode()) == unreadable_reason(json.dumps(payload))
