"""The shared state against real redis-servers: a server without ``GETDEL`` (as before Redis 6.2), an
ACL user with a password full of URL characters, TLS (``rediss://``), two event loops, a Redis that
dies; bindings peeked, kept or taken once; upstream decisions and failures shared by two "workers"
(two processes' worth of memory, one Redis)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import ipaddress
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.proxyproc import free_port
from support.redisproc import RedisServer, require_redis_server

from litellm_conol import AgentFailed, AgentFailedPermanently
from litellm_conol.core.config.boundary import settings_of
from litellm_conol.core.config.reuse_options import redis_url
from litellm_conol.core.protocol.agent_failures import failure_error
from litellm_conol.core.protocol.stage_marks import SessionHistory, StageMark
from litellm_conol.fake._library import UNEXPLAINED_MESSAGE
from litellm_conol.reuse.failure_guard import CLAIM_KIND, FAILURE_KIND, FailureGuard
from litellm_conol.reuse.fingerprint import Binding
from litellm_conol.reuse.shared_state import close_redis_clients, redis_clients_open, shared_state
from litellm_conol.reuse.store import KEY_PREFIX, RedisBindings, UpstreamMemory, clear_stores
from litellm_conol.reuse.store import MemoryBindings as Memory

pytestmark = pytest.mark.timeout(60)

BINDING = Binding("session-1", "m", "low", SessionHistory((StageMark("stage-a", 1, "log-1"),)), 1)
OTHER = Binding("session-2", "m", "low", SessionHistory((StageMark("stage-b", 1, "log-1"),)), 1)
USER, PASSWORD = "team@conol", "p@ss:w/rd #1%"  # every character a URL gives a meaning to
NO_GETDEL = ['rename-command GETDEL ""']


@pytest.fixture(autouse=True)
def _fresh_state() -> Iterator[None]:
    clear_stores()
    yield
    clear_stores()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis without GETDEL, reached only as an ACL user with a hard password."""
    password_hash = hashlib.sha256(PASSWORD.encode()).hexdigest()  # the conf file splits at spaces
    config = [*NO_GETDEL, "user default off", f"user {USER} on #{password_hash} ~* &* +@all"]
    server = RedisServer(
        require_redis_server(), tmp_path / "redis.log", config=config, admin=(USER, PASSWORD)
    )
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def url_for(server: RedisServer) -> str:
    settings = {"redis_host": "127.0.0.1", "redis_port": server.port, "redis_username": USER}
    return str(redis_url(settings_of(settings | {"redis_password": PASSWORD}, {})))


def bindings(url: str) -> RedisBindings:
    return RedisBindings(url, Memory(cap=16))


async def test_the_server_has_no_getdel_and_bindings_work_through_the_acl_user(redis_server):
    with pytest.raises(redis.ResponseError, match="unknown command"):
        redis_server.client.execute_command("GETDEL", "x")
    store = bindings(url_for(redis_server))
    await store.put("h1", BINDING, ttl=60)
    assert redis_server.client.get(KEY_PREFIX + "h1").decode() == BINDING.to_json()
    assert KEY_PREFIX == "litellm-conol:reuse:v3:"
    assert 0 < redis_server.client.ttl(KEY_PREFIX + "h1") <= 60
    assert await store.peek("h1") == BINDING
    assert await store.peek("h1") == BINDING  # kept: a request that goes fresh leaves it
    assert await store.take("h1", BINDING) == BINDING
    assert redis_server.client.exists(KEY_PREFIX + "h1") == 0
    assert await store.take("h1", BINDING) is None
    await close_redis_clients()


async def test_twenty_concurrent_takes_of_one_binding_give_it_to_exactly_one(redis_server):
    store = bindings(url_for(redis_server))
    await store.put("h", BINDING, ttl=60)
    peeked = await store.peek("h")
    assert peeked is not None
    taken = await asyncio.gather(*(store.take("h", peeked) for _ in range(20)))
    assert taken.count(BINDING) == 1 and taken.count(None) == 19
    await close_redis_clients()


async def test_a_take_leaves_a_binding_that_changed_since_the_peek(redis_server):
    store = bindings(url_for(redis_server))
    await store.put("h", BINDING, ttl=60)
    peeked = await store.peek("h")
    await store.put("h", OTHER, ttl=60)  # another request bound its own session to this history
    assert peeked is not None and await store.take("h", peeked) is None
    assert await store.peek("h") == OTHER
    await close_redis_clients()


@pytest.mark.parametrize("stored", [b"not json", b'{"session_id": 1}', b"\xff\xfe"])
async def test_a_value_that_does_not_parse_is_no_binding(redis_server, stored):
    redis_server.client.set(KEY_PREFIX + "h", stored)
    assert await bindings(url_for(redis_server)).peek("h") is None
    await close_redis_clients()


def test_each_event_loop_has_its_own_client_and_closes_it(redis_server):
    """The proxy's loop and the sync SDK's loop (a thread) at once, then the loops end: every
    connection they opened is closed (the server sees only the test's own)."""
    url = url_for(redis_server)
    store = bindings(url)
    clients: list[object] = []
    ready = threading.Barrier(2, timeout=10)

    async def use(name: str) -> None:
        await store.put(name, BINDING, ttl=60)
        ready.wait()  # both loops hold a live client at once
        assert await store.peek(name) == BINDING
        clients.append(asyncio.get_running_loop())
        assert redis_clients_open() == 1

    thread = threading.Thread(target=asyncio.run, args=(use("sync-loop"),))
    thread.start()
    asyncio.run(use("main-loop"))
    thread.join(timeout=10)
    assert len(clients) == 2 and clients[0] is not clients[1]
    assert connected(redis_server) == 1  # the test's own client only: both loops closed theirs


