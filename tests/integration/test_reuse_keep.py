"""Keep or discard, through LiteLLM's SDK against the fake: a request that does not continue the bound
session leaves its binding for the next one; two requests at once for one history (bindings in a real
Redis) never both continue it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import litellm
import pytest
from support.redisproc import RedisServer, require_redis_server

import litellm_conol
from litellm_conol.fake import FakeConol
from litellm_conol.provider.sync import close_background_loop
from litellm_conol.reuse.shared_state import close_redis_clients
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture
def conol(fake: FakeConol) -> Iterator[FakeConol]:
    fake.reset()
    clear_stores()
    yield fake
    clear_stores()


async def ask(fake: FakeConol, messages: list[dict], **extra) -> tuple[str, dict]:
    response = await litellm.acompletion(
        model=MODEL, messages=messages, api_base=fake.base_url, api_key=fake.token, **extra
    )
    message = response.choices[0].message
    return message.content, message.provider_specific_fields or {}


FIRST = [{"role": "user", "content": "[[fake:echo]] first"}]


async def test_a_request_that_starts_afresh_leaves_the_binding_for_the_next(conol):
    answer, first = await ask(conol, FIRST)
    history = [*FIRST, {"role": "assistant", "content": answer}, {"role": "user", "content": "second"}]

    changed, fields = await ask(conol, history, reasoning_effort="high")  # another effort: not this session
    assert (changed, fields["session_reused"]) == ("second", False)
    assert fields["session_reuse_reason"] == "the model or effort changed"

    same, fields = await ask(conol, history)  # the binding is still there
    assert (same, fields["session_reused"]) == ("second", True)
    assert fields["session_id"] == first["session_id"]
    assert len(conol.sessions) == 2


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = RedisServer(require_redis_server(), tmp_path / "redis.log", config=['rename-command GETDEL ""'])
    try:
        server.wait_ready()
        yield server.url
    finally:
        server.stop()


async def test_two_requests_at_once_for_one_history_continue_it_once(conol, redis_url):
    answer, first = await ask(conol, FIRST, redis_url=redis_url)
    history = [*FIRST, {"role": "assistant", "content": answer}, {"role": "user", "content": "second"}]

    both = await asyncio.gather(*(ask(conol, history, redis_url=redis_url) for _ in range(2)))

    assert [text for text, _ in both] == ["second", "second"]
    reused = [fields for _, fields in both if fields["session_reused"]]
    fresh = [fields for _, fields in both if not fields["session_reused"]]
    assert len(reused) == 1 and reused[0]["session_id"] == first["session_id"]
    assert len(fresh) == 1 and fresh[0]["session_reuse_reason"] in (
        "another request took this session",  # both peeked it; the other took it first
        "no session holds this history",  # the other had taken it before this one looked
    )
    assert len(conol.sessions) == 2
    await close_redis_clients()


def test_sync_calls_close_their_redis_client_when_the_process_exits(conol, tmp_path):
    """The SDK's sync calls run on a background loop of their own; its Redis client is closed with it
    (``close_background_loop`` runs at exit)."""
    server = RedisServer(require_redis_server(), tmp_path / "redis.log")
    try:
        server.wait_ready()
        response = litellm.completion(
            model=MODEL, messages=FIRST, api_base=conol.base_url, api_key=conol.token, redis_url=server.url
        )
        assert response.choices[0].message.content == "[[fake:echo]] first"
        assert len(server.client.client_list()) == 2  # the test's own and the background loop's
        close_background_loop()
        deadline = time.monotonic() + 5
        while len(server.client.client_list()) > 1 and time.monotonic() < deadline:
            time.sleep(0.02)  # the server notices a close a moment later
        assert len(server.client.client_list()) == 1
    finally:
        server.stop()
