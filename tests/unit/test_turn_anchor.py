"""The anchor and what it costs, without sockets (core/protocol/turn_boundary.py, turn_status.py,
reuse/turns.py, reuse/store.py; docs/session-reuse.md#where-the-new-turn-starts).

Item 9 of the review: the boundary digests each log once per connection, not every log of every
event; a binding holds per stage only what the next boundary reads, so in the same-stage reading it
does not grow with the session; the off-loop size estimate sees image data in every message shape;
a take compares the value peeked, as stored. And the anchor's own rules: a second turn past the
history is ambiguous, a preview still showing the previous message is withheld, what conol wrote
late is the tail (and which tail the client does not hold), and which polled status is the turn's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from litellm_conol.core.answer.assembler import Assembler
from litellm_conol.core.protocol import turn_boundary
from litellm_conol.core.protocol.turn_boundary import TurnBoundary
from litellm_conol.core.protocol.turn_status import TurnStatus
from litellm_conol.core.protocol.wire import LogEntry, parse_event
from litellm_conol.reuse.fingerprint import Binding
from litellm_conol.reuse.session_reuse import LARGE_HISTORY, _content_size
from litellm_conol.reuse.store import MemoryBindings
from litellm_conol.reuse.turns import tail_held_back


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "type": "message", "content": "<system-reminder>x</system-reminder>\n" + text}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "type": "message", "content": text}


def delta(sid: str, logs: list[dict[str, Any]], preview: list[dict[str, Any]] | None = None) -> bytes:
    stage = {"id": sid, "logs": logs, "preview": preview or []}
    return json.dumps({"type": "history_delta", "stages": [stage]}).encode()


def read(boundary: TurnBoundary, events: list[bytes]) -> Assembler:
    assembler = Assembler()
    for raw in events:
        event = parse_event(raw)
        assert event is not None
        kept = boundary.filter(event)
        if kept is not None:
            assembler.feed(kept)
    return assembler


# --- item 9: cost ------------------------------------------------------------------------------------


def test_item_9_each_log_is_digested_once_however_often_a_cumulative_stage_repeats_it(monkeypatch):
    calls = 0
    digest = turn_boundary.log_digest

    def counted(log: LogEntry) -> str:
        nonlocal calls
        calls += 1
        return digest(log)

    monkeypatch.setattr(turn_boundary, "log_digest", counted)
    logs = [user("go")]
    events = []
    for step in range(400):  # 400 events, each repeating the stage's every log and adding one
        logs.append(said(f"step {step}"))
        events.append(delta("main", list(logs)))
    read(TurnBoundary(), events)
    assert calls <= 3 * len(events)  # the new log, plus the first and last to tell a repeat from a delta


def session_history(same_stage: bool, turns: int) -> list[int]:
    """A session of ``turns`` turns, each a follow-up on the previous one's binding (replayed, logs as
    deltas): each binding's size as JSON."""
    history = TurnBoundary().history()
    timeline: list[bytes] = []
    sizes = []
    for turn in range(1, turns + 1):
        sid = "main" if same_stage else f"stage-{turn:04d}-{'x' * 12}"
        timeline += [delta(sid, [user(f"turn {turn}")]), delta(sid, [said(f"answer {turn}")], [said("a")])]
        boundary = TurnBoundary(history)
        assert read(boundary, timeline).final_text == f"answer {turn}"
        history = boundary.history()
        sizes.append(len(Binding("s", "m", "low", history).to_json()))
    return sizes


def test_item_9_a_binding_does_not_grow_with_the_session_in_the_same_stage_reading():
    sizes = session_history(same_stage=True, turns=200)
    assert sizes[199] - sizes[9] == 2  # the stage's log count and last user position: 20 → 400, 18 → 398


def test_item_9_in_the_new_stages_reading_a_binding_keeps_one_short_digest_per_earlier_stage():
    sizes = session_history(same_stage=False, turns=200)
    assert sizes[199] - sizes[9] == 190 * len('"0123456789ab", ')


PIXELS = "A" * (LARGE_HISTORY + 1)


@pytest.mark.parametrize(
    "message",
    [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + PIXELS}}],
        },
        {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": PIXELS}}]},
        {
            "role": "user",
            "content": [{"type": "input_image", "image_url": "data:image/png;base64," + PIXELS}],
        },
    ],
    ids=["chat", "anthropic", "responses"],
)
def test_item_9_the_size_estimate_sees_image_data_in_every_message_shape(message):
    assert _content_size([message]) > LARGE_HISTORY


async def test_item_9_a_take_compares_the_value_peeked_as_it_was_stored():
    store = MemoryBindings(cap=4)
    raw = json.loads(Binding("s1", "m", "low").to_json())
    stored = json.dumps(dict(reversed(list(raw.items()))))  # another writer's key order
    await store.state.put("k", stored, 60)
    peeked = await store.peek("k")
    assert peeked is not None
    assert await store.take("k", peeked) == peeked


# --- the anchor ----------------------------------------------------------------------------------------


def recorded(*events: bytes) -> TurnBoundary:
    """A follow-up's boundary on a session whose first turn was ``events``."""
    first = TurnBoundary()
    read(first, list(events))
    return TurnBoundary(first.history())


TURN_1 = [delta("main", [user("one")]), delta("main", [said("A1")], [said("A1")])]


