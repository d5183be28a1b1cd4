"""The fake conol server, tested over real HTTP (httpx + httpx_sse). Every wait is bounded."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx
import pytest
from httpx_sse import aconnect_sse, connect_sse
from support.timing import bound

from litellm_conol.fake import (
    BUILTINS,
    COOKIE_NAME,
    DOWNGRADE_MODEL,
    FakeConol,
    Preview,
    Scenario,
    SetStatus,
    Sleep,
    ToolCall,
    find_marker,
    long_text,
    snapshots,
)

SSE_HEADERS = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}


WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def body(*texts: str, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": t} for t in texts],
        "timezone": "Europe/Kyiv",
        "agentModel": "deepseek/deepseek-v4-pro",
        "agentEffort": "low",
    }
    data.update(extra)
    return data


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeConol]:
    with FakeConol(ping_interval=0.2) as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(fake_server: FakeConol) -> Iterator[None]:
    fake_server.reset()
    yield
    fake_server.reset()


@pytest.fixture
def fake_http(fake_server: FakeConol) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake_server.base_url, cookies=fake_server.cookies, timeout=5.0) as c:
        yield c


def create(fake_http: httpx.Client, *texts: str, **extra: Any) -> str:
    response = fake_http.post("/api/sessions", json=body(*texts, **extra))
    assert response.status_code == 201, response.text
    return str(response.json()["sessionId"])


@dataclass
class Read:
    lines: list[tuple[float, str]]  # (receive time, non-empty line)
    closed_by_server: bool

    @property
    def events(self) -> list[dict[str, Any]]:
        return [event for _, line in self.lines if (event := parse(line)) is not None]

    @property
    def pings(self) -> int:
        return sum(line == ": ping" for _, line in self.lines)


def parse(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line[6:]) if line.startswith("data: ") else None
    except ValueError:
        return None  # the malformed_line scenario's junk
    return data if isinstance(data, dict) else None


def read_stream(
    fake_http: httpx.Client, sid: str, stop: Callable[[Read], bool], seconds: float = 5.0
) -> Read:
    """Raw SSE lines until ``stop`` says so, ``seconds`` pass, or the server ends the stream."""
    read = Read([], closed_by_server=False)
    deadline = time.monotonic() + seconds
    url = f"/api/sessions/{sid}/messages"
    timeout = httpx.Timeout(5.0, read=2.0)
    with fake_http.stream(
        "GET", url, params={"logDeltas": "1"}, headers=SSE_HEADERS, timeout=timeout
    ) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in resp.headers
        for line in resp.iter_lines():
            if line:
                read.lines.append((time.time(), line))
            if stop(read) or time.monotonic() > deadline:
                return read
    read.closed_by_server = True
    return read


def texts_of(events: list[dict[str, Any]], kind: str = "message") -> list[str]:
    """Every preview snapshot of ``kind`` in order (parts concatenated)."""
    out = []
    for event in events:
        for stage in event.get("stages", []):
            for entry in stage.get("preview", []):
                if entry["type"] == kind:
                    content = entry["content"]
                    out.append(content if isinstance(content, str) else "".join(p["text"] for p in content))
    return out


def logs_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [log for e in events for stage in e.get("stages", []) for log in stage.get("logs", [])]


def has_type(type_: str) -> Callable[[Read], bool]:
    return lambda read: any(e.get("type") == type_ for e in read.events)


def has_commit(read: Read) -> bool:
    return any(log["role"] == "assistant" and log["type"] == "message" for log in logs_of(read.events))


# ---------------------------------------------------------------------------------------------- auth
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/auth/get-session"),
        ("GET", "/api/billing/balance"),
        ("POST", "/api/sessions"),
        ("GET", "/api/sessions/x"),
        ("GET", "/api/sessions/x/messages"),
    ],
)
@pytest.mark.parametrize("cookies", [{}, {COOKIE_NAME: "wrong-token"}])
def test_every_endpoint_needs_the_cookie(
    fake_server: FakeConol, method: str, path: str, cookies: dict[str, str]
) -> None:
    with httpx.Client(base_url=fake_server.base_url, cookies=cookies, timeout=5.0) as c:
        response = c.request(method, path, json=body("hi") if method == "POST" else None)
    assert response.status_code == 401
    assert response.json() == {"error": "Unauthorized"}
    record = fake_server.requests[-1]
    assert (record.authorized, record.cookie_present) == (False, bool(cookies))
    assert "wrong-token" not in json.dumps([r.to_json() for r in fake_server.requests])


def test_get_session_and_balance(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    me = fake_http.get("/api/auth/get-session")
    assert me.status_code == 200 and me.json()["user"]["id"]
    assert fake_http.get("/api/billing/balance").json()["total"] == 12.5
    assert fake_server.token not in json.dumps([r.to_json() for r in fake_server.requests])
    fake_server.configure(revoke_token=True)
    assert fake_http.get("/api/auth/get-session").status_code == 401


# -------------------------------------------------------------------------------------------- create
def test_create_answers_201_and_records_the_session(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    sent = body("hello there", tools=[WEATHER_TOOL])
    response = fake_http.post("/api/sessions", json=sent, headers={"Origin": "https://conol.ai"})
    assert response.status_code == 201
    data = response.json()
    assert data["modelDowngraded"] is False and data["effectiveModel"] == "deepseek/deepseek-v4-pro"
    assert data["premiumEligible"] is True
    session = fake_server.session(data["sessionId"])
    assert session.scenario == "hello" and session.tools == ["get_weather"]
    assert session.messages == ["hello there"] and session.timezone == "Europe/Kyiv"
    assert session.expected.final_text == BUILTINS["hello"].final_text
    request = fake_server.requests[-1]
    assert request.body == sent and request.status == 201 and request.session_id == data["sessionId"]
    assert request.headers["origin"] == "https://conol.ai"
    assert fake_http.get(f"/api/sessions/{data['sessionId']}").json()["status"] == "running"


def test_unknown_model_is_accepted_but_downgraded(fake_http: httpx.Client) -> None:
    data = fake_http.post("/api/sessions", json=body("hi", agentModel="gpt-99-ultra")).json()
    assert data["modelDowngraded"] is True and data["effectiveModel"] == DOWNGRADE_MODEL
    forced = fake_http.post("/api/sessions", json=body("[[fake:downgrade]]")).json()
    assert forced["modelDowngraded"] is True


@pytest.mark.parametrize(
    "bad, error",
    [
        ([1, 2], "body must be a JSON object"),
        ({**body("x"), "source": {"type": "code"}}, "source must be {'type': 'home'} (got type 'code')"),
        (
            {**body("x"), "messages": "hi"},  # [] is an empty create (docs/protocol.md#model-pinning)
            "messages must be a list of {'type': 'text', 'content': <string>}",
        ),
        (
            {**body("x"), "messages": [{"type": "text", "content": 5}]},
            "messages[0] must be {'type': 'text', 'content': <string>}",
        ),
        (
            {**body("x"), "messages": [{"role": "user", "content": "hi"}]},
            "messages[0] must be {'type': 'text', 'content': <string>}",
        ),
        ({**body("x"), "agentModel": ""}, "agentModel must be a non-empty string"),
        (
            {**body("x"), "agentEffort": "minimal"},
            "agentEffort must be one of low, medium, high, max (got 'minimal')",
        ),
        (
            {**body("x"), "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
            "tools[0] must be Anthropic format {name, description, input_schema}",
        ),
        ({**body("x"), "timezone": 3}, "timezone must be an IANA name string"),
    ],
)
def test_malformed_create_body_is_400(fake_http: httpx.Client, bad: Any, error: str) -> None:
    response = fake_http.post("/api/sessions", json=bad)
    assert response.status_code == 400
    assert response.json() == {"error": error}


def test_scenario_selection_by_marker(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    create(fake_http, "first [[fake:done]]", "then [[fake:rewrite]] wins")
    assert fake_server.last_session.scenario == "rewrite"
    create(fake_http, "[[fake:long chars=50 snapshots=5 delay=0]]")
    assert fake_server.last_session.params == {"chars": "50", "snapshots": "5", "delay": "0"}
    assert fake_server.last_session.expected.final_text == long_text(50)
    unknown = fake_http.post("/api/sessions", json=body("[[fake:nope]]"))
    assert unknown.status_code == 400
    assert "nope" in unknown.json()["error"] and "hello" in unknown.json()["error"]
    bad_param = fake_http.post("/api/sessions", json=body("[[fake:long chars=many]]"))
    assert bad_param.status_code == 400 and "chars" in bad_param.json()["error"]


def test_fault_scenarios_on_create(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    limited = fake_http.post("/api/sessions", json=body("[[fake:http_429]]"))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    gateway = fake_http.post("/api/sessions", json=body("[[fake:http_502]]"))
    assert gateway.status_code == 502 and gateway.headers["content-type"].startswith("text/html")
    broken = fake_http.post("/api/sessions", json=body("[[fake:bad_create_body]]"))
    assert broken.status_code == 201
    assert not {"sessionId", "id", "session"} & set(broken.json())
    assert fake_server.sessions == {}
    assert "id" in fake_http.post("/api/sessions", json=body("[[fake:alt_id]]")).json()
    assert "id" in fake_http.post("/api/sessions", json=body("[[fake:nested_id]]")).json()["session"]


# ------------------------------------------------------------------------------------------- streams
def test_snapshots_are_cumulative_and_the_user_turn_comes_first(fake_http: httpx.Client) -> None:
    read = read_stream(fake_http, create(fake_http, "Say hi. [[fake:hello]]"), has_commit)
    hello = BUILTINS["hello"]
    messages = texts_of(read.events)
    distinct = list(dict.fromkeys(messages))  # previews mode "all" repeats unchanged entries
    assert len(distinct) == 6 and distinct[-1] == hello.final_text
    assert all(b.startswith(a) for a, b in itertools.pairwise(distinct))
    assert list(dict.fromkeys(texts_of(read.events, "thinking")))[-1] == hello.final_reasoning
    first_log = read.events[0]["stages"][0]["logs"][0]
    assert first_log["role"] == "user" and first_log["type"] == "message"
    assert first_log["content"].startswith("<system-reminder>")
    assert first_log["content"].endswith("</system-reminder>\nSay hi. [[fake:hello]]")
    assert "Europe/Kyiv" in first_log["content"]
    assert logs_of(read.events)[-1] == {"role": "assistant", "type": "message", "content": hello.final_text}


def test_stream_stays_open_after_terminal_status(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    sid = create(fake_http, "[[fake:hello]]")
    seen_terminal: list[float] = []

    def stop(read: Read) -> bool:
        if not seen_terminal and fake_server.session(sid).terminal_at is not None:
            seen_terminal.append(time.time())
        return bool(seen_terminal) and time.time() - seen_terminal[0] > 1.0

    read = read_stream(fake_http, sid, stop, seconds=5.0)
    assert not read.closed_by_server
    assert fake_http.get(f"/api/sessions/{sid}").json()["status"] == "completed"
    after = [line for t, line in read.lines if t > seen_terminal[0]]
    assert after and set(after) == {": ping"}  # only heartbeats once the agent is done


def test_early_terminal_status_precedes_the_final_snapshot(
    fake_http: httpx.Client, fake_server: FakeConol
) -> None:
    sid = create(fake_http, "[[fake:early_terminal]]")
    read = read_stream(fake_http, sid, lambda r: BUILTINS["early_terminal"].final_text in texts_of(r.events))
    session = fake_server.session(sid)
    assert session.terminal_at is not None and session.last_preview_at is not None
    assert 0.5 < session.last_preview_at - session.terminal_at < bound(0.9)
    assert not has_commit(read) and not any(e["type"] == "done" for e in read.events)


def test_reconnect_replays_and_continues(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    sid = create(fake_http, "[[fake:close_early]]")
    first = read_stream(fake_http, sid, lambda r: False)
    assert first.closed_by_server
    assert fake_server.session(sid).status == "running"
    second = read_stream(fake_http, sid, has_commit)
    first_data = [line for _, line in first.lines if line != ": ping"]
    assert [line for _, line in second.lines if line != ": ping"][: len(first_data)] == first_data
    assert texts_of(second.events)[-1] == BUILTINS["close_early"].final_text
    conns = fake_server.session(sid).connections
    assert fake_server.wait_until(lambda: conns[-1].closed_at is not None)  # disconnects are noticed async
    assert [c.closed_by for c in conns] == ["server", "client"]


def test_close_after_terminal_closes_every_later_connection(
    fake_http: httpx.Client, fake_server: FakeConol
) -> None:
    sid = create(fake_http, "[[fake:close_after_terminal]]")
    first = read_stream(fake_http, sid, lambda r: False)
    assert first.closed_by_server and fake_server.session(sid).status == "completed"
    again = read_stream(fake_http, sid, lambda r: False)
    assert (
        again.closed_by_server and texts_of(again.events)[-1] == BUILTINS["close_after_terminal"].final_text
    )


@pytest.mark.parametrize(
    ("name", "marker"), [("done", "done"), ("done_marker", "[DONE]"), ("error", "error")]
)
def test_termination_signals(fake_http: httpx.Client, name: str, marker: str) -> None:
    def seen(read: Read) -> bool:
        return any(line == "data: [DONE]" for _, line in read.lines) or has_type(marker)(read)

    sid = create(fake_http, f"[[fake:{name}]]")
    read = read_stream(fake_http, sid, seen)
    assert seen(read) and not read.closed_by_server
    if name == "error":
        assert read.events[-1] == {"type": "error", "message": "agent failed: upstream model crashed"}
        time.sleep(0.05)
        assert fake_http.get(f"/api/sessions/{sid}").json()["status"] == "failed"


def test_stale_snapshot_and_malformed_line_are_sent(fake_http: httpx.Client) -> None:
    stale = read_stream(
        fake_http, create(fake_http, "[[fake:out_of_order]]"), lambda r: "today" in str(r.lines)
    )
    assert texts_of(stale.events)[-3:] == ["The sky is", "The sky is blue", "The sky is blue today."]
    junk = read_stream(fake_http, create(fake_http, "[[fake:malformed_line]]"), has_commit)
    assert "data: {not json" in [line for _, line in junk.lines]
    assert texts_of(junk.events)[-1] == BUILTINS["malformed_line"].final_text


def test_tool_call_then_the_agent_waits(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    sid = create(fake_http, "Weather in Paris? [[fake:tool_call]]", tools=[WEATHER_TOOL])
    read = read_stream(fake_http, sid, lambda r: any(log["type"] == "tool_call" for log in logs_of(r.events)))
    call = next(log for log in logs_of(read.events) if log["type"] == "tool_call")
    assert call["content"] == [{"name": "get_weather", "type": "tool_call", "input": {"city": "Paris"}}]
    assert [(c.name, dict(c.arguments)) for c in BUILTINS["tool_call"].tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    time.sleep(0.3)
    assert fake_http.get(f"/api/sessions/{sid}").json()["status"] == "running"


def test_tool_loop_and_echo_compute_their_answer_from_the_request(
    fake_http: httpx.Client, fake_server: FakeConol
) -> None:
    transcript = ("[[fake:tool_loop]] Weather in Paris?", "[Tool result #call_1]: 18°C, sunny\nmore")
    sid = create(fake_http, *transcript, tools=[WEATHER_TOOL])
    assert fake_server.session(sid).expected.final_text == "The weather in Paris is 18°C, sunny."
    assert (
        BUILTINS["tool_loop"].expected_for(*transcript).final_text == "The weather in Paris is 18°C, sunny."
    )
    read = read_stream(fake_http, sid, has_commit)
    assert texts_of(read.events)[-1] == "The weather in Paris is 18°C, sunny."
    echo_sid = create(fake_http, "[[fake:echo]]", "[Assistant]\nexact text ✓")
    assert fake_server.session(echo_sid).expected.final_text == "[Assistant]\nexact text ✓"


def reassemble(events: list[dict[str, Any]]) -> str:
    """Concatenation of each stage's last message snapshot, stages in order of appearance."""
    last_by_stage: dict[str, str] = {}
    for event in events:
        for stage in event.get("stages", []):
            for text in texts_of([{"stages": [{"preview": stage.get("preview", [])}]}]):
                last_by_stage[stage["id"]] = text
    return "".join(last_by_stage.values())


