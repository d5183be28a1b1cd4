"""The fake's follow-up side (docs/protocol.md#create, #follow-up-turns, #model-pinning): empty create, turns on a session, ``/model``,
and a switch for each reading left open (docs/protocol.md#readings)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(60)


def create_body(*texts: str, **extra: Any) -> dict[str, Any]:
    return {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": t} for t in texts],
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
        "agentEffort": "low",
        **extra,
    }


def turn(*texts: str) -> dict[str, Any]:
    return {"messages": [{"type": "text", "content": t} for t in texts], "timezone": "UTC"}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeConol]:
    with FakeConol() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeConol) -> FakeConol:
    server.reset()
    return server


@pytest.fixture
def client(fake: FakeConol) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, cookies=fake.cookies, timeout=10) as c:
        yield c


def wait_status(fake: FakeConol, sid: str, status: str) -> None:
    assert fake.wait_until(lambda: fake.session(sid).status == status, timeout=5), fake.session(sid).status


def stream_payloads(client: httpx.Client, sid: str, until: str) -> list[dict[str, Any]]:
    """The stream's JSON payloads up to (and with) the one that commits the answer ``until``."""
    payloads: list[dict[str, Any]] = []
    with client.stream("GET", f"/api/sessions/{sid}/messages", params={"logDeltas": "1"}) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                try:
                    payloads.append(json.loads(line[6:]))
                except ValueError:
                    payloads.append({"junk": line})
                if until in texts(payloads[-1:]):
                    break
    return payloads


def texts(payloads: list[dict[str, Any]]) -> list[str]:
    out = []
    for payload in payloads:
        for stage in payload.get("stages", []):
            for entry in stage.get("logs", []):
                if entry.get("role") == "assistant" and isinstance(entry.get("content"), str):
                    out.append(entry["content"])
    return out


def test_an_empty_create_runs_nothing_until_a_turn(client: httpx.Client, fake: FakeConol) -> None:
    created = client.post("/api/sessions", json=create_body())
    assert created.status_code == 201
    sid = created.json()["sessionId"]
    assert created.json()["modelDowngraded"] is False
    record = fake.session(sid)
    assert (record.status, record.turns, record.events) == ("idle", 0, [])
    posted = client.post(f"/api/sessions/{sid}/messages", json=turn("[[fake:echo]] hello"))
    assert (posted.status_code, posted.content) == (202, b"")
    wait_status(fake, sid, "completed")
    assert texts(stream_payloads(client, sid, "[[fake:echo]] hello")) == ["[[fake:echo]] hello"]


def test_a_follow_up_appends_a_turn_in_new_stages_and_replays_the_earlier_ones(
    client: httpx.Client, fake: FakeConol
) -> None:
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    wait_status(fake, sid, "completed")
    fake.configure(followup_status_lag=1.0)
    assert client.post(f"/api/sessions/{sid}/messages", json=turn("two")).status_code == 202
    record = fake.session(sid)
    assert record.status == "completed"  # the previous turn's status lingers
    assert record.turns == 2 and record.messages == ["[[fake:echo]] one", "two"]
    payloads = stream_payloads(client, sid, "two")
    assert texts(payloads) == ["[[fake:echo]] one", "two"]  # the replay, then the new turn
    stage_ids = [[s["id"] for s in p["stages"]] for p in payloads if p.get("type") == "history_delta"]
    assert set(stage_ids[0]).isdisjoint(stage_ids[-1])
    wait_status(fake, sid, "completed")
    assert [s for _, s in record.status_history][-2:] == ["running", "completed"]


def test_without_replay_a_stream_starts_at_the_new_turn(client: httpx.Client, fake: FakeConol) -> None:
    fake.configure(followup_replay=False)
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    wait_status(fake, sid, "completed")
    client.post(f"/api/sessions/{sid}/messages", json=turn("two"))
    assert texts(stream_payloads(client, sid, "two")) == ["two"]


def test_replay_garbage_comes_ahead_of_the_new_turn(client: httpx.Client, fake: FakeConol) -> None:
    fake.configure(followup_garbage=True)
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    wait_status(fake, sid, "completed")
    client.post(f"/api/sessions/{sid}/messages", json=turn("two"))
    payloads = stream_payloads(client, sid, "two")
    kinds = [p.get("type", "junk") for p in payloads]
    garbage = kinds.index("done")
    assert kinds[garbage - 1 : garbage + 2] == ["history_delta", "done", "junk"]
    assert "GARBAGE" in json.dumps(payloads[garbage - 1])


@pytest.mark.parametrize("status", [404, 405])
def test_follow_ups_can_be_unsupported(client: httpx.Client, fake: FakeConol, status: int) -> None:
    fake.configure(followup_status=status)
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    assert client.post(f"/api/sessions/{sid}/messages", json=turn("two")).status_code == status
    assert fake.session(sid).turns == 1


@pytest.mark.parametrize("status", [404, 410])
def test_a_gone_session(client: httpx.Client, fake: FakeConol, status: int) -> None:
    fake.configure(gone_status=status)
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    fake.expire_sessions()
    assert client.post(f"/api/sessions/{sid}/messages", json=turn("two")).status_code == status
    assert client.get(f"/api/sessions/{sid}").status_code == 404
    assert client.post("/api/sessions/nope/messages", json=turn("x")).status_code == 404


def test_a_malformed_turn_is_400(client: httpx.Client, fake: FakeConol) -> None:
    sid = client.post("/api/sessions", json=create_body()).json()["sessionId"]
    answer = client.post(f"/api/sessions/{sid}/messages", json={"messages": []})
    assert answer.status_code == 400
    assert (
        answer.json()["error"] == "messages must be a non-empty list of {'type': 'text', 'content': <string>}"
    )


def test_create_ignoring_the_model_and_model_pinning(client: httpx.Client, fake: FakeConol) -> None:
    fake.configure(create_model="ignore")
    created = client.post("/api/sessions", json=create_body()).json()
    assert (created["modelDowngraded"], created["effectiveModel"]) == (True, "deepseek/deepseek-v4-flash")
    sid = created["sessionId"]
    model = f"/api/sessions/{sid}/model"
    assert client.post(model, json={"modelPreset": "pro", "hasImageHistory": False}).json() == {"ok": True}
    assert client.post(model, json={"agentModel": "claude-haiku-4-5", "agentEffort": None}).json() == {
        "ok": True
    }
    assert fake.session(sid).effort == "low"  # the model call resets the effort
    assert client.post(model, json={"agentEffort": "high"}).json() == {"ok": True}
    record = fake.session(sid)
    assert (record.effective_model, record.effort, record.downgraded) == ("claude-haiku-4-5", "high", False)
    assert client.post(model, json={"agentModel": "vendor/unknown"}).json() == {
        "ok": False,
        "error": "unknown model 'vendor/unknown'",
    }
    assert client.post("/api/sessions/nope/model", json={"agentEffort": "low"}).status_code == 404
    assert client.post(model, json={"agentEffort": "extreme"}).status_code == 400


def test_a_turn_posted_while_the_previous_plays_waits_for_it(client: httpx.Client, fake: FakeConol) -> None:
    sid = client.post("/api/sessions", json=create_body("[[fake:echo]] one")).json()["sessionId"]
    assert client.post(f"/api/sessions/{sid}/messages", json=turn("two")).status_code == 202
    started = time.time()
    payloads = stream_payloads(client, sid, "two")
    assert texts(payloads) == ["[[fake:echo]] one", "two"]
    assert time.time() - started < 10
