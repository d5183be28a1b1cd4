"""The follow-up's new turn, found by structure (core/protocol/turn_boundary.py), under every way conol may
send it: the turn in a new stage or appended to the known one, logs as cumulative snapshots or as
deltas, the earlier turns replayed or not, and a reconnect that replays everything again."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol.stage_marks import SessionHistory, log_digest, stage_key
from litellm_conol.core.protocol.turn_boundary import TurnBoundary
from litellm_conol.core.protocol.wire import LogEntry, parse_event

REMINDER = "<system-reminder>\nYou are conol.\n</system-reminder>\n"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "type": "message", "content": REMINDER + text}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "type": "message", "content": text}


class Session:
    """A hand-written conol session: turns of (question, answer) in stages, as events."""

    def __init__(self, same_stage: bool, cumulative: bool) -> None:
        self.same_stage, self.cumulative = same_stage, cumulative
        self.logs: dict[str, list[dict[str, Any]]] = {}
        self.turn_events: list[list[bytes]] = []

    def turn(self, question: str, answer: str) -> None:
        sid = "main" if self.same_stage or not self.logs else f"stage{len(self.turn_events) + 1}"
        events: list[bytes] = []
        previews = [answer[: len(answer) // 2], answer]
        events.append(self._delta(sid, [user(question)], []))
        for preview in previews:
            events.append(self._delta(sid, [], [said(preview)]))
        events.append(self._delta(sid, [said(answer)], []))
        events.append(json.dumps({"type": "done"}).encode())
        self.turn_events.append(events)

    def _delta(self, sid: str, new_logs: list[dict[str, Any]], preview: list[dict[str, Any]]) -> bytes:
        logs = self.logs.setdefault(sid, [])
        logs += new_logs
        sent = list(logs) if self.cumulative else new_logs
        return json.dumps(
            {"type": "history_delta", "stages": [{"id": sid, "logs": sent, "preview": preview}]}
        ).encode()

    def stream(self, turn: int, replay: bool) -> list[bytes]:
        """A follow-up's connection: every turn so far (replay) or the last one only."""
        turns = self.turn_events[:turn] if replay else [self.turn_events[turn - 1]]
        return [event for events in turns for event in events]


def read(boundary: TurnBoundary, stream: list[bytes], assembler: Assembler) -> None:
    for raw in stream:
        event = parse_event(raw)
        assert event is not None
        kept = boundary.filter(event)
        if kept is not None:
            assembler.feed(kept)


READINGS = list(itertools.product([True, False], repeat=3))  # same stage, cumulative, replay
IDS = [
    f"{'same' if s else 'new'}-{'cumulative' if c else 'delta'}-{'replay' if r else 'no-replay'}"
    for s, c, r in READINGS
]


def run_turns(same: bool, cumulative: bool, replay: bool, turns: list[tuple[str, str]]) -> list[str]:
    """Each turn as a follow-up on the session, its boundary from the previous turn's history."""
    session = Session(same, cumulative)
    history = SessionHistory()
    answers = []
    for number, (question, answer) in enumerate(turns, start=1):
        session.turn(question, answer)
        boundary = TurnBoundary(history)
        assembler = Assembler()
        read(boundary, session.stream(number, replay if number > 1 else True), assembler)
        assert boundary.anchored
        answers.append(assembler.final_text)
        history = boundary.history()
    return answers


@pytest.mark.parametrize(("same", "cumulative", "replay"), READINGS, ids=IDS)
def test_each_turn_gets_its_own_answer(same, cumulative, replay):
    turns = [("hello", "Hi there."), ("ok", "Answer two."), ("ok", "Answer three.")]
    assert run_turns(same, cumulative, replay, turns) == ["Hi there.", "Answer two.", "Answer three."]


@pytest.mark.parametrize(("same", "cumulative", "replay"), READINGS, ids=IDS)
def test_a_turn_an_earlier_message_quoted_is_not_the_old_answer(same, cumulative, replay):
    """Turn 1 quoted turn 2's text; the replayed turn 1 must not count as turn 2."""
    turns = [('Reply "continue" to go on.', "Say continue."), ("continue", "Going on.")]
    assert run_turns(same, cumulative, replay, turns) == ["Say continue.", "Going on."]


@pytest.mark.parametrize("cumulative", [True, False], ids=["cumulative", "delta"])
def test_the_previous_answer_is_never_prepended(cumulative):
    """Snapshots Q1/A1/Q2 then Q1/A1/Q2/A2 of one stage give A2."""
    assert run_turns(True, cumulative, True, [("Q1", "A1"), ("Q2", "A2")]) == ["A1", "A2"]


