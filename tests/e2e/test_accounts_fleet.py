"""Three conol accounts behind one model, through the real proxy (docs/team-deployment.md#several-accounts):
the shipped team config's ``chat`` group (three deployments, one per account) with two workers, a
redis-server for the Router's cooldowns and our shared state, LiteLLM's ``prometheus`` callback and a
test callback recording the standard logging payload (``support.spend_logger``), against one fake
serving three accounts:

* ``exhausted`` (chat-a): no credits, its daily refill ``REFILL_IN`` seconds away, balance polling off:
  what its credit error does is what is watched;
* ``low`` (chat-b): 3 credits, below the config's ``min_balance`` (10), balance polling on;
* ``full`` (chat-c): plenty.

50 requests: every one answered; the exhausted account costs its credit error (one session; one per
worker at most when both meet it at once) and nothing more until its refill, then serves again; the
low account is rested by its balance read before any request runs on it (one read for the whole
fleet). ``/metrics`` through the proxy says exactly what the fake counted, and every request's
logging payload carries conol's fields. One proxy for the module.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from support.faults import AUTH
from support.paths import ROOT
from support.proxyproc import ProxyProcess
from support.redisproc import RedisServer, require_redis_server
from support.timing import bound
from support.usage_log import usage_rows

from litellm_conol.fake import BUILTINS, FakeConol

pytestmark = pytest.mark.timeout(300)

WORKERS = 2
WORKER_ARGS = ["--num_workers", str(WORKERS), "--timeout_worker_healthcheck", "60"]
DEPLOYMENTS = {"exhausted": "chat-a", "low": "chat-b", "full": "chat-c"}
REQUESTS, AT_ONCE = 50, 10
# seconds from the start of the 50 requests to the exhausted account's refill (the workload takes
# 7 s on a quiet machine, over 12 s under three CI workers)
REFILL_IN = bound(30)
DONE = BUILTINS["done"].final_text
PNG = b"\x89PNG\r\n\x1a\n" + b"fleet-image"
IN_FLIGHT = 1.0  # seconds from a request's check of the rest to its create: what a loaded worker may take


@dataclass
class Fleet:
    fake: FakeConol
    redis: RedisServer
    proxy: ProxyProcess
    usage_log: Path
    payload_log: Path
    scraped: str = ""


def team_config() -> dict[str, Any]:
    """The shipped team config, with Redis for the Router and the test's payload recorder; balance
    polling off on the exhausted account's deployment."""
    config: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / "team_config.yaml").read_text())
    for deployment in config["model_list"]:
        if deployment["model_info"].get("id") == "chat-a":
            deployment["litellm_params"]["balance_poll_interval"] = 0
    config["router_settings"] |= {
        "redis_host": "os.environ/REDIS_HOST",
        "redis_port": "os.environ/REDIS_PORT",
    }
    config["litellm_settings"]["callbacks"].append("support.spend_logger.spend_recorder")
    return config


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    binary = require_redis_server()
    directory = tmp_path_factory.mktemp("accounts")
    with contextlib.ExitStack() as stack:
        fake = stack.enter_context(FakeConol())
        tokens = {
            "exhausted": fake.add_account("exhausted", daily=0, extra=0, turn_cost=1, refill_in=3600),
            "low": fake.add_account("low", daily=3, extra=0, turn_cost=1),
            "full": fake.add_account("full", daily=1000, daily_allotment=1000, turn_cost=1),
        }
        redis_server = RedisServer(binary, directory / "redis.log")
        stack.callback(redis_server.stop)
        redis_server.wait_ready()
        path = directory / "config.yaml"
        path.write_text(yaml.safe_dump(team_config()))
        multiproc = directory / "prometheus"
        multiproc.mkdir()
        env = {
            "CONOL_API_BASE": fake.base_url,
            "CONOL_SESSION_TOKEN": tokens["exhausted"],
            "CONOL_SESSION_TOKEN_B": tokens["low"],
            "CONOL_SESSION_TOKEN_C": tokens["full"],
            "REDIS_HOST": "127.0.0.1",
            "REDIS_PORT": str(redis_server.port),
            "CONOL_USAGE_LOG": str(directory / "usage.jsonl"),
            "SPEND_LOG_FILE": str(directory / "payload.jsonl"),
            "PROMETHEUS_MULTIPROC_DIR": str(multiproc),  # the proxy's own: never another proxy's
        }
        proxy = ProxyProcess(config=path, env=env, log_path=directory / "proxy.log", args=WORKER_ARGS)
        stack.callback(proxy.stop)
        proxy.wait_ready(timeout=bound(150))
        proxy.wait_for_workers(WORKERS, timeout=bound(150))
        yield Fleet(fake, redis_server, proxy, directory / "usage.jsonl", directory / "payload.jsonl")
        assert not any(token in proxy.log() for token in tokens.values())


