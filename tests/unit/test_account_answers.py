"""The account's answers judged (``core.protocol.account``): both dead-token forms, transient answers that
are never "dead" (docs/protocol.md#authentication), and the balance breakdown
(docs/protocol.md#balance)."""

from __future__ import annotations

import json

import pytest

from litellm_conol.core.protocol.account import (
    DAY,
    REST_WHEN_OVERDUE,
    REST_WHEN_UNKNOWN,
    Balance,
    judge_auth,
    read_balance,
    rest_seconds,
)

ALIVE = {"session": {"id": "s", "expiresAt": "2027-01-01T00:00:00.000Z"}, "user": {"id": "u"}}


@pytest.mark.parametrize(
    ("status", "body", "verdict", "detail"),
    [
        (200, json.dumps(ALIVE), "alive", "alive"),
        (401, '{"error":"Not authenticated"}', "dead", "HTTP 401: the token is invalid or expired"),
        (403, "", "dead", "HTTP 403: the token is invalid or expired"),
        (200, "{}", "dead", "HTTP 200 but no session behind the token ({})"),
        (200, "null", "dead", "HTTP 200 but no session behind the token (null)"),
        (200, '{"session":{"id":"s"}}', "dead", "HTTP 200 but no user behind the token (keys: session)"),
        (
            200,
            '{"session":null,"user":null}',
            "dead",
            "HTTP 200 but no user behind the token (keys: session, user)",
        ),
        (
            200,
            "<html>Vercel Security Checkpoint</html>",
            "transient",
            "HTTP 200 but the body is not JSON (39 bytes)",
        ),
        (429, "", "transient", "HTTP 429, Retry-After 3: conol is busy or failing; try again"),
        (502, "bad gateway", "transient", "HTTP 502: conol is busy or failing; try again"),
        (
            200,
            '{"data":{"user":{}}}',
            "unknown",
            "HTTP 200 but neither session nor user in the answer (keys: data)",
        ),
        (200, "[1]", "unknown", "HTTP 200 but the answer is a JSON list"),
        (302, "", "unknown", "GET /api/auth/get-session answered HTTP 302"),
    ],
)
def test_get_session_answers(status, body, verdict, detail):
    answer = judge_auth(status, body.encode(), "3" if status == 429 else None)
    assert (answer.verdict, answer.detail[: len(detail)]) == (verdict, detail)


def test_an_alive_answer_gives_the_expiry_and_no_answer_quotes_the_body():
    assert judge_auth(200, json.dumps(ALIVE).encode()).expires == "2027-01-01T00:00:00.000Z"
    secret = {"session": {"token": "tok-secret-1"}, "user": None}
    assert "tok-secret-1" not in judge_auth(200, json.dumps(secret).encode()).detail


FULL = {
    "userId": "u",
    "dailyCredits": 100,
    "dailyRefilledAt": "2026-10-02T21:01:07.379Z",
    "subscriptionCredits": 0,
    "subscriptionAmount": 0,
    "extraCredits": 429.86,
    "total": 529.86,
    "updatedAt": "2026-10-03T00:00:00.000Z",
}


def test_the_full_balance_breakdown():
    balance = read_balance(FULL)
    assert balance == Balance(529.86, 100, 0, 429.86, "2026-10-02T21:01:07.379Z", 0)
    assert balance.plan == "Free" and not balance.low and balance.has_breakdown
    assert balance.describe() == (
        "total 529.86: daily 100, subscription 0, plan Free, extra 429.86; "
        "daily credits refilled 2026-10-02T21:01:07.379Z"
    )
    subscribed = read_balance({**FULL, "subscriptionAmount": 20, "subscriptionCredits": 5})
    assert subscribed is not None and subscribed.plan == "Subscription"


def test_only_a_total_and_what_is_no_balance():
    only = read_balance({"total": 3})
    assert only is not None and only.low and not only.has_breakdown and only.plan is None
    assert only.describe() == "total 3 (no breakdown: daily, subscription and extra credits absent)"
    for bad in ({"balance": 3}, {"total": "3"}, {"total": True}, {"total": float("inf")}, [3], None):
        assert read_balance(bad) is None, bad
    odd = read_balance({**FULL, "dailyCredits": "100"})
    assert odd is not None and not odd.has_breakdown  # a field of the wrong type is not guessed


# --- the next refill and how long an exhausted account rests (docs/team-deployment.md#several-accounts) ---


def test_the_next_refill_is_a_day_after_the_last():
    balance = read_balance({"total": 0, "dailyRefilledAt": "2026-12-06T01:00:00.000Z"})
    assert balance is not None and balance.next_refill == 1796605200.0  # 2026-12-07T01:00:00Z
    assert read_balance({"total": 0, "dailyRefilledAt": "2026-12-06T01:00:00"}).next_refill == 1796605200.0
    assert read_balance({"total": 0}).next_refill is None  # the spec's {total} shape
    assert read_balance({"total": 0, "dailyRefilledAt": "yesterday"}).next_refill is None


@pytest.mark.parametrize(
    ("refill", "now", "rest"),
    [
        (1000.0, 400.0, 600.0),  # until the refill
        (None, 400.0, REST_WHEN_UNKNOWN),  # the answer does not say: 15 min
        (400.0, 400.0, REST_WHEN_OVERDUE),  # due, not shown yet: a minute
        (100.0, 400.0, REST_WHEN_OVERDUE),
        (400.0 + 3 * DAY, 400.0, DAY),  # never more than a day
    ],
)
def test_an_exhausted_account_rests_until_its_refill_bounded(refill, now, rest):
    assert rest_seconds(refill, now) == rest
    assert (REST_WHEN_UNKNOWN, REST_WHEN_OVERDUE) == (900.0, 60.0)