@pytest.mark.parametrize(("same", "cumulative", "replay"), READINGS, ids=IDS)
def test_a_replayed_done_ends_nothing(same, cumulative, replay):
    session = Session(same, cumulative)
    session.turn("Q1", "A1")
    first = TurnBoundary()
    read(first, session.stream(1, True), Assembler())
    session.turn("Q2", "A2")
    boundary = TurnBoundary(first.history())
    assembler = Assembler()
    for raw in session.stream(2, replay)[:-1]:  # all but turn 2's own done
        kept = boundary.filter(parse_event(raw))
        if kept is not None:
            assembler.feed(kept)
    assert not assembler.done
    assert boundary.filter(parse_event(b'{"type": "error", "message": "x"}')) is not None  # now the turn's


@pytest.mark.parametrize(("same", "cumulative"), list(itertools.product([True, False], repeat=2)))
def test_a_reconnect_replays_without_repeating(same, cumulative):
    session = Session(same, cumulative)
    session.turn("Q1", "A1")
    first = TurnBoundary()
    read(first, session.stream(1, True), Assembler())
    session.turn("Q2", "The second answer.")
    stream = session.stream(2, True)
    boundary = TurnBoundary(first.history())
    assembler = Assembler()
    read(boundary, stream[: len(stream) - 3], assembler)  # broke off mid-turn
    boundary.reconnected()
    read(boundary, stream, assembler)
    assert assembler.final_text == "The second answer."
    expected = [("main", 4)] if same else [("stage2", 2)]  # a turn in stages of its own closes the others
    assert [(mark.id, mark.logs) for mark in boundary.history().stages] == expected


def test_before_the_new_turn_everything_is_the_past():
    session = Session(True, True)
    session.turn("Q1", "A1")
    first = TurnBoundary()
    read(first, session.stream(1, True), Assembler())
    boundary = TurnBoundary(first.history())
    assert [boundary.filter(parse_event(raw)) for raw in session.stream(1, True)] == [None] * 5
    assert not boundary.anchored


def test_the_history_records_each_stage_once_and_closes_an_earlier_turns():
    session = Session(False, False)
    session.turn("Q1", "A1")
    session.turn("Q2", "A2")
    first = TurnBoundary()
    read(first, session.stream(1, True), Assembler())
    assert [(mark.id, mark.logs) for mark in first.history().stages] == [("main", 2)]
    second = TurnBoundary(first.history())
    read(second, session.stream(2, False), Assembler())
    history = second.history()
    assert [(mark.id, mark.logs) for mark in history.stages] == [("stage2", 2)]
    assert history.closed == {stage_key("main")}


def test_a_late_tool_result_is_the_same_entry():
    call = {"role": "assistant", "type": "tool_call", "content": [{"name": "WebSearch", "input": {"q": "x"}}]}
    done = {**call, "content": [{"name": "WebSearch", "input": {"q": "x"}, "result": [{"text": "found"}]}]}
    assert log_digest(LogEntry.model_validate(call)) == log_digest(LogEntry.model_validate(done))
    other = {**call, "content": [{"name": "WebSearch", "input": {"q": "y"}}]}
    assert log_digest(LogEntry.model_validate(call)) != log_digest(LogEntry.model_validate(other))


def test_stages_without_ids_are_noticed():
    boundary = TurnBoundary()
    event = parse_event(b'{"type": "history_delta", "stages": [{"logs": [], "preview": []}]}')
    assert boundary.filter(event) is not None
    assert boundary.unnamed


@pytest.mark.parametrize("cumulative", [True, False], ids=["cumulative", "delta"])
def test_a_stream_that_starts_at_an_earlier_turn_is_still_the_past(cumulative):
    """Without replay a stream starts at the session's latest turn: read by a reattach before its
    turn was taken (a retry reading a post of unknown fate), that is an earlier turn, not ours."""
    session = Session(True, cumulative)
    session.turn("Q1", "A1")
    session.turn("Q2", "A2")
    recorder = TurnBoundary()
    read(recorder, session.stream(2, True), Assembler())
    boundary = TurnBoundary(recorder.history(), reattach=True)
    assert [boundary.filter(parse_event(raw)) for raw in session.stream(2, False)] == [None] * 5
    assert not boundary.anchored


def test_a_session_nobody_continues_passes_every_event_as_it_is():
    """With reuse off nothing is recorded; a new session's events are all its own either way."""
    session = Session(True, True)
    session.turn("Q1", "A1")
    quiet, recording = TurnBoundary(record=False), TurnBoundary()
    for raw in session.stream(1, True):
        event = parse_event(raw)
        assert quiet.filter(event) is event
        assert recording.filter(event) == event
    assert quiet.history() == SessionHistory()
    assert [(mark.id, mark.logs) for mark in recording.history().stages] == [("main", 2)]