def test_a_tool_call_whose_result_comes_later_is_the_same_log_in_a_cumulative_stage():
    call = {"role": "assistant", "type": "tool_call", "content": [{"name": "WebSearch", "input": {"q": 1}}]}
    found = {**call, "content": [{"name": "WebSearch", "input": {"q": 1}, "result": [{"text": "hit"}]}]}
    boundary = recorded(*TURN_1)
    logs = [user("one"), said("A1"), user("two")]
    events = [
        *TURN_1,
        delta("main", logs),
        delta("main", [*logs, call]),
        delta("main", [*logs, found, said("A2")]),
    ]
    assembler = read(boundary, events)
    assert (assembler.final_text, boundary.ambiguous, boundary.history().stages[0].logs) == ("A2", None, 5)


def test_a_second_turn_past_the_history_is_ambiguous():
    boundary = recorded(*TURN_1)
    read(boundary, [*TURN_1, delta("main", [user("two")]), delta("main", [user("three")])])
    assert boundary.ambiguous is not None and "second user turn" in boundary.ambiguous


def test_a_preview_still_showing_the_previous_message_is_withheld_until_it_changes():
    boundary = recorded(*TURN_1)
    new_turn = [delta("main", [user("two")], [said("A1")]), delta("main", [], [said("A2")])]
    assembler = read(boundary, [*TURN_1, *new_turn])
    assert (assembler.final_text, assembler.answer.emitted) == ("A2", "A2")


def test_what_conol_wrote_after_the_answer_is_the_tail_never_the_turn():
    note = {"role": "assistant", "type": "tool_call", "content": [{"name": "WriteNote", "input": {"n": 1}}]}
    boundary = recorded(*TURN_1)
    late = [delta("main", [said("More of A1.")]), delta("main", [note])]
    assembler = read(boundary, [*TURN_1, *late, delta("main", [user("two")]), delta("main", [said("A2")])])
    assert assembler.final_text == "A2"
    assert [log.content for log in boundary.tail_logs[:1]] == ["More of A1."]


def test_which_tail_the_client_does_not_hold():
    note = LogEntry.model_validate(
        {"role": "assistant", "type": "tool_call", "content": [{"name": "WriteNote", "input": {}}]}
    )
    call = LogEntry.model_validate(
        {"role": "assistant", "type": "tool_call", "content": [{"name": "get_weather", "input": {}}]}
    )
    text = LogEntry.model_validate(said("More."))
    assert tail_held_back([note], frozenset({"get_weather"}), expose=False) is None
    assert (
        tail_held_back([note], frozenset(), expose=True)
        == "it made a tool call after the previous answer ended"
    )
    assert tail_held_back([call], frozenset({"get_weather"}), expose=False) is not None
    assert tail_held_back([text], frozenset(), expose=False) == (
        "it wrote more answer text after the previous answer ended"
    )


def test_a_terminal_status_is_the_turns_only_with_proof():
    status = TurnStatus(following=True, settle_window=1.0)
    assert status.believe("completed", 0.0, anchored=False, own_content=False).status is None
    assert status.believe("completed", 0.5, anchored=True, own_content=False).status is None
    assert status.believe("completed", 0.6, anchored=True, own_content=True).status is None  # content now
    assert status.believe("completed", 1.5, anchored=True, own_content=True).status is None  # held 0.9 s
    assert status.believe("completed", 1.7, anchored=True, own_content=True).at == 0.6  # held a settle window
    assert status.believe("failed", 9.0, anchored=True, own_content=True).status is None  # its error event
    committed = TurnStatus(following=True, settle_window=1.0)
    assert committed.believe("completed", 0.0, anchored=True, own_content=True, committed=True).status
    assert not committed.believe("failed", 0.1, anchored=True, own_content=True, committed=True).status
    # a lagging status: what the first settle window shows may be the previous turn's (its late
    # "running" too); later, running proves a new run
    lagging = TurnStatus(following=True, settle_window=1.0)
    for at, shown in ((0.0, "failed"), (0.3, "running"), (0.5, "failed")):
        assert lagging.believe(shown, at, anchored=True, own_content=False).status in (None, "running")
    assert lagging.believe("running", 1.2, anchored=True, own_content=False).status == "running"
    assert lagging.believe("failed", 1.4, anchored=True, own_content=False).status == "failed"
    # the previous turn waits on a tool: running proves nothing until a terminal status came
    waited = TurnStatus(following=True, settle_window=1.0, waiting=True)
    assert waited.believe("running", 1.5, anchored=True, own_content=False).status == "running"
    assert waited.believe("failed", 1.7, anchored=True, own_content=False).status is None
    assert not waited.ended("failed", 4.0, quiet_since=0.0)
    assert waited.believe("running", 4.1, anchored=True, own_content=False).status == "running"
    assert waited.believe("failed", 4.2, anchored=True, own_content=False).status == "failed"
    rerun = TurnStatus(following=True, settle_window=1.0)
    for at, shown in ((0.0, "completed"), (1.2, "running"), (1.4, "completed")):
        rerun.believe(shown, at, anchored=False, own_content=False)
    assert not rerun.ended("completed", 1.9, quiet_since=0.0)
    assert rerun.ended("completed", 2.5, quiet_since=0.0)


def test_a_reattach_never_proves_a_turn_untaken_from_an_echo_word_for_word_the_last_one():
    """A retry reading a turn whose post failed 5xx: the stream (no replay) starts at a user log equal
    to the last recorded one. It is the latest recorded turn, or ours said word for word again in the
    same second: this read cannot prove conol did not take it (never a second post)."""
    boundary = TurnBoundary(recorded(*TURN_1).known, reattach=True)
    read(boundary, TURN_1)
    assert (boundary.anchored, boundary.unsure) == (False, True)
