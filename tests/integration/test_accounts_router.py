"""The Router's retries and cooldowns over a pool of conol accounts, in process against the fake, on
each LiteLLM line (docs/team-deployment.md#several-accounts, docs/litellm-versions.md#the-routers-cooldowns-on-1110):

* the shipped team config's ``router_settings`` and ``chat`` group as the proxy builds its Router:
  the exhausted account is tried once (its credit error), the low one once (refused at its first
  balance read), and every request is answered by the full one without waiting out a retry-after;
* the proxy's way of calling the Router, one logging object shared by a request's attempts: a
  retry that meets a resting account cools it too (LiteLLM 1.110 tells a retry's failure by the
  attempt mark the handler sets; 1.108 cools on a request's first failure only).

Picks are made deterministic with LiteLLM's ``order`` (lowest first among the deployments not cooled),
so a retry goes back to a failing deployment whenever the Router has not cooled it. Through the real
proxy with two workers and Redis: tests/e2e/test_accounts_fleet.py.
"""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Iterator
from typing import Any

import litellm
import pytest
import yaml
from litellm.integrations.custom_logger import CustomLogger
from litellm.router_utils.cooldown_handlers import _async_get_cooldown_deployments_with_debug_info
from prometheus_client import REGISTRY
from support.model_map import model_map_kept
from support.paths import ROOT

import litellm_conol
from litellm_conol.fake import BUILTINS, FakeConol
from litellm_conol.provider.litellm_compat import litellm_version
from litellm_conol.reuse.accounts import forget_accounts

litellm.suppress_debug_info = True
litellm_conol.register()
pytestmark = pytest.mark.timeout(90)

DONE = BUILTINS["done"].final_text
# Under a minute, so that LiteLLM would sleep it out before a retry if it saw no other deployment
# to go to (a retry-after of at most 60 s is its retry delay): the refill is what nobody may wait for.
REFILL_IN = 45
TOKENS = {  # the team config's environment variables, and the account each names
    "os.environ/CONOL_SESSION_TOKEN": "exhausted",
    "os.environ/CONOL_SESSION_TOKEN_B": "low",
    "os.environ/CONOL_SESSION_TOKEN_C": "full",
}
ORDER = {"chat-a": 1, "chat-b": 2, "chat-c": 3}


@pytest.fixture(scope="module", autouse=True)
def _model_map() -> Iterator[None]:
    with model_map_kept():  # the team config's Routers write its model_info into LiteLLM's map
        yield


@pytest.fixture(scope="module")
def server() -> Iterator[FakeConol]:
    with FakeConol() as fake:
        fake.add_account("exhausted", daily=0, extra=0, turn_cost=1, refill_in=3600)
        fake.add_account("low", daily=3, extra=0, turn_cost=1, refill_in=3600)
        fake.add_account("full", daily=1000, daily_allotment=1000, turn_cost=1)
        yield fake


@pytest.fixture
def fake(server: FakeConol) -> Iterator[FakeConol]:
    server.reset()
    forget_accounts()
    server.set_account("exhausted", refill_in=REFILL_IN)
    yield server
    forget_accounts()


def team_router(fake: FakeConol) -> litellm.Router:
    """The Router the proxy builds from deploy/team_config.yaml (its model_list and router_settings),
    on the fake's accounts; balance polling off on the exhausted account (its credit error is what is
    watched), and ``order`` on the ``chat`` deployments."""
    config = yaml.safe_load((ROOT / "deploy" / "team_config.yaml").read_text())
    model_list = []
    for entry in config["model_list"]:
        params = dict(entry["litellm_params"])
        params |= {"api_key": fake.account(TOKENS[params["api_key"]]).token, "api_base": fake.base_url}
        deployment = entry["model_info"].get("id")
        if deployment in ORDER:
            params["order"] = ORDER[deployment]
        if deployment == "chat-a":
            params["balance_poll_interval"] = 0
        model_list.append({**entry, "litellm_params": params})
    return litellm.Router(model_list=model_list, **config["router_settings"])