@pytest.mark.parametrize("name", ["multi_stage", "parts", "unicode"])
def test_multi_stage_parts_and_unicode_reassemble(fake_http: httpx.Client, name: str) -> None:
    final = BUILTINS[name].final_text
    read = read_stream(
        fake_http, create(fake_http, f"[[fake:{name}]]"), lambda r: reassemble(r.events) == final
    )
    assert reassemble(read.events) == final
    if name == "multi_stage":  # every event carries every stage so far
        assert [len(e["stages"]) for e in read.events if e["type"] == "history_delta"][-1] == 2


def test_stall_before_first_sends_nothing_unless_pings_are_asked(fake_http: httpx.Client) -> None:
    quiet = read_stream(
        fake_http, create(fake_http, "[[fake:stall_before_first seconds=1.0]]"), lambda r: bool(r.lines)
    )
    assert quiet.lines[0][1].startswith("data: ")  # nothing, not even a ping, came before the user turn
    pinging = read_stream(
        fake_http, create(fake_http, "[[fake:stall_before_first pings=1]]"), lambda r: r.pings >= 2
    )
    assert pinging.events == []


def client_reading(events: list[dict[str, Any]]) -> tuple[str, list[tuple[str, str]], str | None]:
    """A minimal correct reading: per-stage committed text or last snapshot; deduplicated client calls."""
    answer: dict[str, str] = {}
    committed: dict[str, str] = {}
    calls: dict[tuple[str, str], None] = {}
    error = None
    for event in events:
        if event.get("type") == "error":
            error = event["message"]
        for stage in event.get("stages", []):
            for text in texts_of([{"stages": [{"preview": stage.get("preview", [])}]}]):
                answer[stage["id"]] = text
            for log in stage.get("logs", []):
                if log["role"] == "assistant" and log["type"] == "message":
                    committed[stage["id"]] = texts_of([{"stages": [{"preview": [log]}]}])[0]
                if log["type"] == "tool_call":
                    for item in log["content"]:
                        if item["name"] not in {
                            "WebSearch",
                            "Fetch",
                            "SetIntention",
                            "WriteNote",
                            "ReadNote",
                        }:
                            calls[(item["name"], json.dumps(item["input"], sort_keys=True))] = None
    text = "".join(committed.get(sid, t) for sid, t in answer.items())
    text += "".join(t for sid, t in committed.items() if sid not in answer)
    return text, list(calls), error


