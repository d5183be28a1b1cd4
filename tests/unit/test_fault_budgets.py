"""The pieces behind the fault matrix, unit by unit: the end policy's budgets and polls, the budget
options and their environment variables, and error details from conol's HTTP answers."""

from __future__ import annotations

import httpx
import pytest
from support.chat import MODEL

import litellm_conol
from litellm_conol.client.http_errors import error_for_response
from litellm_conol.client.transport import _parse_created
from litellm_conol.core.config.options import build_request
from litellm_conol.core.protocol.end_policy import EndPolicy, Finish, GiveUp, Poll, Timing, WaitUntil

litellm_conol.register()


# --- the pieces, unit by unit ---------------------------------------------------------------------

BUDGETS = Timing(first_event_timeout=5.0, idle_timeout=10.0)


def test_first_event_budget_gives_up_and_bounds_every_wait():
    policy = EndPolicy(BUDGETS, now=100.0)
    assert policy.next_step(100.0) == WaitUntil(100.2)  # the first poll
    policy.on_poll_started(100.2)
    step = policy.next_step(100.3)
    assert step == WaitUntil(101.3)  # woken by the poll's answer, within the 5 s budget
    policy.on_status(100.4, "running")
    assert policy.next_step(104.99) == Poll()
    step = policy.next_step(105.0)
    assert step == GiveUp("conol sent no event within 5 s of creating the session (first_event_timeout)")


def test_idle_budget_counts_from_the_last_line_even_an_unparsable_one():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(1.0)
    policy.on_event(1.0)
    policy.on_activity(4.0)  # a junk line: the session is alive
    assert policy.next_step(13.9) == Poll()
    step = policy.next_step(14.0)
    assert step == GiveUp(
        "conol sent no event for 10 s while the session was still running (idle_timeout; last status: unknown)"
    )


def test_terminal_status_before_any_event_never_settles_on_nothing():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_status(0.2, "completed")
    step = policy.next_step(3.0)  # far past the 1 s settle window
    assert step == WaitUntil(5.0)  # the first-event budget, not the settle window
    policy.on_activity(3.5)
    policy.on_event(3.5)
    assert policy.next_step(4.0) == WaitUntil(4.5)  # settling from the event
    assert policy.next_step(4.6) == Finish("status terminal, settled")


def test_a_failed_stream_after_terminal_waits_for_the_replay():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(0.1)
    policy.on_event(0.1)
    policy.on_status(0.5, "completed")
    policy.on_stream_closed(failed=True)
    assert policy.next_step(3.0) == WaitUntil(10.1)  # no settle, no "closed after terminal": the idle budget
    policy.on_reconnected()
    policy.on_activity(3.1)
    policy.on_event(3.1)  # the replay arrives
    assert policy.next_step(4.2) == Finish("status terminal, settled")
    # a clean close after terminal is the end at once
    clean = EndPolicy(BUDGETS, now=0.0)
    clean.on_activity(0.1)
    clean.on_event(0.1)
    clean.on_status(0.5, "completed")
    clean.on_stream_closed()
    assert clean.next_step(0.6) == Finish("stream closed, status terminal")


def test_polls_are_still_scheduled_within_the_budget():
    policy = EndPolicy(BUDGETS, now=0.0)
    policy.on_activity(0.0)
    policy.on_event(0.0)
    assert policy.next_step(0.3) == Poll()


def _request(**params):
    return build_request(
        model=MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        api_key="t",
        api_base="http://127.0.0.1:1",
        optional_params=params,
        timeout=None,
    )


def test_budget_defaults_options_and_environment(monkeypatch):
    timing = _request().timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (60.0, 120.0)
    monkeypatch.setenv("CONOL_FIRST_EVENT_TIMEOUT", "7")
    monkeypatch.setenv("CONOL_IDLE_TIMEOUT", "300")
    timing = _request().timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (7.0, 300.0)
    timing = _request(first_event_timeout=1, extra_body={"idle_timeout": "2.5"}).timing
    assert (timing.first_event_timeout, timing.idle_timeout) == (1.0, 2.5)
    monkeypatch.setenv("CONOL_IDLE_TIMEOUT", "never")
    with pytest.raises(litellm_conol.BadRequest, match="CONOL_IDLE_TIMEOUT"):
        _request()
    for bad in (0, -1, 3601, "x"):
        with pytest.raises(litellm_conol.BadRequest, match="first_event_timeout"):
            _request(first_event_timeout=bad)


def test_settle_window_from_the_environment_is_checked_like_the_option(monkeypatch):
    assert _request().timing.settle_window == 1.0
    monkeypatch.setenv("CONOL_SETTLE_WINDOW", "2.5")
    assert _request().timing.settle_window == 2.5
    assert _request(settle_window=0.5).timing.settle_window == 0.5  # the call wins
    for bad in ("soon", "-1", "500"):
        monkeypatch.setenv("CONOL_SETTLE_WINDOW", bad)
        with pytest.raises(litellm_conol.BadRequest, match="CONOL_SETTLE_WINDOW"):
            _request()


def _response(status: int, body: bytes | str, content_type: str = "application/json", **headers: str):
    content = body.encode() if isinstance(body, str) else body
    return httpx.Response(status, content=content, headers={"content-type": content_type, **headers})


def test_error_details_are_short_named_and_masked():
    token = "tok-123"
    cases = [
        (_response(500, '{"error": "database down"}'), "database down"),
        (_response(500, '{"error": {"message": "nested reason"}}'), "nested reason"),
        (
            _response(502, "<html><title>502 Bad Gateway</title><body>nginx</body></html>", "text/html"),
            "502 Bad Gateway",
        ),
        (_response(503, "x" * 5000, "text/plain"), "x" * 200 + "…"),
        (_response(500, f'{{"error": "cookie {token} rejected"}}'), "cookie *** rejected"),
    ]
    for response, detail in cases:
        error = error_for_response(response, "doing it", secrets=(token,))
        assert detail in error.message
        assert token not in error.message
        assert len(error.message) < 300
    limited = error_for_response(_response(429, "{}", **{"retry-after": "9"}), "doing it")
    assert limited.status_code == 429 and limited.headers == {"retry-after": "9"}
    unavailable = error_for_response(_response(503, "{}", **{"retry-after": "4"}), "doing it")
    assert unavailable.status_code == 503 and unavailable.headers == {"retry-after": "4"}
    for code in (401, 403):
        assert "invalid or expired" in error_for_response(_response(code, "{}"), "doing it").message


def test_malformed_create_answers_are_502_saying_what_is_wrong():
    secret_body = '{"echo": "tok-123", "modelDowngraded": false}'
    cases = [
        (_response(201, "<html>oops</html>", "text/html"), "not JSON (text/html"),
        (_response(201, "[1, 2]"), "not an object (got list)"),
        (_response(201, '{"sessionId": 5}'), "unexpected types: sessionId"),
        (_response(201, secret_body), "keys present: ['echo', 'modelDowngraded']"),
    ]
    for response, says in cases:
        with pytest.raises(litellm_conol.UpstreamError) as info:
            _parse_created(response)
        assert info.value.status_code == 502
        assert says in info.value.message
        assert "tok-123" not in info.value.message
    assert _parse_created(_response(201, '{"session": {"id": "s1"}}'))[0] == "s1"
