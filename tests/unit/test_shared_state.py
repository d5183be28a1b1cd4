"""The state workers share (reuse/shared_state, without a server: its memory form and how a Redis client is
made), the Redis URL the settings build, a failure record's JSON, and the guard that lets one of several
identical requests find out at a time (reuse/failure_guard, on memory). Against a real
redis-server: tests/integration/test_redis_state.py."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
import redis.asyncio

from litellm_conol import AgentFailed, AgentFailedPermanently, InvalidStructuredOutput
from litellm_conol.core.config.boundary import settings_of
from litellm_conol.core.config.reuse_options import redis_url, reuse_options
from litellm_conol.core.protocol.agent_failures import failure_error
from litellm_conol.fake._library import DETERMINISTIC_MESSAGE, UNEXPLAINED_MESSAGE
from litellm_conol.reuse import shared_state as _shared
from litellm_conol.reuse.failure_guard import PASSED, FailureGuard
from litellm_conol.reuse.known_failures import KnownFailures
from litellm_conol.reuse.shared_state import MemoryState, close_redis_clients, redis_clients_open

pytestmark = pytest.mark.timeout(30)


# --- the Redis URL -----------------------------------------------------------------------------------


def url_of(params, env=None):
    return redis_url(settings_of(params, env or {}))


def test_a_username_and_password_are_percent_encoded():
    assert url_of({"redis_host": "r", "redis_username": "team@a", "redis_password": "p@ss:w/rd#1"}) == (
        "redis://team%40a:p%40ss%3Aw%2Frd%231@r:6379"
    )
    assert url_of({"redis_host": "r", "redis_username": "ops"}) == "redis://ops@r:6379"


def test_redis_ssl_makes_a_rediss_url_from_the_deployment_or_the_environment():
    assert url_of({"redis_host": "r", "redis_ssl": True, "redis_port": 6380}) == "rediss://r:6380"
    env = {"REDIS_HOST": "cache", "REDIS_SSL": "true", "REDIS_USERNAME": "u", "REDIS_PASSWORD": "p w"}
    assert url_of({}, env) == "rediss://u:p%20w@cache:6379"
    assert url_of({"redis_url": "rediss://u:p@h:1/2"}) == "rediss://u:p@h:1/2"  # as the operator wrote it


def test_an_ipv6_host_is_bracketed():
    assert url_of({"redis_host": "::1"}) == "redis://[::1]:6379"


async def test_a_rediss_url_makes_a_tls_client_with_the_decoded_credentials():
    """Made without connecting: the client redis-py builds from the URL our settings write."""
    url = url_of(
        {"redis_host": "cache.example", "redis_username": "team@a", "redis_password": "p@ss:w/rd"}
        | {"redis_ssl": True}
    )
    connection = _shared._connection(url)
    pool = connection.client.connection_pool
    assert pool.connection_class is redis.asyncio.SSLConnection
    kwargs = pool.connection_kwargs
    assert (kwargs["host"], kwargs["username"], kwargs["password"]) == (
        "cache.example",
        "team@a",
        "p@ss:w/rd",
    )
    assert _shared._connection(url) is connection  # one per URL and loop
    await close_redis_clients()
    assert redis_clients_open() == 0


def test_one_redis_client_per_event_loop():
    url = "redis://cache.example:6379"

    async def made() -> object:
        return _shared._connection(url).client

    first, second = asyncio.run(made()), asyncio.run(made())
    assert first is not second  # a client is bound to the loop it was made on


def test_the_reuse_options_never_show_the_redis_url():
    options = reuse_options(settings_of({"redis_host": "h", "redis_password": "hunter2-secret"}, {}))
    assert options.redis_url == "redis://:hunter2-secret@h:6379"
    assert "hunter2" not in repr(options)


def test_a_redis_state_never_shows_its_url():
    state = _shared.shared_state("redis://u:hunter2-secret@h:1", "test:v1", 4)
    assert "hunter2" not in repr(state) and "hunter2" not in str(state)


# --- the memory form -----------------------------------------------------------------------------------


async def test_memory_state_claim_take_and_expiry():
    state = MemoryState(cap=8)
    assert await state.claim("k", "a", ttl=60) == "a"
    assert await state.claim("k", "b", ttl=60) == "a"  # held: the second claimant learns by whom
    assert not await state.take("k", "b")
    assert await state.take("k", "a")
    assert await state.get("k") is None
    await state.put("gone", "x", ttl=-1)
    assert await state.get_many(["gone", "k"]) == [None, None]


# --- a failure record as JSON ----------------------------------------------------------------------------


def test_a_remembered_failure_survives_export_and_adopt():
    first = KnownFailures(ttl=300)
    first.record("k", failure_error(DETERMINISTIC_MESSAGE), now=100.0)
    raw = first.export("k")
    other = KnownFailures(ttl=300)  # another process
    other.adopt("k", raw)
    refusal = other.refusal("k", now=130.0)
    assert type(refusal) is type(first.refusal("k", now=130.0))
    assert type(refusal) is AgentFailedPermanently
    assert refusal is not None and refusal.message == first.refusal("k", now=130.0).message  # type: ignore[union-attr]
    assert refusal.headers == {"x-should-retry": "false"}


def test_an_unexplained_failure_adopted_elsewhere_makes_the_repeat_deterministic():
    first = KnownFailures(ttl=300)
    assert type(first.record("k", failure_error(UNEXPLAINED_MESSAGE), now=100.0)) is AgentFailed
    other = KnownFailures(ttl=300)
    other.adopt("k", first.export("k"))
    assert other.refusal("k", now=101.0) is None  # once is retryable
    assert type(other.record("k", failure_error(UNEXPLAINED_MESSAGE), now=102.0)) is AgentFailedPermanently


def test_a_validation_failure_and_its_rounds_survive_export_and_adopt():
    """Another worker sees the first round (the next is one more round) and the second (refused)."""
    first = KnownFailures(ttl=300)
    invalid = InvalidStructuredOutput("the answer failed validation (3 turn(s), …): not JSON")
    first.record("k", invalid, now=100.0)
    other = KnownFailures(ttl=300)
    other.adopt("k", first.export("k"))
    assert other.refusal("k", now=101.0) is None  # one more round
    repeated = other.record("k", invalid, now=110.0)
    assert "failed validation in 2 rounds in a row, the one before 10 s earlier" in repeated.message
    third = KnownFailures(ttl=300)
    third.adopt("k", other.export("k"))
    refusal = third.refusal("k", now=112.0)
    assert type(refusal) is InvalidStructuredOutput and refusal.status_code == 502
    assert refusal.message == f"refused without starting a conol session: {repeated.message} (2 s ago)"
    assert refusal.headers == {"x-should-retry": "false"} and refusal.refused_by == "failure_memory"
    assert "in 3 rounds" in third.record("k", invalid, now=113.0).message  # the count travels too


@pytest.mark.parametrize("raw", [None, "", "not json", '{"signature": 1}', '{"error": {"class": "Boom"}}'])
def test_a_record_that_does_not_parse_is_no_record(raw):
    memory = KnownFailures(ttl=300)
    memory.record("k", failure_error(DETERMINISTIC_MESSAGE), now=1.0)
    memory.adopt("k", raw)
    assert memory.refusal("k", now=2.0) is None and memory.export("k") is None


# --- one identical request at a time ----------------------------------------------------------------------


def guard(records: MemoryState, claims: MemoryState) -> FailureGuard:
    return FailureGuard("request", records, claims, ttl=300)


async def test_identical_requests_wait_for_the_first_and_are_refused_after_its_repeat():
    """Eight identical requests at once, each failing the same unexplained way if it runs: two run."""
    records, claims = MemoryState(64), MemoryState(64)
    ran: list[int] = []
    outcomes: list[str] = []

    async def request(n: int) -> None:
        one = guard(records, claims)
        try:
            await one.check()
        except AgentFailedPermanently:
            outcomes.append("refused")
            return
        try:
            ran.append(n)
            await asyncio.sleep(0)  # the session runs
            outcomes.append(type(await one.failed(failure_error(UNEXPLAINED_MESSAGE))).__name__)
        finally:
            await one.release()

    await asyncio.wait_for(asyncio.gather(*(request(n) for n in range(8))), timeout=20)
    assert len(ran) == 2
    assert sorted(outcomes) == sorted(["AgentFailed", "AgentFailedPermanently"] + ["refused"] * 6)


async def test_after_a_success_identical_requests_run_together():
    records, claims = MemoryState(64), MemoryState(64)
    first = guard(records, claims)
    await first.check()
    waiting = asyncio.ensure_future(guard(records, claims).check())
    await asyncio.sleep(0)
    assert not waiting.done()  # the first has not said yet
    await first.succeeded()
    await first.release()
    await asyncio.wait_for(waiting, timeout=5)
    assert await claims.get("request") == PASSED
    third = guard(records, claims)
    await asyncio.wait_for(third.check(), timeout=5)  # no wait at all now
    assert third._claim is None


async def test_with_the_memory_off_nothing_waits_or_is_kept():
    records, claims = MemoryState(8), MemoryState(8)
    off = FailureGuard("request", records, claims, ttl=0)
    await off.check()
    await off.check()
    assert await off.failed(failure_error(DETERMINISTIC_MESSAGE)) is not None
    assert await records.get("request") is None and await claims.get("request") is None


async def test_identical_never_valid_requests_at_once_cost_two_rounds_and_the_refused_release_their_claim():
    """Six identical requests at once whose answers never validate: two rounds run, one after the
    other; the other four are refused, each letting the next look at once."""
    records, claims = MemoryState(64), MemoryState(64)
    rounds: list[int] = []
    outcomes: list[str] = []
    invalid = InvalidStructuredOutput("the answer failed validation (3 turn(s), …): not JSON")

    async def request(n: int) -> None:
        validation = guard(records, claims).validation(
            SimpleNamespace(tool_validation="repair", max_repair_turns=2)
        )
        try:
            await validation.check()
        except InvalidStructuredOutput as refused:
            assert refused.refused_by == "failure_memory"
            outcomes.append("refused")
            return
        try:
            rounds.append(n)
            await asyncio.sleep(0)  # the round runs
            error = await validation.failed(invalid)
            outcomes.append("repeated" if "in a row" in error.message else "first")
        finally:
            await validation.release()

    await asyncio.wait_for(asyncio.gather(*(request(n) for n in range(6))), timeout=20)
    assert len(rounds) == 2
    assert sorted(outcomes) == ["first", "refused", "refused", "refused", "refused", "repeated"]
    assert await claims.get("request:validation:repair:2") is None