QUICK_PARAMS = {"stall_before_first": " seconds=0.3", "stall_mid": " seconds=0.3", "huge_event": " mb=0.2"}


async def test_every_builtin_stream_matches_its_expectations(fake_server: FakeConol) -> None:
    # the other clients' event shapes have their own test (tests/fake/test_fake_readings.py)
    readings = {"stream_events", "assistant_final", "window_reset", "done_flag", "credit_error"}
    names = [n for n, s in BUILTINS.items() if s.creates_session and n != "echo" and n not in readings]

    async def play(ac: httpx.AsyncClient, name: str) -> None:
        text = f"[[fake:{name}{QUICK_PARAMS.get(name, '')}]]"
        created = await ac.post("/api/sessions", json=body(text, tools=[WEATHER_TOOL]))
        sid = created.json().get("sessionId") or created.json().get("id") or created.json()["session"]["id"]
        expected = fake_server.session(sid).expected
        want = (
            expected.final_text,
            [(c.name, json.dumps(dict(c.arguments), sort_keys=True)) for c in expected.tool_calls],
            expected.error,
        )
        for _ in range(3):  # a server close is not the end: reconnect, the replay resends everything
            events: list[dict[str, Any]] = []
            async with aconnect_sse(ac, "GET", f"/api/sessions/{sid}/messages") as source:
                async for sse in source.aiter_sse():
                    if (event := parse("data: " + sse.data)) is not None:
                        events.append(event)
                    if client_reading(events) == want:
                        return
        raise AssertionError(f"{name}: {client_reading(events)} != {want}")

    async with httpx.AsyncClient(
        base_url=fake_server.base_url, cookies=fake_server.cookies, timeout=10
    ) as ac:
        async with asyncio.timeout(15):
            await asyncio.gather(*(play(ac, name) for name in names))


