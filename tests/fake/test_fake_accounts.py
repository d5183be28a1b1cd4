"""The fake's accounts (docs/protocol.md#balance): one fake serves several tokens, each its own account
with its own balance and daily refill; a turn the account cannot pay runs as conol's credit error; the
fake counts what each account did, for tests comparing with a client's own counts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from litellm_conol.fake import COOKIE_NAME, FakeConol
from litellm_conol.fake._account import DAY

pytestmark = pytest.mark.timeout(60)


def create_body(*texts: str) -> dict[str, Any]:
    return {
        "source": {"type": "home"},
        "messages": [{"type": "text", "content": t} for t in texts],
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
        "agentEffort": "low",
    }


@pytest.fixture(scope="module")
def server() -> Iterator[FakeConol]:
    with FakeConol() as fake:
        fake.add_account("team-b", daily=3, extra=0, turn_cost=1)
        fake.add_account("team-c", token="token-c", daily=0, extra=0, turn_cost=1, refill_in=3600)
        yield fake


@pytest.fixture
def fake(server: FakeConol) -> FakeConol:
    server.reset()
    return server


def client(fake: FakeConol, token: str) -> httpx.Client:
    return httpx.Client(base_url=fake.base_url, cookies={COOKIE_NAME: token}, timeout=10)


def create(fake: FakeConol, token: str, text: str = "[[fake:done]] hi") -> str:
    with client(fake, token) as http:
        response = http.post("/api/sessions", json=create_body(text))
    assert response.status_code == 201, response.text
    return str(response.json()["sessionId"])


def test_each_token_is_its_own_account_and_others_are_refused(fake: FakeConol) -> None:
    tokens = {"default": fake.token, "team-b": "fake-conol-token-team-b", "team-c": "token-c"}
    for token in tokens.values():
        with client(fake, token) as http:
            assert http.get("/api/auth/get-session").status_code == 200
    with client(fake, "not-a-token") as http:
        assert http.get("/api/auth/get-session").status_code == 401
    assert [(r.account, r.status) for r in fake.requests] == [
        ("default", 200),
        ("team-b", 200),
        ("team-c", 200),
        (None, 401),
    ]
    assert list(fake.accounts) == ["default", "team-b", "team-c"]
    assert "token-c" not in repr(fake.account("team-c"))


def test_each_account_answers_its_own_balance(fake: FakeConol) -> None:
    with client(fake, "token-c") as http:
        balance = http.get("/api/billing/balance").json()
    account = fake.account("team-c")
    assert (balance["dailyCredits"], balance["extraCredits"], balance["total"]) == (0, 0, 0)
    # the daily refill is a day after the last one: an hour from now
    assert account.next_refill == pytest.approx(account.refilled_at + DAY)
    assert balance["dailyRefilledAt"].startswith(
        time.strftime("%Y-%m-%dT%H:%M", time.gmtime(account.refilled_at))
    )
    with client(fake, fake.token) as http:
        assert http.get("/api/billing/balance").json()["total"] == 12.5  # the default account
    assert (account.balance_reads, fake.account().balance_reads) == (1, 1)


def test_turns_take_credits_until_the_account_cannot_pay_then_the_credit_error_runs(fake: FakeConol) -> None:
    token = "fake-conol-token-team-b"
    sessions = [create(fake, token) for _ in range(4)]
    scenarios = [fake.session(sid).scenario for sid in sessions]
    assert scenarios == ["done", "done", "done", "credit_error"]
    account = fake.account("team-b")
    assert (account.total, account.sessions, account.credit_errors) == (0, 4, 1)
    assert {fake.session(sid).account for sid in sessions} == {"team-b"}
    # the default account has not paid anything
    create(fake, fake.token)
    assert (fake.account().total, fake.account().credit_errors) == (12.5, 0)


def test_a_follow_up_is_a_turn_too(fake: FakeConol) -> None:
    token = "fake-conol-token-team-b"
    sid = create(fake, token, "[[fake:echo]] one")
    with client(fake, token) as http:
        for text in ("two", "three", "four"):
            body = {"messages": [{"type": "text", "content": text}], "timezone": "UTC"}
            assert http.post(f"/api/sessions/{sid}/messages", json=body).status_code == 202
    account = fake.account("team-b")
    assert (account.sessions, account.followups, account.credit_errors) == (1, 3, 1)
    assert fake.session(sid).scenario == "credit_error"  # the fourth turn could not be paid


def test_the_daily_credits_come_back_at_the_refill(fake: FakeConol) -> None:
    assert create(fake, "token-c") and fake.last_session.scenario == "credit_error"
    fake.set_account("team-c", refill_in=-1)  # the refill was due a second ago
    create(fake, "token-c")
    account = fake.account("team-c")
    assert fake.last_session.scenario == "done"
    assert (account.refills, account.daily, account.credit_errors) == (1, 10 - 1, 1)


def test_reset_restores_every_account_as_it_was_added(fake: FakeConol) -> None:
    create(fake, "token-c")
    fake.set_account("team-c", daily=5)
    fake.reset()
    account = fake.account("team-c")
    assert (account.daily, account.sessions, account.credit_errors) == (0, 0, 0)
    assert account.next_refill - time.time() == pytest.approx(3600, abs=5)


def test_accounts_over_the_control_endpoints(fake: FakeConol) -> None:
    with httpx.Client(base_url=fake.base_url, timeout=10) as http:
        added = http.post("/_fake/accounts", json={"name": "team-d", "daily": 1, "turn_cost": 1})
        assert added.status_code == 200, added.text
        token = added.json()["token"]
        changed = http.post("/_fake/accounts", json={"name": "team-d", "extra": 4})
        assert changed.json()["total"] == 5
        bad = http.post("/_fake/accounts", json={"name": "team-d", "colour": 1})
        assert bad.status_code == 400 and "unknown account keys ['colour']" in bad.text
        taken = http.post("/_fake/accounts", json={"name": "team-e", "token": token})
        assert taken.status_code == 400 and "another account's" in taken.text
        listed = http.get("/_fake/accounts").json()["accounts"]
    assert [a["name"] for a in listed] == ["default", "team-b", "team-c", "team-d"]
    create(fake, token)
    assert fake.account("team-d").sessions == 1