def ask(n: int, *, shared_logging: bool = False) -> dict[str, Any]:
    """Request ``n`` to ``chat``; ``shared_logging``: with the one logging object every attempt of it
    logs on, as the proxy hands the Router (``function_setup``, then ``litellm_logging_obj``)."""
    data: dict[str, Any] = {
        "model": "chat",
        "messages": [{"role": "user", "content": f"[[fake:done]] request {n}"}],
        "litellm_call_id": str(uuid.uuid4()),
    }
    if shared_logging:
        logging_obj, data = litellm.utils.function_setup(
            original_function="acompletion",
            rules_obj=litellm.utils.Rules(),
            start_time=datetime.datetime.now(),
            **data,
        )
        data["litellm_logging_obj"] = logging_obj
    return data


def refused(deployment: str) -> float:
    labels = {"model": "chat", "deployment": deployment, "reason": "account_rest"}
    return REGISTRY.get_sample_value("conol_requests_refused_total", labels) or 0.0


async def cooled(router: litellm.Router) -> dict[str, int]:
    active = await _async_get_cooldown_deployments_with_debug_info(router, parent_otel_span=None)
    return {model_id: int(info["cooldown_time"]) for model_id, info in active}


async def test_the_team_config_tries_each_resting_account_once_and_the_full_one_answers_every_request(fake):
    router = team_router(fake)
    before = {deployment: refused(deployment) for deployment in ORDER}
    started = time.monotonic()
    answers = [(await router.acompletion(**ask(n))).choices[0].message.content for n in range(10)]
    elapsed = time.monotonic() - started

    assert answers == [DONE] * 10
    exhausted, low, full = (fake.account(name) for name in ("exhausted", "low", "full"))
    # each resting account failed one attempt and was cooled at once: the exhausted one its credit
    # error (one session), the low one its refusal at the first balance read (none); never again
    assert (exhausted.sessions, exhausted.credit_errors, low.sessions, low.balance_reads) == (1, 1, 0, 1)
    assert {d: refused(d) - before[d] for d in ORDER} == {"chat-a": 0, "chat-b": 1, "chat-c": 0}
    assert full.sessions == 10
    cooldowns = await cooled(router)
    assert sorted(cooldowns) == ["chat-a", "chat-b"]
    assert 0 < cooldowns["chat-a"] <= REFILL_IN  # until the refill
    assert 3600 - 60 < cooldowns["chat-b"] <= 3600  # until the low account's refill, an hour away
    assert elapsed < REFILL_IN, "a retry waited out the exhausted account's retry-after"


async def test_through_one_shared_logging_object_a_retry_that_meets_a_resting_account_cools_it(fake):
    router = team_router(fake)
    before = refused("chat-b")
    response = await router.acompletion(**ask(0, shared_logging=True))

    assert response.choices[0].message.content == DONE
    assert (fake.account("exhausted").credit_errors, fake.account("full").sessions) == (1, 1)
    # the first attempt met the exhausted account; its retry the low one, refused without a session.
    # LiteLLM 1.110 cools the low one at that retry's failure (the handler marks each attempt, as
    # LiteLLM's own providers do), so the next retry goes to the full account. 1.108 cools only on a
    # request's first failure: the low account refuses all three retries, then the attempts of the
    # next `order` level (itself: one and three retries), and only the last level answers
    expected = 1 if litellm_version()[:2] >= (1, 110) else 3 + 4
    assert refused("chat-b") - before == expected
    assert ("chat-b" in await cooled(router)) == (litellm_version()[:2] >= (1, 110))


async def test_the_handler_marks_each_attempt_as_litellms_own_providers_do_without_the_token(
    fake, monkeypatch
):
    """``Logging.pre_call`` at every attempt: what the Router's mark is read from, and what LiteLLM's
    pre-call logging (``log_pre_api_call``) hands every logging integration."""
    marks: list[tuple[str, str]] = []

    class Marks(CustomLogger):  # type: ignore[misc]
        def log_pre_api_call(self, model: str, messages: Any, kwargs: dict[str, Any]) -> None:
            marks.append((kwargs["api_key"], kwargs["litellm_params"]["api_base"]))

    for name in ("callbacks", "input_callback", "success_callback", "failure_callback"):
        monkeypatch.setattr(litellm, name, list(getattr(litellm, name)))
    litellm.callbacks.append(Marks())
    response = await team_router(fake).acompletion(**ask(0))

    assert response.choices[0].message.content == DONE
    # three attempts: the exhausted account, the low one, the full one; the token in none
    assert marks == [("", fake.base_url)] * 3
