"""The fake's switches for the readings other clients report (docs/protocol.md#stream, #balance, #authentication): framing,
``contextUsage``, balance, get-session modes, cookie forms, and the scenarios of the other event
shapes. Records stay in the SSE form whatever the framing (the framing is applied on the way out)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from litellm_conol.fake import BUILTINS, COOKIE_NAME, FakeConol
from litellm_conol.fake._library import CREDIT_ERROR

pytestmark = pytest.mark.timeout(60)


def body(text: str, model: str = "deepseek/deepseek-v4-pro") -> dict[str, Any]:
    return {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": text}],
        "timezone": "UTC",
        "agentModel": model,
        "agentEffort": "low",
    }


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol(ping_interval=0.2) as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(fake: FakeConol) -> Iterator[None]:
    fake.reset()
    yield
    fake.reset()


@pytest.fixture
def client(fake: FakeConol) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, cookies=fake.cookies, timeout=10) as c:
        yield c


def stream_lines(
    client: httpx.Client, text: str, model: str = "deepseek/deepseek-v4-pro"
) -> tuple[str, list[str]]:
    """(content type, the non-empty lines) of a finished ``done``-ended session's stream."""
    sid = client.post("/api/sessions", json=body(text, model)).json()["sessionId"]
    lines: list[str] = []
    with client.stream("GET", f"/api/sessions/{sid}/messages") as response:
        content_type = response.headers["content-type"]
        for line in response.iter_lines():
            if line.strip():
                lines.append(line)
            if '"type":"done"' in line:
                break
    return content_type, lines


@pytest.mark.parametrize(
    ("framing", "content_type", "prefix"),
    [
        ("sse", "text/event-stream", "data: "),
        ("ndjson", "application/x-ndjson", ""),
        ("message", "text/plain", "message\t"),
    ],
)
def test_each_framing_frames_every_event_and_records_stay_sse(fake, client, framing, content_type, prefix):
    fake.configure(framing=framing)
    got_type, lines = stream_lines(client, "[[fake:done]]")
    record = fake.last_session
    assert got_type.startswith(content_type)
    assert lines == [prefix + e.raw[6:].decode().rstrip("\n") for e in record.events]
    assert all(e.raw.startswith(b"data: ") for e in record.events)


def test_line_framings_keep_the_connection_busy_with_empty_lines(fake, client):
    fake.configure(framing="ndjson")
    sid = client.post("/api/sessions", json=body("[[fake:stall_mid seconds=1]]")).json()["sessionId"]
    with client.stream("GET", f"/api/sessions/{sid}/messages") as response:
        raw = b""
        for chunk in response.iter_raw():
            raw += chunk
            if b"\n\n" in raw.split(b'"logs"')[-1]:  # an empty line after an event: the heartbeat
                break
    assert b": ping" not in raw and raw.count(b"\n\n") >= 1


def test_context_usage_on_every_event_with_the_model_that_runs(fake, client):
    fake.configure(context_usage=True)
    _, lines = stream_lines(client, "[[fake:done]] hello")
    usages = [json.loads(line[6:])["contextUsage"] for line in lines]
    used = [u["usedTokens"] for u in usages]
    assert used == sorted(used) and used[0] > 0
    assert {(u["contextWindow"], u["modelId"]) for u in usages} == {(200000, "deepseek/deepseek-v4-pro")}
    assert fake.last_session.context_usage == usages[-1]


def test_context_model_names_another_model_than_the_create_answer(fake, client):
    fake.configure(context_usage=True, context_model="claude-haiku-4-5")
    created = client.post("/api/sessions", json=body("[[fake:done]]", "claude-fable-5")).json()
    assert fake.wait_until(lambda: fake.last_session.context_usage is not None)
    assert created["effectiveModel"] != "claude-haiku-4-5"
    assert fake.last_session.context_usage["modelId"] == "claude-haiku-4-5"


def test_without_the_switch_no_event_carries_context_usage(fake, client):
    _, lines = stream_lines(client, "[[fake:done]]")
    assert not any("contextUsage" in line for line in lines) and fake.last_session.context_usage is None


