"""Recorded sessions, offline: every committed fixture says what it shows, a reconnect's replayed
history is sent once, and scrubbing blanks user turns and masks secrets."""

from __future__ import annotations

import json

import pytest
from support.paths import RECORDINGS

import litellm_conol
from litellm_conol.fake import RECORDING_FORMAT, load_recording

pytestmark = pytest.mark.timeout(60)


litellm_conol.register()


FIXTURES = RECORDINGS


def test_there_are_fixtures_and_each_says_what_it_shows():
    assert len(FIXTURES) >= 4
    for path in FIXTURES:
        recording = load_recording(path)
        assert recording["note"] and recording["expected"]["finish_reason"] in ("stop", "tool_calls")
    # how each committed fixture's answer ends, exactly
    assert {p.name: load_recording(p)["expected"]["finish_reason"] for p in FIXTURES} == {
        "early_terminal_tolerant.json": "stop",
        "greeting_committed.json": "stop",
        "weather_tool_call.json": "tool_calls",
        "websearch_then_answer.json": "stop",
    }


def test_a_reconnect_replay_is_sent_once():
    from litellm_conol.fake import RawLine, SetStatus, Sleep
    from litellm_conol.fake._replay import replay_steps

    timeline = [
        {"t": 0.0, "connect": 1},
        {"t": 0.1, "line": "data: 1"},
        {"t": 0.2, "line": ": ping"},
        {"t": 0.3, "status": "running"},
        {"t": 0.4, "connect": 2},
        {"t": 0.4, "line": "data: 1"},  # conol replays the history on the new connection
        {"t": 0.5, "line": "data: 2"},
        {"t": 0.6, "status": None},  # a failed poll changes nothing
        {"t": 0.7, "status": "completed"},
    ]
    steps = replay_steps({"format": RECORDING_FORMAT, "timeline": timeline})
    assert [s for s in steps if not isinstance(s, Sleep)] == [
        RawLine("data: 1"),
        RawLine(": ping"),
        SetStatus("running"),
        RawLine("data: 2"),
        SetStatus("completed"),
    ]
    assert sum(s.seconds for s in steps if isinstance(s, Sleep)) == pytest.approx(0.7)


def test_scrub_blanks_user_turns_wherever_they_are_nested_and_masks_secrets():
    from litellm_conol.ops.record import SCRUBBED_USER_TURN, scrub

    nested = {
        "type": "history_delta",
        "data": {"stages": [{"logs": [{"role": "user", "content": "Hi, I am Ann"}]}]},
    }
    recording = {
        "timeline": [
            {"t": 0.1, "line": "data: " + json.dumps(nested)},
            {"t": 0.2, "line": 'data: {"type":"x","text":"mail ann@corp.example.org, session ses-123, tok"}'},
        ],
        "expected": {"content": "token tok-9 in ses-123"},
    }
    scrubbed = scrub(recording, secrets=("tok-9",), session_id="ses-123")
    first = json.loads(scrubbed["timeline"][0]["line"][6:])
    assert first["data"]["stages"][0]["logs"][0]["content"] == SCRUBBED_USER_TURN
    assert scrubbed["timeline"][1]["line"] == (
        'data: {"type":"x","text":"mail user@example.invalid, session ses_recorded, tok"}'
    )
    assert scrubbed["expected"]["content"] == "token *** in ses_recorded"


def test_the_recorder_writes_the_format_the_fake_replays():
    from litellm_conol.ops.record import RECORDING_FORMAT as WRITTEN

    assert WRITTEN == RECORDING_FORMAT == "litellm-conol-recording/1"
