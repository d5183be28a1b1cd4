"""The follow-up readings (docs/protocol.md#readings): a follow-up turn in new stages or appended to the
previous turn's stages (``followup_stage``), with or without the replay (``followup_replay``), a stale
status (``followup_status_lag``) and what ends each earlier turn in the replay
(``followup_replayed_end``). Each test reads the stream a client gets and compares its events exactly,
with stage ids named S1, S2, … in order of appearance and each log as ``Q<n>`` (a user turn) or its text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.timing import bound

from litellm_conol.fake import (
    Done,
    FakeConol,
    Preview,
    Scenario,
    ScenarioContext,
    SetStatus,
    Sleep,
    Step,
    UserTurn,
)
from litellm_conol.fake._session import EARLIER_TURN_ERROR
from litellm_conol.fake._steps import CommitMessage

pytestmark = pytest.mark.timeout(60)


def _answer(ctx: ScenarioContext) -> list[Step]:
    """``A<n>`` for the n-th text part of the transcript (one part per turn here): one snapshot, the
    commit, status completed; no sleeps, so every event is in the timeline once the turn is over."""
    answer = f"A{len(ctx.messages)}"
    return [Preview(answer), CommitMessage(answer), SetStatus("completed")]


def _planned(ctx: ScenarioContext) -> list[Step]:
    """``_answer`` with a plan in a second stage (``notes``) first."""
    return [UserTurn(), Preview(f"P{len(ctx.messages)}", kind="plan", stage="notes"), *_answer(ctx)]


SCENARIOS = [
    Scenario("qa_cumulative", _answer, log_mode="cumulative"),
    Scenario("qa_once", _answer),
    Scenario("qa_two_stages", _planned, log_mode="cumulative", stage_mode="all"),
    Scenario("qa_done", lambda ctx: [*_answer(ctx)[:2], Done(), SetStatus("completed")]),
    Scenario("qa_slow", lambda ctx: [Sleep(0.6), *_answer(ctx)], log_mode="cumulative"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeConol]:
    with FakeConol(scenarios=SCENARIOS, ping_interval=0.2) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeConol) -> Iterator[FakeConol]:
    server.reset()
    server.configure(followup_status_lag=0)
    yield server
    server.reset()


@pytest.fixture
def client(fake: FakeConol) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, cookies=fake.cookies, timeout=10) as c:
        yield c


def create(client: httpx.Client, fake: FakeConol, scenario: str) -> str:
    body = {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": f"[[fake:{scenario}]] Q1"}],
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
        "agentEffort": "low",
    }
    sid: str = client.post("/api/sessions", json=body).json()["sessionId"]
    finished(fake, sid, 1)
    return sid


def follow_up(client: httpx.Client, fake: FakeConol, sid: str, turn: int) -> None:
    body = {"messages": [{"type": "text", "content": f"Q{turn}"}], "timezone": "UTC"}
    assert client.post(f"/api/sessions/{sid}/messages", json=body).status_code == 202
    finished(fake, sid, turn)


def finished(fake: FakeConol, sid: str, turn: int) -> None:
    """Turn ``turn`` has played all its steps (each turn's last step sets ``completed``)."""

    def over() -> bool:
        record = fake.session(sid)
        return record.turns == turn and [s for _, s in record.status_history].count("completed") == turn

    assert fake.wait_until(over, timeout=bound(5)), fake.session(sid).status_history


def read(client: httpx.Client, sid: str, count: int) -> list[Any]:
    """The first ``count`` events of a stream opened now, summarised (``summarise``)."""
    payloads: list[Any] = []
    with client.stream("GET", f"/api/sessions/{sid}/messages", params={"logDeltas": "1"}) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                payloads.append(json.loads(line[6:]))
                if len(payloads) == count:
                    break
    return summarise(payloads)


def summarise(payloads: list[dict[str, Any]]) -> list[Any]:
    names: dict[str, str] = {}
    out: list[Any] = []
    for payload in payloads:
        if payload.get("type") != "history_delta":
            out.append((payload["type"], payload.get("message")))
            continue
        for stage in payload["stages"]:
            name = names.setdefault(stage["id"], f"S{len(names) + 1}")
            logs = [_log(entry) for entry in stage["logs"]]
            out.append((name, logs, [entry["content"] for entry in stage["preview"]]))
    return out


def _log(entry: dict[str, Any]) -> str:
    content: str = entry["content"]
    return content.rsplit(" ", 1)[-1].rsplit("\n", 1)[-1] if entry["role"] == "user" else content


def event_count(fake: FakeConol, sid: str) -> int:
    return len(fake.session(sid).events)


# --------------------------------------------------------------------------------- followup_stage
TURN_1 = [("S1", ["Q1"], []), ("S1", ["Q1"], ["A1"]), ("S1", ["Q1", "A1"], ["A1"])]


def test_new_stages_today(client, fake):
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    assert read(client, sid, event_count(fake, sid)) == [
        *TURN_1,
        ("S2", ["Q2"], []),
        ("S2", ["Q2"], ["A2"]),
        ("S2", ["Q2", "A2"], ["A2"]),
    ]


def test_the_same_stage_with_cumulative_logs_holds_every_turn(client, fake):
    fake.configure(followup_stage="same")
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    follow_up(client, fake, sid, 3)
    assert read(client, sid, event_count(fake, sid)) == [
        *TURN_1,
        # the new turn starts with no preview: the earlier turn's message is no longer in flight
        ("S1", ["Q1", "A1", "Q2"], []),
        ("S1", ["Q1", "A1", "Q2"], ["A2"]),
        ("S1", ["Q1", "A1", "Q2", "A2"], ["A2"]),
        ("S1", ["Q1", "A1", "Q2", "A2", "Q3"], []),
        ("S1", ["Q1", "A1", "Q2", "A2", "Q3"], ["A3"]),
        ("S1", ["Q1", "A1", "Q2", "A2", "Q3", "A3"], ["A3"]),
    ]


def test_the_same_stage_with_delta_logs_sends_only_the_new_logs(client, fake):
    fake.configure(followup_stage="same")
    sid = create(client, fake, "qa_once")
    follow_up(client, fake, sid, 2)
    assert read(client, sid, event_count(fake, sid)) == [
        ("S1", ["Q1"], []),
        ("S1", [], ["A1"]),
        ("S1", ["A1"], ["A1"]),
        ("S1", ["Q2"], []),
        ("S1", [], ["A2"]),
        ("S1", ["A2"], ["A2"]),
    ]


def test_the_same_stages_with_every_stage_in_every_event(client, fake):
    fake.configure(followup_stage="same")
    sid = create(client, fake, "qa_two_stages")
    follow_up(client, fake, sid, 2)
    turn_1 = [
        ("S1", ["Q1"], []),
        ("S1", ["Q1"], []),
        ("S2", [], ["P1"]),
        ("S1", ["Q1"], ["A1"]),
        ("S2", [], ["P1"]),
        ("S1", ["Q1", "A1"], ["A1"]),
        ("S2", [], ["P1"]),
    ]
    assert read(client, sid, event_count(fake, sid)) == [
        *turn_1,
        ("S1", ["Q1", "A1", "Q2"], []),
        ("S2", [], []),
        ("S1", ["Q1", "A1", "Q2"], []),
        ("S2", [], ["P2"]),
        ("S1", ["Q1", "A1", "Q2"], ["A2"]),
        ("S2", [], ["P2"]),
        ("S1", ["Q1", "A1", "Q2", "A2"], ["A2"]),
        ("S2", [], ["P2"]),
    ]


@pytest.mark.parametrize(
    ("stage", "turn_2"),
    [
        ("new", [("S1", ["Q2"], []), ("S1", ["Q2"], ["A2"]), ("S1", ["Q2", "A2"], ["A2"])]),
        (
            "same",
            [
                ("S1", ["Q1", "A1", "Q2"], []),
                ("S1", ["Q1", "A1", "Q2"], ["A2"]),
                ("S1", ["Q1", "A1", "Q2", "A2"], ["A2"]),
            ],
        ),
    ],
)
def test_without_the_replay_a_stream_starts_at_the_new_turn(client, fake, stage, turn_2):
    fake.configure(followup_stage=stage, followup_replay=False, followup_replayed_end="done")
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    assert read(client, sid, 3) == turn_2  # nor the earlier turn's end
    assert len(fake.session(sid).events) == 3 + 1 + 3


# ----------------------------------------------------------------------------- followup_status_lag
@pytest.mark.parametrize("stage", ["new", "same"])
def test_the_earlier_status_lingers_while_the_new_turn_plays(client, fake, stage):
    fake.configure(followup_stage=stage, followup_status_lag=0.3)
    sid = create(client, fake, "qa_slow")
    first_of_turn_2 = event_count(fake, sid)
    follow_up(client, fake, sid, 2)
    record = fake.session(sid)
    assert [status for _, status in record.status_history] == ["running", "completed", "running", "completed"]
    # the new turn's user log went out while the status still said turn 1 completed
    running_at = record.status_history[2][0]
    assert running_at - record.events[first_of_turn_2].time >= 0.25
    names = "S1" if stage == "same" else "S2"
    assert read(client, sid, event_count(fake, sid))[first_of_turn_2][0] == names


@pytest.mark.parametrize("stage", ["new", "same"])
def test_without_lag_the_new_turn_runs_at_once(client, fake, stage):
    fake.configure(followup_stage=stage)
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    statuses = [status for _, status in fake.session(sid).status_history]
    assert statuses == ["running", "completed", "running", "completed"]


# --------------------------------------------------------------------------- followup_replayed_end
@pytest.mark.parametrize("stage", ["new", "same"])
def test_a_replayed_done_ends_each_earlier_turn(client, fake, stage):
    fake.configure(followup_stage=stage, followup_replayed_end="done")
    sid = create(client, fake, "qa_once")
    follow_up(client, fake, sid, 2)
    follow_up(client, fake, sid, 3)
    events = read(client, sid, event_count(fake, sid))
    stages = ["S1", "S1", "S1"] if stage == "same" else ["S1", "S2", "S3"]
    assert [e[0] for e in events] == [*[stages[0]] * 3, "done", *[stages[1]] * 3, "done", *[stages[2]] * 3]
    assert events[3] == ("done", None)


def test_a_turn_that_sent_its_own_done_gets_no_second_one(client, fake):
    fake.configure(followup_replayed_end="done")
    sid = create(client, fake, "qa_done")
    follow_up(client, fake, sid, 2)
    kinds = [e[0] for e in read(client, sid, event_count(fake, sid))]
    assert kinds == ["S1", "S1", "S1", "done", "S2", "S2", "S2", "done"]


@pytest.mark.parametrize("stage", ["new", "same"])
def test_a_replayed_error_ends_each_earlier_turn(client, fake, stage):
    fake.configure(followup_stage=stage, followup_replayed_end="error")
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    events = read(client, sid, event_count(fake, sid))
    assert events[3] == ("error", EARLIER_TURN_ERROR)
    assert [e[0] for e in events] == ["S1"] * 3 + ["error"] + ["S1" if stage == "same" else "S2"] * 3
    assert events[-1] == (
        ("S1", ["Q1", "A1", "Q2", "A2"], ["A2"]) if stage == "same" else ("S2", ["Q2", "A2"], ["A2"])
    )
    # the earlier turn failed when the next was posted; the new one then ran and completed
    statuses = [status for _, status in fake.session(sid).status_history]
    assert statuses == ["running", "completed", "failed", "running", "completed"]


def test_no_end_is_added_by_default(client, fake):
    sid = create(client, fake, "qa_cumulative")
    follow_up(client, fake, sid, 2)
    assert [e[0] for e in read(client, sid, event_count(fake, sid))] == ["S1"] * 3 + ["S2"] * 3


def test_a_session_whose_turn_failed_takes_the_next_turn(client, fake):
    fake.configure(followup_replayed_end="error")
    body = {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": "[[fake:error]] Q1"}],
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
        "agentEffort": "low",
    }
    sid = client.post("/api/sessions", json=body).json()["sessionId"]
    assert fake.wait_until(lambda: fake.session(sid).status == "failed", timeout=bound(5))
    follow_up_body = {"messages": [{"type": "text", "content": "[[fake:qa_once]] Q2"}], "timezone": "UTC"}
    assert client.post(f"/api/sessions/{sid}/messages", json=follow_up_body).status_code == 202
    assert fake.wait_until(lambda: fake.session(sid).status == "completed", timeout=bound(5))
    events = read(client, sid, event_count(fake, sid))
    errors = [e for e in events if e[0] == "error"]
    assert errors == [("error", "agent failed: upstream model crashed")]  # its own, no second one
    assert events[-3:] == [("S2", ["Q2"], []), ("S2", [], ["A2"]), ("S2", ["A2"], ["A2"])]


def test_the_readings_are_set_like_the_others(fake):
    with FakeConol(readings={"followup_stage": "same", "followup_replayed_end": "error"}) as other:
        other.reset()
        assert (other.config.followup_stage, other.config.followup_replayed_end) == ("same", "error")
        answer = httpx.post(other.url("/_fake/config"), json={"followup_replayed_end": "done"})
        assert answer.json()["followup_replayed_end"] == "done"
        refused = httpx.post(other.url("/_fake/config"), json={"followup_stage": "old"})
        assert refused.status_code == 400
        assert "followup_stage='old' must be one of new, same" in refused.json()["error"]