# -------------------------------------------------------------------------------------------- faults
def test_fault_config_over_http(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    control = httpx.Client(base_url=fake_server.base_url, timeout=5.0)  # /_fake needs no cookie
    assert control.post("/_fake/config", json={"create_status": 503}).json()["create_status"] == 503
    assert fake_http.post("/api/sessions", json=body("hi")).status_code == 503
    control.post("/_fake/config", json={"create_status": 429, "create_fail_times": 1})
    limited = fake_http.post("/api/sessions", json=body("hi"))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    sid = create(fake_http, "hi")  # the one injected failure is used up
    control.post("/_fake/config", json={"status_fail_every": 2, "refuse_streams": True})
    codes = [fake_http.get(f"/api/sessions/{sid}").status_code for _ in range(4)]
    assert codes == [500, 200, 500, 200] and fake_server.session(sid).status_polls == 4
    assert fake_http.get(f"/api/sessions/{sid}/messages").status_code == 503
    assert control.post("/_fake/config", json={"nope": 1}).status_code == 400
    assert control.post("/_fake/config", json={"create_status": "x"}).status_code == 400
    control.post("/_fake/reset")
    assert control.get("/_fake/config").json()["create_status"] is None
    assert control.get("/_fake/sessions").json() == {"sessions": []}
    control.close()


def test_status_flaky_scenario(fake_http: httpx.Client) -> None:
    sid = create(fake_http, "[[fake:status_flaky]]")
    assert [fake_http.get(f"/api/sessions/{sid}").status_code for _ in range(3)] == [500, 200, 500]
    assert fake_http.get("/api/sessions/unknown").status_code == 404


def test_fault_config_from_python(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    fake_server.configure(create_status=401)
    assert fake_http.post("/api/sessions", json=body("hi")).status_code == 401
    fake_server.reset()
    assert fake_http.post("/api/sessions", json=body("hi")).status_code == 201


# ------------------------------------------------------------------------------------------- records
def test_client_disconnect_is_recorded_promptly(fake_server: FakeConol) -> None:
    with (
        FakeConol(ping_interval=5.0) as slow,
        httpx.Client(base_url=slow.base_url, cookies=slow.cookies) as c,
    ):
        sid = create(c, "[[fake:never_terminal]]")
        read = read_stream(c, sid, lambda r: len(texts_of(r.events)) == 5)
        left_at = time.time()
        assert slow.wait_until(lambda: slow.session(sid).connections[0].closed_at is not None, timeout=3.0)
        conn = slow.session(sid).connections[0]
        assert conn.closed_by == "client" and conn.closed_at is not None
        assert conn.closed_at - left_at < bound(0.5)  # not at the next ping, 5 s later
        assert conn.events_sent >= len(read.events)
        remote = c.get(f"/_fake/sessions/{sid}").json()
        assert remote["connections"][0]["closed_by"] == "client"


def test_records_over_http(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    sid = create(fake_http, "[[fake:done]]")
    read_stream(fake_http, sid, has_type("done"))
    fake_http.get(f"/api/sessions/{sid}")
    control = httpx.Client(base_url=fake_server.base_url, timeout=5.0)
    requests = control.get("/_fake/requests").json()["requests"]
    assert [r["method"] + " " + r["path"] for r in requests] == [
        "POST /api/sessions",
        f"GET /api/sessions/{sid}/messages",
        f"GET /api/sessions/{sid}",
    ]
    assert (
        requests[1]["query"] == {"logDeltas": "1"} and requests[1]["headers"]["accept-encoding"] == "identity"
    )
    record = control.get(f"/_fake/sessions/{sid}").json()
    assert record["scenario"] == "done" and record["status"] == "complete" and record["status_polls"] == 1
    assert [s for _, s in record["status_history"]] == ["pending", "running", "complete"]
    assert record["events"][-1]["type"] == "done" and record["events"][-1]["data"] == {"type": "done"}
    assert record["expected"]["final_text"] == BUILTINS["done"].final_text
    assert record["connections"][0]["events_sent"] == len(record["events"])
    names = [s["name"] for s in control.get("/_fake/scenarios").json()["scenarios"]]
    assert set(BUILTINS) <= set(names)
    control.close()


# ------------------------------------------------------------------------------------ user scenarios
def test_user_scenarios_and_default(fake_http: httpx.Client, fake_server: FakeConol) -> None:
    mine = Scenario("mine", [*snapshots("Custom answer.", 3, 0.01), Sleep(0.05), SetStatus("completed")])
    assert mine.final_text == "Custom answer." and mine.outcome == "stop"
    fake_server.add_scenario(mine)
    fake_server.set_default_scenario("mine")
    sid = create(fake_http, "no marker here")
    assert fake_server.session(sid).scenario == "mine"
    read = read_stream(fake_http, sid, lambda r: "Custom answer." in texts_of(r.events))
    assert texts_of(read.events) == [
        p.text for p in snapshots("Custom answer.", 3, 0) if isinstance(p, Preview)
    ]
    fake_server.reset()
    assert "mine" not in fake_server.scenarios and fake_server.default_scenario == "hello"


def test_dsl_helpers() -> None:
    assert [s.text for s in snapshots("abcdef", 3, 0) if isinstance(s, Preview)] == ["ab", "abcd", "abcdef"]
    assert find_marker(["x [[fake:long chars=5 delay=0]] y"]) == ("long", {"chars": "5", "delay": "0"})
    assert find_marker(["plain"]) is None
    tool = Scenario("t", [ToolCall("f", {"a": 1}), ToolCall("f", {"a": 1}), ToolCall("WebSearch", {"q": 1})])
    assert [c.name for c in tool.tool_calls] == ["f"] and tool.content is None
    assert tool.finish_reason == "tool_calls"
    assert BUILTINS["text_and_tool"].final_text == "Let me check the weather."
    assert BUILTINS["builtin_websearch"].tool_calls == () and BUILTINS["never_terminal"].outcome == "timeout"


# -------------------------------------------------------------------------------------- performance
def test_long_scenario_is_not_a_bottleneck(fake_http: httpx.Client) -> None:
    sid = create(fake_http, "[[fake:long chars=100000 snapshots=1000 delay=0]]")
    started = time.monotonic()
    with connect_sse(fake_http, "GET", f"/api/sessions/{sid}/messages", params={"logDeltas": "1"}) as source:
        last = ""
        for sse in source.iter_sse():
            data = json.loads(sse.data)
            if data["type"] == "done" or time.monotonic() - started > 30:
                break
            last = (texts_of([data]) or [last])[-1]
    elapsed = time.monotonic() - started
    assert last == long_text(100_000)
    assert elapsed < bound(15.0), f"{elapsed:.1f} s for ~50 MB of snapshots"


def test_huge_event(fake_http: httpx.Client) -> None:
    sid = create(fake_http, "[[fake:huge_event]]")
    read = read_stream(fake_http, sid, has_type("done"), seconds=10.0)
    final = texts_of(read.events)[-1]
    assert len(final.encode()) >= 5 * 1024 * 1024 and final == BUILTINS["huge_event"].final_text


async def test_200_concurrent_streams(fake_server: FakeConol) -> None:
    # aiohttp, not httpx, as the client here: httpcore's pool assignment is O(n^2) in open connections
    # (encode/httpcore#1035), which makes 200 httpx streams take ~10 s and would measure the client
    connector = aiohttp.TCPConnector(limit=400)
    started = time.monotonic()
    async with aiohttp.ClientSession(
        fake_server.base_url, cookies=fake_server.cookies, connector=connector
    ) as http:

        async def one(i: int) -> str:
            async with http.post("/api/sessions", json=body(f"#{i} [[fake:done]]")) as created:
                sid = (await created.json())["sessionId"]
            text = ""
            async with http.get(f"/api/sessions/{sid}/messages", headers=SSE_HEADERS) as stream:
                async for raw in stream.content:
                    event = parse(raw.decode().rstrip("\n"))
                    if event is None:
                        continue
                    if event["type"] == "done":
                        return text
                    text = (texts_of([event]) or [text])[-1]
            return "closed"

        async with asyncio.timeout(30):
            results = await asyncio.gather(*(one(i) for i in range(200)))
    assert results == [BUILTINS["done"].final_text] * 200
    assert time.monotonic() - started < bound(5.0)  # each session lasts ~0.3 s; 200 at once must not queue


# ------------------------------------------------------------------------------- ways of running it
async def test_async_mode_on_the_test_loop() -> None:
    async with FakeConol(token="async-token") as server:
        async with httpx.AsyncClient(base_url=server.base_url, cookies=server.cookies, timeout=5) as ac:
            assert (await ac.get("/api/billing/balance")).json()["total"] == 12.5
            sid = (await ac.post("/api/sessions", json=body("[[fake:done_marker]]"))).json()["sessionId"]
            async with asyncio.timeout(5), aconnect_sse(ac, "GET", f"/api/sessions/{sid}/messages") as source:
                data = [sse.data async for sse in _until_done_marker(source.aiter_sse())]
        assert data[-1] == "[DONE]" and server.requests[0].authorized


async def _until_done_marker(events: Any) -> Any:
    async for sse in events:
        yield sse
        if sse.data == "[DONE]":
            return


def test_pytest_plugin_fixture(conol_fake: FakeConol) -> None:
    assert conol_fake.requests == [] and conol_fake.sessions == {}
    with httpx.Client(base_url=conol_fake.base_url, cookies=conol_fake.cookies, timeout=5) as c:
        assert c.get("/api/billing/balance").status_code == 200
