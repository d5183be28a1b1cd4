"""A fleet: two real LiteLLM proxy instances with two workers each (``--num_workers 2``), one
redis-server, one fake conol, as a team runs them behind a load balancer.

* 20 conversations of 5 turns at once, each turn sent to the other instance than the one before:
  20 sessions in all (one per conversation, every later turn a follow-up on it, whichever worker
  serves it), every answer exact, no conversation's turn on another's session.
* One request that always fails the same way (a failure no rule explains: retryable once,
  deterministic when it repeats), sent 8 times at once alternating instances: two sessions in all,
  the usage log showing it answered by all four workers.

Every request opens its own connection, so each instance's two workers share them (a kept-alive
connection stays on one worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from support.faults import AUTH, conol, proxy_config
from support.proxyproc import ProxyProcess
from support.redisproc import RedisServer, require_redis_server
from support.timing import bound
from support.usage_log import usage_rows

from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(240)

MODEL = "fleet"
WORKERS = 2
# uvicorn kills a worker that does not answer its ping within 5 s while it imports LiteLLM on a busy
# machine (tests/e2e/test_team.py): give it time.
WORKER_ARGS = ["--num_workers", str(WORKERS), "--timeout_worker_healthcheck", "60"]
CONVERSATIONS, TURNS = 20, 5
FAILING = "[[fake:agent_error_unexplained]] the fleet's failure"
BURST = 8
# Which worker accepts a new connection is the kernel's choice: a burst that happened to miss one of
# the four is sent again (another prompt: a new request for the memory), each costing two sessions.
BURST_ATTEMPTS = 6
SPREAD = 0.01  # seconds between the burst's connections


@dataclass
class Fleet:
    fake: FakeConol
    redis: RedisServer
    instances: list[ProxyProcess]
    usage_log: Path


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    binary = require_redis_server()
    directory = tmp_path_factory.mktemp("fleet")
    usage_log = directory / "usage.jsonl"
    with contextlib.ExitStack() as stack:
        fake = stack.enter_context(FakeConol())
        redis_server = RedisServer(binary, directory / "redis.log")
        stack.callback(redis_server.stop)
        redis_server.wait_ready()
        config = proxy_config(
            [conol(fake, MODEL, "fleet-1")], callbacks=["litellm_conol.usage_log.usage_logger"]
        )
        path = directory / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {
            "REDIS_URL": redis_server.url,
            "CONOL_USAGE_LOG": str(usage_log),
        }
        instances = [
            ProxyProcess(config=path, env=env, log_path=directory / f"proxy-{n}.log", args=WORKER_ARGS)
            for n in "ab"
        ]
        for instance in instances:
            stack.callback(instance.stop)
        for instance in instances:  # both start at once
            instance.wait_ready(timeout=bound(150))
            instance.wait_for_workers(WORKERS, timeout=bound(150))
        yield Fleet(fake, redis_server, instances, usage_log)
        for instance in instances:
            assert fake.token not in instance.log()


async def post(base_url: str, messages: list[dict[str, Any]]) -> httpx.Response:
    # a connection of its own: each instance's workers share the requests
    async with httpx.AsyncClient(timeout=bound(60)) as client:
        return await client.post(
            f"{base_url}/v1/chat/completions", json={"model": MODEL, "messages": messages}, headers=AUTH
        )


async def converse(fleet: Fleet, number: int) -> list[tuple[str, str, bool]]:
    """One conversation, each turn on the other instance: (answer, session id, reused) per turn."""
    messages: list[dict[str, Any]] = []
    turns = []
    for turn in range(TURNS):
        text = f"[[fake:echo]] conversation {number} turn {turn}" if turn == 0 else f"c{number} t{turn}"
        messages.append({"role": "user", "content": text})
        response = await post(fleet.instances[(number + turn) % 2].base_url, messages)
        assert response.status_code == 200, response.text
        message = response.json()["choices"][0]["message"]
        fields = message["provider_specific_fields"]
        turns.append((message["content"], fields["session_id"], fields["session_reused"]))
        messages.append({"role": "assistant", "content": message["content"]})
    return turns


def followup_texts(fake: FakeConol) -> dict[str, list[str]]:
    """The text each session received in its follow-ups, by session id."""
    sent: dict[str, list[str]] = {}
    for request in fake.requests:
        parts = request.path.strip("/").split("/")
        if (
            request.method == "POST"
            and len(parts) == 4
            and parts[:2] == ["api", "sessions"]
            and parts[3] == "messages"
        ):
            sent.setdefault(parts[2], []).append(str(request.body))
    return sent


async def all_conversations(fleet: Fleet) -> list[list[tuple[str, str, bool]]]:
    return await asyncio.wait_for(
        asyncio.gather(*(converse(fleet, n) for n in range(CONVERSATIONS))), timeout=bound(90)
    )


def test_twenty_conversations_alternating_instances_run_twenty_sessions(fleet):
    fleet.fake.reset()
    started = time.monotonic()
    conversations = asyncio.run(all_conversations(fleet))
    seconds = time.monotonic() - started

    sessions = [{session for _, session, _ in turns} for turns in conversations]
    assert all(len(used) == 1 for used in sessions), sessions  # one session per conversation
    assert len(set.union(*sessions)) == CONVERSATIONS  # and no two share one
    assert sorted(fleet.fake.sessions) == sorted(set.union(*sessions))  # exactly 20 created
    for number, turns in enumerate(conversations):
        expected = [f"[[fake:echo]] conversation {number} turn 0"] + [
            f"c{number} t{t}" for t in range(1, TURNS)
        ]
        assert [answer for answer, _, _ in turns] == expected
        assert [reused for _, _, reused in turns] == [False] + [True] * (TURNS - 1)
    sent = followup_texts(fleet.fake)
    for number, turns in enumerate(conversations):
        session = turns[0][1]
        assert fleet.fake.sessions[session].turns == TURNS
        assert len(sent[session]) == TURNS - 1
        for t, body in enumerate(sent[session], start=1):
            assert f"c{number} t{t}" in body  # its own turn, and only that conversation's
            others = [f"c{n} t" for n in range(CONVERSATIONS) if n != number]
            assert not any(f"{other}{t}'" in body or f'{other}{t}"' in body for other in others)
    rows = usage_rows(fleet.usage_log, CONVERSATIONS * TURNS)
    assert len(rows) == CONVERSATIONS * TURNS
    assert {row["outcome"] for row in rows} == {"success"}
    assert len({row["pid"] for row in rows}) == 2 * WORKERS, {row["pid"] for row in rows}
    print(f"\nfleet: {CONVERSATIONS} conversations x {TURNS} turns in {seconds:.1f} s")


async def burst(fleet: Fleet, text: str) -> list[httpx.Response]:
    messages = [{"role": "user", "content": text}]

    async def one(n: int) -> httpx.Response:
        # Connections opened in the same instant tend to be accepted by one worker in one go; a few
        # milliseconds apart each goes to whichever worker accepts first (all still arrive while the
        # first request's session runs).
        await asyncio.sleep(n * SPREAD)
        return await post(fleet.instances[n % 2].base_url, messages)

    return await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(BURST))), timeout=bound(60))


def test_a_failure_sent_eight_times_at_once_to_both_instances_costs_two_sessions(fleet):
    pids: set[int] = set()
    for attempt in range(BURST_ATTEMPTS):
        fleet.fake.reset()
        before = len(usage_rows(fleet.usage_log, 0))
        responses = asyncio.run(burst(fleet, f"{FAILING} #{attempt}"))

        assert len(fleet.fake.sessions) == 2  # the first, then its repeat; everyone else refused
        assert [r.status_code for r in responses] == [400] * BURST, [r.text for r in responses]
        messages = [r.json()["error"]["message"] for r in responses]
        assert all(
            "failed the same way" in m or "refused without starting a conol session" in m for m in messages
        )
        rows = usage_rows(fleet.usage_log, before + BURST)[before:]
        assert len(rows) == BURST and {row["outcome"] for row in rows} == {"failure"}
        pids = {row["pid"] for row in rows}
        if len(pids) == 2 * WORKERS:
            break
    print(f"\nfleet: burst attempts {attempt + 1}, workers {len(pids)}")
    assert len(pids) == 2 * WORKERS, f"no burst of {BURST_ATTEMPTS} reached all four workers: {pids}"