def connected(server: RedisServer) -> int:
    """Clients the server holds, once it has seen closed ones go (it notices a close a moment later)."""
    deadline = time.monotonic() + 5
    while True:
        count = len(server.client.client_list())
        if count == 1 or time.monotonic() > deadline:
            return count
        time.sleep(0.02)


async def test_a_dead_redis_falls_back_to_memory_closes_the_client_and_logs_no_password(redis_server, caplog):
    url = url_for(redis_server)
    store = bindings(url)
    await store.put("before", BINDING, ttl=60)
    assert redis_clients_open() == 1
    redis_server.kill()
    with caplog.at_level(logging.WARNING, logger="litellm_conol.reuse"):
        assert await store.peek("before") is None  # it was in Redis, which is gone
        await store.put("during", OTHER, ttl=60)
    assert redis_clients_open() == 0  # the failed client was closed, not dropped
    assert await store.peek("during") == OTHER  # memory answers meanwhile
    assert await store.take("during", OTHER) == OTHER
    assert "Redis failed (ConnectionError)" in caplog.text
    for secret in (PASSWORD, "p%40ss", USER, url):
        assert secret not in caplog.text


# --- TLS ---------------------------------------------------------------------------------------------


@dataclass
class Tls:
    ca: Path
    cert: Path
    key: Path


def self_signed(directory: Path) -> Tls:
    """A certificate for 127.0.0.1, its own CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    tls = Tls(directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    tls.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    tls.ca.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    tls.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return tls


async def test_bindings_over_tls_with_rediss(tmp_path):
    tls = self_signed(tmp_path)
    tls_port = free_port()
    config = [
        f"tls-port {tls_port}",
        f"tls-cert-file {tls.cert}",
        f"tls-key-file {tls.key}",
        f"tls-ca-cert-file {tls.ca}",
        "tls-auth-clients no",
    ]
    server = RedisServer(require_redis_server(), tmp_path / "redis.log", config=config)
    try:
        server.wait_ready()
        settings = {"redis_host": "127.0.0.1", "redis_port": tls_port, "redis_ssl": True}
        url = str(redis_url(settings_of(settings, {})))
        assert url == f"rediss://127.0.0.1:{tls_port}"
        store = bindings(f"{url}?ssl_ca_certs={tls.ca}")  # the operator's CA, as redis-py reads it
        await store.put("h", BINDING, ttl=60)
        assert server.client.get(KEY_PREFIX + "h").decode() == BINDING.to_json()  # it went over TLS
        assert await store.take("h", BINDING) == BINDING
        await close_redis_clients()
    finally:
        server.stop()


# --- what the fleet learns -------------------------------------------------------------------------------


async def test_an_upstream_refusal_and_a_pinning_answer_reach_another_worker(redis_server):
    url = url_for(redis_server)
    worker_a, worker_b = UpstreamMemory(), UpstreamMemory()
    await worker_a.refresh("scope", "model-x", url)
    worker_a.refuse("scope", 600)
    worker_a.learn("scope", "model-x", False)
    await worker_a.flush()
    assert not worker_b.refused("scope") and worker_b.create_honours("scope", "model-x") is None
    await worker_b.refresh("scope", "model-x", url)
    assert worker_b.refused("scope") and worker_b.create_honours("scope", "model-x") is False
    assert 590 < redis_server.client.ttl("litellm-conol:upstream:v1:refused:scope") <= 600
    await close_redis_clients()


def guard(url: str) -> FailureGuard:
    return FailureGuard(
        "request", shared_state(url, FAILURE_KIND, 64), shared_state(url, CLAIM_KIND, 64), ttl=300
    )


async def test_a_failure_remembered_by_one_worker_refuses_the_request_on_another(redis_server):
    url = url_for(redis_server)
    first = guard(url)
    await first.check()
    assert type(await first.failed(failure_error(UNEXPLAINED_MESSAGE))) is AgentFailed
    await first.release()
    clear_stores()  # another process: nothing of the first in memory
    second = guard(url)
    await second.check()  # once unexplained: one more try
    assert type(await second.failed(failure_error(UNEXPLAINED_MESSAGE))) is AgentFailedPermanently
    await second.release()
    clear_stores()
    with pytest.raises(AgentFailedPermanently, match="refused without starting a conol session"):
        await guard(url).check()
    assert redis_server.client.exists("litellm-conol:failure:v1:request") == 1
    await close_redis_clients()


def test_eight_identical_failing_requests_on_two_loops_run_two_sessions(redis_server):
    """Two "workers" (two loops, threads) send four each at once; every one that runs fails the same
    unexplained way: two run, six are refused without a session."""
    url = url_for(redis_server)
    ran: list[str] = []
    refused: list[str] = []

    async def request(name: str) -> None:
        one = guard(url)
        try:
            await one.check()
        except AgentFailedPermanently:
            refused.append(name)
            return
        try:
            ran.append(name)
            await asyncio.sleep(0.05)  # the session runs, then fails
            await one.failed(failure_error(UNEXPLAINED_MESSAGE))
        finally:
            await one.release()

    async def worker(name: str) -> None:
        await asyncio.wait_for(asyncio.gather(*(request(f"{name}{n}") for n in range(4))), timeout=30)

    thread = threading.Thread(target=asyncio.run, args=(worker("b"),))
    thread.start()
    asyncio.run(worker("a"))
    thread.join(timeout=30)
    assert len(ran) == 2, ran
    assert len(refused) == 6, refused