def body(n: int) -> dict[str, Any]:
    """Request ``n``: most ask once; every fifth carries an image (an upload); every tenth is the
    second turn of a conversation (a follow-up where its first turn's account serves it)."""
    text = f"[[fake:done]] request {n}"
    if n % 5 == 4:
        image = "data:image/png;base64," + base64.b64encode(PNG + str(n).encode()).decode()
        content: Any = [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": image}}]
        return {"model": "chat", "messages": [{"role": "user", "content": content}]}
    return {"model": "chat", "messages": [{"role": "user", "content": text}]}


async def post(base_url: str, payload: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=bound(60)) as client:  # a connection of its own: both workers
        return await client.post(f"{base_url}/v1/chat/completions", json=payload, headers=AUTH)


async def conversation(base_url: str, n: int) -> list[httpx.Response]:
    first = {"role": "user", "content": f"[[fake:echo]] conversation {n}"}
    one = await post(base_url, {"model": "chat", "messages": [first]})
    if one.status_code != 200:
        return [one]
    answer = {"role": "assistant", "content": one.json()["choices"][0]["message"]["content"]}
    two = await post(
        base_url, {"model": "chat", "messages": [first, answer, {"role": "user", "content": "more"}]}
    )
    return [one, two]


async def workload(base_url: str) -> list[httpx.Response]:
    slots = asyncio.Semaphore(AT_ONCE)

    async def one(n: int) -> list[httpx.Response]:
        async with slots:
            return await (conversation(base_url, n) if n % 10 == 9 else _single(base_url, n))

    async def _single(base_url: str, n: int) -> list[httpx.Response]:
        return [await post(base_url, body(n))]

    done = await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(REQUESTS))), timeout=bound(120))
    return [response for responses in done for response in responses]


def scrape(fleet: Fleet) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``/metrics`` through the proxy: conol's samples by (name, labels)."""
    response = httpx.get(
        f"{fleet.proxy.base_url}/metrics", headers=AUTH, timeout=bound(30), follow_redirects=True
    )
    assert response.status_code == 200, response.text
    fleet.scraped = response.text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(fleet.scraped)
        for sample in family.samples
        if sample.name.startswith("conol_")
    }


def counted(samples: dict[Any, float], name: str, deployment: str, **extra: str) -> float:
    labels = tuple(sorted({"model": "chat", "deployment": deployment, **extra}.items()))
    return samples.get((name, labels), 0.0)


