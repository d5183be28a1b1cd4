"""The fake's agent-error scenarios (fake/_library/_agent_errors): the spec's error event shape
(``{"type": "error", "message": ...}``, docs/protocol.md#stream) before any text, then status ``failed``."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from litellm_conol.fake import FakeConol
from litellm_conol.fake._library import (
    CREDIT_MESSAGE,
    DETERMINISTIC_MESSAGE,
    TRANSIENT_MESSAGE,
    UNEXPLAINED_MESSAGE,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol(ping_interval=0.2) as server:
        yield server


def _events_until_error(client: httpx.Client, sid: str) -> list[dict]:
    events: list[dict] = []
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    url = f"/api/sessions/{sid}/messages"
    with client.stream("GET", url, params={"logDeltas": "1"}, headers=headers) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
            if events and events[-1].get("type") == "error":
                return events
    return events


@pytest.mark.parametrize(
    "scenario, message",
    [
        ("out_of_credits", CREDIT_MESSAGE),
        ("agent_error_unexplained", UNEXPLAINED_MESSAGE),
        ("agent_error_transient", TRANSIENT_MESSAGE),
        ("agent_error_deterministic", DETERMINISTIC_MESSAGE),
    ],
)
def test_an_error_event_before_any_text_then_status_failed(fake, scenario, message):
    fake.reset()
    body = {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": f"Hi [[fake:{scenario}]]"}],
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
        "agentEffort": "low",
    }
    with httpx.Client(base_url=fake.base_url, cookies=fake.cookies, timeout=10.0) as client:
        created = client.post("/api/sessions", json=body)
        assert created.status_code == 201
        sid = created.json()["sessionId"]
        events = _events_until_error(client, sid)
        assert events[-1] == {"type": "error", "message": message}
        previews = [p for e in events for s in e.get("stages", []) for p in s.get("preview", [])]
        assert previews == []  # no text before the failure
        assert fake.wait_until(lambda: fake.last_session.status == "failed", 5.0)
        assert client.get(f"/api/sessions/{sid}").json()["status"] == "failed"
    assert fake.last_session.expected.outcome == "error"