@pytest.mark.parametrize("mode", ["full", "total", "zero"])
def test_balance_modes(fake, client, mode):
    fake.configure(balance=mode)
    answer = client.get("/api/billing/balance").json()
    if mode == "total":
        assert answer == {"total": 12.5}
        return
    keys = {"userId", "dailyCredits", "dailyRefilledAt", "subscriptionCredits", "subscriptionAmount"}
    assert set(answer) == keys | {"extraCredits", "total", "updatedAt"}
    total = answer["dailyCredits"] + answer["subscriptionCredits"] + answer["extraCredits"]
    assert answer["total"] == total == (0 if mode == "zero" else 12.5)


def test_a_zero_balance_fails_every_session_with_the_credit_error_preview(fake, client):
    fake.configure(balance="zero")
    client.post("/api/sessions", json=body("[[fake:hello]]"))
    record = fake.last_session
    assert record.scenario == "credit_error" and record.expected.error == CREDIT_ERROR
    assert fake.wait_until(lambda: record.status == "stopped")
    previews = [
        p for e in record.events_of("history_delta") for s in e.payload["stages"] for p in s["preview"]
    ]
    assert previews == [{"role": "assistant", "type": "error", "content": CREDIT_ERROR}]


@pytest.mark.parametrize(
    ("mode", "status", "check"),
    [
        ("ok", 200, lambda r: r.json()["user"]["id"] == "usr_fake"),
        ("dead_401", 401, lambda r: r.json() == {"error": "Not authenticated"}),
        ("dead_200", 200, lambda r: r.json() == {}),
        ("rate_limited", 429, lambda r: r.headers["retry-after"] == "3"),
        (
            "checkpoint",
            200,
            lambda r: r.headers["content-type"].startswith("text/html") and "<html" in r.text,
        ),
    ],
)
def test_get_session_modes(fake, client, mode, status, check):
    fake.configure(auth=mode)
    answer = client.get("/api/auth/get-session")
    assert answer.status_code == status and check(answer)
    assert client.get("/api/billing/balance").status_code == 200  # only get-session changes


def test_the_cookie_is_accepted_raw_or_percent_encoded():
    token = "tok.Ab+c/d=="
    with FakeConol(token=token) as server:
        for value in (token, quote(token, safe="")):
            answer = httpx.get(
                server.url("/api/auth/get-session"), headers={"Cookie": f"{COOKIE_NAME}={value}"}
            )
            assert answer.status_code == 200, value
        wrong = httpx.get(server.url("/api/auth/get-session"), headers={"Cookie": f"{COOKIE_NAME}=tok.Ab"})
        assert wrong.status_code == 401


def test_readings_given_at_start_survive_reset_and_bad_ones_are_refused():
    with FakeConol(readings={"framing": "message", "balance": "total"}) as server:
        server.configure(framing="sse")
        server.reset()
        assert (server.config.framing, server.config.balance) == ("message", "total")
    with pytest.raises(ValueError, match="config framing='xml' must be one of sse, ndjson, message"):
        FakeConol(readings={"framing": "xml"})
    with FakeConol() as server, pytest.raises(ValueError, match="config auth='gone' must be one of ok, "):
        server.configure(auth="gone")


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        (
            "stream_events",
            "This answer arrives as stream_event deltas, then once more whole in an assistant event.",
            None,
        ),
        (
            "assistant_final",
            "The previews stop short of the end; the assistant event carries the whole final text.",
            None,
        ),
        (
            "window_reset",
            "Before the window reset comes this half, and after it the other half follows unchanged.",
            None,
        ),
        ("done_flag", 'This session ends with {"done": true}, an event that has no type at all.', None),
        ("credit_error", "", CREDIT_ERROR),
    ],
)
def test_the_reading_scenarios_say_what_a_client_returns(name, text, error):
    scenario = BUILTINS[name]
    assert (scenario.final_text, scenario.error) == (text, error)
    assert scenario.outcome == ("error" if error else "stop")


def test_the_reading_scenarios_send_their_shapes(fake, client):
    for name, kinds in {
        "stream_events": {"stream_event", "assistant"},
        "window_reset": {"history_delta"},
        "done_flag": {"unknown"},
    }.items():
        client.post("/api/sessions", json=body(f"[[fake:{name}]]"))
        record = fake.last_session
        assert fake.wait_until(
            lambda r=record: r.events and (r.status != "running" or r.events[-1].type == "unknown")
        )
        assert kinds <= {e.type for e in record.events}, name
    resets = next(e for e in fake.sessions.values() if e.scenario == "window_reset").events
    assert sum(b'"windowReset":true' in e.raw for e in resets) == 1