def test_fifty_requests_the_exhausted_account_rests_until_its_refill_the_low_one_never_runs(fleet):
    fake = fleet.fake
    fake.reset()
    fake.set_account("exhausted", refill_in=REFILL_IN)
    refill = fake.account("exhausted").next_refill
    before = scrape(fleet)

    responses = asyncio.run(workload(fleet.proxy.base_url))

    failed = [(r.status_code, r.text) for r in responses if r.status_code != 200]
    assert failed == [], failed[:3]
    assert len(responses) == REQUESTS + REQUESTS // 10
    assert time.time() < refill, "the workload outlasted the refill: raise REFILL_IN"
    exhausted, low, full = (fake.account(name) for name in DEPLOYMENTS)
    counts = {name: (a.sessions, a.followups, a.credit_errors) for name, a in fake.accounts.items()}
    print(f"\naccounts (sessions, follow-ups, credit errors): {counts}")
    # the exhausted account: credit errors only, and none started after the first one was known
    # (the rest is recorded right after the balance read that follows it; those started before were
    # already on their way, ten requests at once)
    assert exhausted.sessions == exhausted.credit_errors >= 1
    rest_known = min(r.time for r in fake.requests if r.account == "exhausted" and "balance" in r.path)
    created = sorted(s.created_at for s in fake.sessions.values() if s.account == "exhausted")
    assert created[-1] < rest_known + IN_FLIGHT, (created, rest_known)
    # the low account: rested at its first balance read, one read for the whole fleet
    assert (low.sessions, low.credit_errors, low.balance_reads) == (0, 0, 1)
    assert full.credit_errors == 0
    # the Router's cooldowns, in Redis for the whole fleet: until the refill
    ttl = fleet.redis.client.ttl("deployment:chat-a:cooldown")
    assert 0 < ttl <= refill - time.time() + 2  # whole seconds, rounded up twice (retry-after, TTL)
    assert fleet.redis.client.ttl("deployment:chat-b:cooldown") > 3600  # the low account's refill: a day
    assert fleet.redis.client.ttl("deployment:chat-c:cooldown") == -2  # never cooled

    after = scrape(fleet)
    assert "litellm_proxy_total_requests_metric" in fleet.scraped  # LiteLLM's own, in the same scrape
    metric_counts(before, after, fake)

    # after the refill the exhausted account serves again
    time.sleep(max(0.0, refill - time.time()) + 1.0)  # the refill itself: nothing to await but time
    sessions = exhausted.sessions
    served = []
    for n in range(20):
        response = httpx.post(
            f"{fleet.proxy.base_url}/v1/chat/completions",
            json={"model": "chat", "messages": [{"role": "user", "content": f"[[fake:done]] after {n}"}]},
            headers=AUTH,
            timeout=bound(60),
        )
        assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == DONE
        served.append(response.headers["x-litellm-model-id"])
        if served[-1] == "chat-a":
            break
    assert served[-1] == "chat-a", served
    assert (exhausted.sessions, exhausted.refills) == (sessions + 1, 1)
    print(f"after the refill: served by {served}")


def metric_counts(before: dict[Any, float], after: dict[Any, float], fake: FakeConol) -> None:
    """What ``/metrics`` counted during the workload is exactly what the fake counted."""
    for account, deployment in DEPLOYMENTS.items():
        counts = fake.account(account)

        def delta(name: str, dep: str = deployment, **labels: str) -> float:
            return counted(after, name, dep, **labels) - counted(before, name, dep, **labels)

        assert delta("conol_sessions_created_total") == counts.sessions, account
        assert delta("conol_followup_turns_total") == counts.followups, account
        assert delta("conol_image_uploads_total") == counts.uploads, account
        assert delta("conol_credit_errors_total") == counts.credit_errors, account
    assert counted(after, "conol_account_balance_credits", "chat-b", part="total") == 3
    assert counted(after, "conol_account_rest_until_timestamp_seconds", "chat-b") > time.time() + 3600
    assert counted(after, "conol_account_rest_until_timestamp_seconds", "chat-a") > time.time()


