"""Several conol accounts (docs/team-deployment.md#several-accounts), in process against the fake: an
account out of credits rests until its refill (one session, then refusals without one), balance
polling rests a low account before it fails, and ``litellm.Router`` in code serves from the other
account while it keeps the exhausted one cooled down for the time to its refill. The same requests'
counts in the Prometheus registry (docs/metrics.md). Through the real proxy with two workers and
Redis: tests/e2e/test_accounts_fleet.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
from litellm.router_utils.cooldown_handlers import _async_get_cooldown_deployments_with_debug_info
from prometheus_client import REGISTRY
from support.timing import bound

import litellm_conol
from litellm_conol.fake import BUILTINS, FakeConol
from litellm_conol.reuse.accounts import forget_accounts

litellm.suppress_debug_info = True
litellm_conol.register()
pytestmark = pytest.mark.timeout(90)

MODEL = "conol/claude-haiku-4-5"
DONE = BUILTINS["done"].final_text
REFILL_IN = bound(4)  # seconds until the exhausted account's refill (longer than its first session takes)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeConol]:
    with FakeConol() as fake:
        fake.add_account("empty", daily=0, extra=0, turn_cost=1, refill_in=3600)
        fake.add_account("low", daily=3, extra=0, turn_cost=1, refill_in=3600)
        fake.add_account("drain", daily=1, extra=0, turn_cost=1, refill_in=3600)
        yield fake


@pytest.fixture
def fake(server: FakeConol) -> Iterator[FakeConol]:
    server.reset()
    forget_accounts()
    yield server
    forget_accounts()


def ask(fake: FakeConol, account: str, text: str = "[[fake:done]] hi", **extra: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": text}],
        "api_base": fake.base_url,
        "api_key": fake.account(account).token,
        **extra,
    }


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_an_exhausted_account_costs_one_session_until_its_refill_then_serves_again(fake):
    fake.set_account("empty", refill_in=REFILL_IN)
    refill = fake.account("empty").next_refill
    with pytest.raises(litellm.RateLimitError) as first:
        await litellm.acompletion(**ask(fake, "empty"))
    assert "credit balance is too low" in str(first.value)
    # the Router's cooldown: the whole seconds to the refill (less what the session took)
    retry_after = first.value.litellm_response_headers["retry-after"]
    assert 0 < int(retry_after) <= REFILL_IN
    assert f"this account rests until its refill in {retry_after} s" in str(first.value)
    with pytest.raises(litellm.RateLimitError, match="refused without starting a conol session") as again:
        await litellm.acompletion(**ask(fake, "empty"))
    assert "rests until its refill in" in str(again.value) and "(it is out of credits)" in str(again.value)
    account = fake.account("empty")
    assert (account.sessions, account.credit_errors, account.balance_reads) == (1, 1, 1)

    time.sleep(max(0.0, refill - time.time()) + 0.1)  # the refill itself: nothing to await but time
    response = await litellm.acompletion(**ask(fake, "empty"))
    assert response.choices[0].message.content == DONE
    assert (account.sessions, account.refills, account.credit_errors) == (2, 1, 1)


async def test_balance_polling_rests_a_low_account_before_it_fails_and_a_top_up_ends_the_rest(fake):
    watch = {"balance_poll_interval": 1, "min_balance": 5}
    with pytest.raises(litellm.RateLimitError, match=r"its balance \(3 credits\) is below min_balance"):
        await litellm.acompletion(**ask(fake, "low", **watch))
    with pytest.raises(litellm.RateLimitError, match="refused without starting a conol session"):
        await litellm.acompletion(**ask(fake, "low", **watch))
    account = fake.account("low")
    assert (account.sessions, account.credit_errors, account.balance_reads) == (0, 0, 1)  # one read a second

    fake.set_account("low", daily=20)  # topped up
    time.sleep(1.1)  # the next read is due a second after the first
    with pytest.raises(litellm.RateLimitError):  # the read runs in the background of this request
        await litellm.acompletion(**ask(fake, "low", **watch))
    assert await fake.await_until(lambda: account.balance_reads == 2)
    response = await litellm.acompletion(**ask(fake, "low", **watch))
    assert response.choices[0].message.content == DONE
    assert (account.sessions, account.credit_errors) == (1, 0)


async def test_the_router_serves_from_the_other_account_and_keeps_the_exhausted_one_cooled(fake):
    fake.set_account("empty", refill_in=600)

    def deployment(account: str, order: int) -> dict[str, Any]:
        params = {"model": MODEL, "api_base": fake.base_url, "api_key": fake.account(account).token}
        return {
            "model_name": "pool",
            "litellm_params": {**params, "order": order},
            "model_info": {"id": account},
        }

    router = litellm.Router(model_list=[deployment("empty", 1), deployment("default", 2)], num_retries=2)
    answers = [
        (await router.acompletion(model="pool", messages=[{"role": "user", "content": f"[[fake:done]] {n}"}]))
        .choices[0]
        .message.content
        for n in range(10)
    ]
    assert answers == [DONE] * 10  # every request answered: the first on its retry
    assert (fake.account("empty").sessions, fake.account().sessions) == (1, 10)
    cooled = await _async_get_cooldown_deployments_with_debug_info(router, parent_otel_span=None)
    assert [(model_id, int(info["cooldown_time"])) for model_id, info in cooled] == [("empty", 600)]

    # the same counts in the Prometheus registry
    assert sample("conol_credit_errors_total", model="pool", deployment="empty") == 1
    assert sample("conol_sessions_created_total", model="pool", deployment="empty") == 1
    assert sample("conol_sessions_created_total", model="pool", deployment="default") == 10
    assert (
        sample("conol_account_rest_until_timestamp_seconds", model="pool", deployment="empty") > time.time()
    )
    assert sample("conol_account_balance_credits", model="pool", deployment="empty", part="total") == 0


async def test_a_balance_read_before_the_credit_error_does_not_end_the_rest(fake):
    watch = {"balance_poll_interval": 60, "min_balance": 0}
    await litellm.acompletion(**ask(fake, "drain", **watch))  # read: 1 credit; the turn takes it
    with pytest.raises(litellm.RateLimitError, match="credit balance is too low"):
        await litellm.acompletion(**ask(fake, "drain", **watch))  # the read said 1: it ran, and failed
    with pytest.raises(litellm.RateLimitError, match="refused without starting a conol session"):
        await litellm.acompletion(**ask(fake, "drain", **watch))  # that read is older than the rest
    account = fake.account("drain")
    assert (account.sessions, account.credit_errors, account.balance_reads) == (2, 1, 1)
