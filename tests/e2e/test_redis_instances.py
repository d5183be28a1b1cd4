"""Two real LiteLLM proxy instances sharing one real redis-server, as a team runs them behind a load
balancer: a deployment's ``rpm`` limit holds across both, a cooldown one instance sets after conol's
429s is honoured by the other, and when Redis dies both keep serving (with per-instance limits).

How LiteLLM 1.108.7 shares this state (read in its source):

* ``rpm``: ``routing_strategy: usage-based-routing-v2`` counts requests per deployment and minute
  (key ``<id>:<model>:rpm:<HH-MM>``) in each instance's memory and pushes the increments to Redis every
  0.1 s (``INCRBY`` in a pipeline), taking back the fleet-wide total. The pre-call check refuses a
  deployment whose count passed its ``rpm`` with a ``RateLimitError`` (429, ``Retry-After: 60``); the
  selection step skips a deployment whose count + 1 reaches it.
* cooldowns: ``deployment:<id>:cooldown`` is written to Redis with the cooldown's TTL (conol's
  ``Retry-After`` when it sends one); a sibling re-reads keys it does not hold at most every 1 s.
* Redis down: every cache falls back to the instance's memory (and a circuit breaker stops calling
  Redis after 5 failures), so each instance keeps serving with its own counts.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from support.faults import Outcome, chat_body, conol, creates, post_chat, proxy_config
from support.proxyproc import ProxyProcess
from support.redisproc import RedisServer, require_redis_server

from litellm_conol.fake import BUILTINS, FakeConol

pytestmark = pytest.mark.timeout(120)

ANSWER = BUILTINS["done"].final_text
PROMPT = "[[fake:done]]"
RPM_LIMIT = 4
# A sibling instance re-reads a cooldown key it does not hold from Redis at most this often
# (LiteLLM's DEFAULT_COOLDOWN_REDIS_READ_INTERVAL_SECONDS).
COOLDOWN_REDIS_READ_INTERVAL = 1.0
# What each proxy logs when one of its Redis clients stops calling a dead Redis (the router's usage
# and cooldown cache, and the proxy's own): from then on it serves from memory without trying.
BREAKER_OPENED = "Redis circuit breaker OPENED"
BREAKERS_PER_INSTANCE = 2
BREAKER_WARMUP_REQUESTS = 15


def team_config(fakes: Fakes) -> dict[str, Any]:
    """A team-like config: an rpm-capped model that falls back to another, a pair with a preferred
    deployment and a backup, everything counted and cooled down through one Redis."""
    return proxy_config(
        [
            conol(fakes.capped, "capped", "capped-1", rpm=RPM_LIMIT),
            conol(fakes.late, "capped-late", "capped-late-1", rpm=RPM_LIMIT),
            conol(fakes.overflow, "overflow", "overflow-1"),
            conol(fakes.primary, "team-haiku", "primary", order=1),
            conol(fakes.backup, "team-haiku", "backup", order=2),
        ],
        router_settings={
            "routing_strategy": "usage-based-routing-v2",
            "redis_host": "os.environ/REDIS_HOST",
            "redis_port": "os.environ/REDIS_PORT",
            "num_retries": 2,
            "retry_after": 0,
            "cooldown_time": 60,
            "fallbacks": [{"capped": ["overflow"]}, {"capped-late": ["overflow"]}],
            # Over its rpm the capped deployment answers 429 with Retry-After: 60; retrying it would
            # sleep that long. Go to the fallback at once instead.
            "model_group_retry_policy": {
                group: {"RateLimitErrorRetries": 0} for group in ("capped", "capped-late")
            },
        },
    )


@dataclass
class Fakes:
    capped: FakeConol
    late: FakeConol
    overflow: FakeConol
    primary: FakeConol
    backup: FakeConol


@dataclass
class Team:
    redis: RedisServer
    a: ProxyProcess
    b: ProxyProcess
    fakes: Fakes


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    binary = require_redis_server()
    directory = tmp_path_factory.mktemp("redis-team")
    with contextlib.ExitStack() as stack:
        fakes = Fakes(*(stack.enter_context(FakeConol()) for _ in range(5)))
        server = RedisServer(binary, directory / "redis.log")
        stack.callback(server.stop)
        server.wait_ready()
        path = directory / "config.yaml"
        path.write_text(yaml.safe_dump(team_config(fakes)))
        env = {
            "REDIS_HOST": "127.0.0.1",
            "REDIS_PORT": str(server.port),
        }
        # Both start at once (a start costs ~5-10 s); both are stopped whatever happens.
        instances = [ProxyProcess(config=path, env=env, log_path=directory / f"proxy-{n}.log") for n in "ab"]
        for instance in instances:
            stack.callback(instance.stop)
        for instance in instances:
            instance.wait_ready()
        yield Team(server, instances[0], instances[1], fakes)


def wait_for_minute_room(seconds: float) -> None:
    """rpm counters are per UTC minute: start a counted run only with ``seconds`` left in the minute."""
    now = dt.datetime.now(dt.UTC)
    if 60 - now.second - now.microsecond / 1e6 < seconds:
        time.sleep(60 - now.second - now.microsecond / 1e6 + 0.1)


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def served_by(outcome: Outcome) -> str:
    return outcome.headers.get("x-litellm-model-id", "")


def assert_answer(outcome: Outcome) -> None:
    assert outcome.status == 200, outcome.text
    assert outcome.body["choices"][0]["message"]["content"] == ANSWER


def alternate(team: Team, model: str, count: int) -> list[str]:
    """``count`` requests, one at a time, to A, B, A, …: each gets the exact answer; who served each."""
    served = []
    for i in range(count):
        outcome = post_chat((team.a, team.b)[i % 2].base_url, chat_body(model, PROMPT))
        assert_answer(outcome)
        served.append(served_by(outcome))
    return served


def test_an_rpm_limit_holds_across_both_instances_together(team: Team) -> None:
    """Requests alternate between the instances: exactly RPM_LIMIT reach the capped deployment in all,
    every later one goes to its fallback (still the exact answer); without a fallback it is a 429."""
    wait_for_minute_room(10)
    served = alternate(team, "capped", 2 * RPM_LIMIT)

    assert served == ["capped-1"] * RPM_LIMIT + ["overflow-1"] * RPM_LIMIT
    assert (creates(team.fakes.capped), creates(team.fakes.overflow)) == (RPM_LIMIT, RPM_LIMIT)
    refused = post_chat(team.b.base_url, chat_body("capped", PROMPT, disable_fallbacks=True))
    assert refused.status == 429
    assert "No deployments available for selected model. Passed model=capped" in refused.text
    assert "'rpm_limit': 4" in refused.text
    assert refused.headers["llm_provider-retry-after"] == "60"
    assert creates(team.fakes.capped) == RPM_LIMIT  # the refusal never reached conol


def test_a_cooldown_set_by_one_instance_is_honoured_by_the_other(team: Team) -> None:
    """conol answers the preferred deployment with 429 (Retry-After: 30): instance A cools it down and
    retries on the backup; instance B then never sends it anything."""
    team.fakes.primary.configure(create_status=429, create_retry_after="30")

    first = post_chat(team.a.base_url, chat_body("team-haiku", PROMPT))
    assert_answer(first)
    assert served_by(first) == "backup"
    assert (creates(team.fakes.primary), creates(team.fakes.backup)) == (1, 1)

    key = "deployment:primary:cooldown"
    assert wait_for(lambda: bool(team.redis.client.exists(key)), timeout=5)
    assert "'cooldown_time': 30" in team.redis.client.get(key).decode()  # conol's Retry-After
    assert 0 < team.redis.client.ttl(key) <= 30
    time.sleep(COOLDOWN_REDIS_READ_INTERVAL + 0.2)  # B's next read of the key goes to Redis

    for _ in range(3):
        outcome = post_chat(team.b.base_url, chat_body("team-haiku", PROMPT))
        assert_answer(outcome)
        assert served_by(outcome) == "backup"
    assert (creates(team.fakes.primary), creates(team.fakes.backup)) == (1, 4)


def test_both_instances_keep_serving_when_redis_dies(team: Team) -> None:
    """Redis is killed mid-run: every request to either instance still gets the exact answer. Once
    LiteLLM's Redis circuit breakers have opened (after 5 failed Redis calls), each instance works from
    its own memory: a cooldown it holds is honoured, and the rpm limit is counted per instance: each
    lets rpm - 1 = 3 through (its selection skips a deployment whose count + 1 reaches the limit),
    6 in all instead of 4.

    Before the breakers open, a failed Redis read of the cooldowns or the rpm counters counts as
    "nothing known": a request may then try the cooled deployment (and retry on the backup).
    """
    team.fakes.primary.configure(create_status=429, create_retry_after="30")
    team.redis.kill()
    for instance in (team.a, team.b):
        for _ in range(BREAKER_WARMUP_REQUESTS):
            assert_answer(post_chat(instance.base_url, chat_body("team-haiku", PROMPT)))
            if instance.log().count(BREAKER_OPENED) >= BREAKERS_PER_INSTANCE:
                break
        assert instance.log().count(BREAKER_OPENED) >= BREAKERS_PER_INSTANCE, instance.log()[-3000:]

    primary_creates = creates(team.fakes.primary)
    for instance in (team.a, team.b, team.a, team.b):
        outcome = post_chat(instance.base_url, chat_body("team-haiku", PROMPT))
        assert_answer(outcome)
        assert served_by(outcome) == "backup"
    assert creates(team.fakes.primary) == primary_creates

    wait_for_minute_room(10)
    served = alternate(team, "capped-late", 3 * RPM_LIMIT)

    per_instance = RPM_LIMIT - 1
    assert served == ["capped-late-1"] * 2 * per_instance + ["overflow-1"] * (
        3 * RPM_LIMIT - 2 * per_instance
    )
    assert creates(team.fakes.late) == 2 * per_instance
    assert team.a.process.poll() is None and team.b.process.poll() is None