def test_every_requests_logging_payload_carries_conols_fields(fleet):
    fake = fleet.fake
    fake.reset()
    before = len(usage_rows(fleet.payload_log, 0))
    first = {"role": "user", "content": [{"type": "text", "text": "[[fake:echo]] look"}]}
    image = "data:image/png;base64," + base64.b64encode(PNG + b"payload").decode()
    first["content"].append({"type": "image_url", "image_url": {"url": image}})
    one = httpx.post(
        f"{fleet.proxy.base_url}/v1/chat/completions",
        json={"model": "chat", "messages": [first]},
        headers=AUTH,
        timeout=bound(60),
    )
    assert one.status_code == 200, one.text
    answer = {"role": "assistant", "content": one.json()["choices"][0]["message"]["content"]}
    two = httpx.post(
        f"{fleet.proxy.base_url}/v1/chat/completions",
        json={"model": "chat", "messages": [first, answer, {"role": "user", "content": "and now?"}]},
        headers=AUTH,
        timeout=bound(60),
    )
    assert two.status_code == 200, two.text
    calls = [one.headers["x-litellm-call-id"], two.headers["x-litellm-call-id"]]
    rows = payload_rows(fleet, before, calls)
    answered = sorted(
        (row for row in rows if row["outcome"] == "success"), key=lambda r: calls.index(r["call_id"])
    )
    assert [(row["model_group"], row["model_id"]) for row in answered] == [("chat", "chat-c")] * 2
    # reset, the exhausted account has no credits again: an attempt it took failed (or was refused,
    # the account resting), and says so; so does the low one's, refused at its balance read (when this
    # test runs first, nothing has rested it yet)
    for failed in (row for row in rows if row["outcome"] == "failure"):
        assert failed["model_id"] in ("chat-a", "chat-b") and failed["conol"]["account_resting"], failed
        assert failed["conol"]["sessions_created"] == failed["conol"]["credit_errors"]
    first_fields, second_fields = (row["conol"] for row in answered)
    assert {
        k: first_fields[k] for k in ("sessions_created", "followup_turns", "image_uploads", "deployment")
    } == {
        "sessions_created": 1,
        "followup_turns": 0,
        "image_uploads": 1,
        "deployment": "chat-c",
    }
    assert first_fields["prompt_tokens_estimated"] > 0 and first_fields["prompt_tokens_reported"] == 0
    assert (first_fields["credit_errors"], first_fields["account_resting"]) == (0, False)
    assert first_fields["balance_left"] is not None  # balance polling is on for chat-c
    assert {k: second_fields[k] for k in ("sessions_created", "followup_turns", "session_reused")} == {
        "sessions_created": 0,
        "followup_turns": 1,
        "session_reused": True,
    }
    full = fake.account("full")
    assert (full.sessions, full.followups) == (1, 1)
    # the second turn uploads the image again when the other worker serves it (each worker remembers
    # its own uploads): the payload says so either way
    assert full.uploads == first_fields["image_uploads"] + second_fields["image_uploads"]


def payload_rows(fleet: Fleet, before: int, calls: list[str]) -> list[dict[str, Any]]:
    """What any logging integration gets of these calls (the standard logging payload's model group,
    deployment and conol's fields) once each has its success line (callbacks run after the
    response), or what there is when the bound runs out."""
    deadline = time.monotonic() + bound(15)
    while True:
        rows = [_payload_row(row) for row in usage_rows(fleet.payload_log, before)[before:]]
        rows = [row for row in rows if row["call_id"] in calls]
        done = {row["call_id"] for row in rows if row["outcome"] == "success"}
        if done == set(calls) or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def _payload_row(row: dict[str, Any]) -> dict[str, Any]:
    payload = json.loads(row["payload"])
    return {
        "outcome": row["outcome"],
        "call_id": payload.get("litellm_call_id"),  # the response's x-litellm-call-id
        "model_group": payload.get("model_group"),
        "model_id": payload.get("model_id"),
        "conol": (payload["metadata"].get("spend_logs_metadata") or {}).get("conol"),
    }


@pytest.mark.parametrize("how", ["body", "header"])
def test_a_request_may_not_write_conols_fields_into_the_logging_payload(fleet, how):
    """A caller's ``spend_logs_metadata`` naming ``conol`` is refused before routing (no attempt, no
    session, no payload line of its own): the key's fields are the provider's alone."""
    fake = fleet.fake
    fake.reset()
    forged = {"conol": {"sessions_created": 0, "credit_errors": 0}, "team": "forger"}
    body: dict[str, Any] = {"model": "chat", "messages": [{"role": "user", "content": "[[fake:done]] hi"}]}
    headers = dict(AUTH)
    if how == "body":
        body["metadata"] = {"spend_logs_metadata": forged}
    else:
        headers["x-litellm-spend-logs-metadata"] = json.dumps(forged)
    response = httpx.post(
        f"{fleet.proxy.base_url}/v1/chat/completions", json=body, headers=headers, timeout=bound(60)
    )
    assert response.status_code == 400, response.text
    assert "`spend_logs_metadata.conol` is written by the conol provider" in response.text
    assert [a.sessions for a in fake.accounts.values()] == [0] * len(fake.accounts)
