"""The discovery client and its run-time cache (client/discovery.py) over an in-memory transport: what
each answer becomes, that a refresh never makes the request wait, that failure fails open, and that
a server's apiKey is in no error, log line or kept object."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest

from litellm_conol import UpstreamError
from litellm_conol.client.discovery import DiscoveryCache, fetch_agent_servers
from litellm_conol.core.protocol.endpoint import Endpoint

SECRET = "agent-server-key-do-not-leak-42"
TOKEN = "session-token-do-not-leak-17"
ENDPOINT = Endpoint("https://conol.test", TOKEN)
SERVERS = [
    {
        "id": "s1",
        "apiKey": SECRET,
        "capabilities": {"agents": [{"models": [{"name": "m/one", "inputModalities": ["text", "image"]}]}]},
    }
]


class Script:
    """Answers each request with the next scripted (status, body); records what was asked."""

    def __init__(self, *answers: tuple[int, object]) -> None:
        self.answers = list(answers)
        self.seen: list[httpx.Request] = []
        self.gate: asyncio.Event | None = None

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if self.gate is not None:
            await self.gate.wait()
        status, body = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.Response(status, content=content)


def client(script: Script) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(script))


async def test_the_list_is_read_and_asked_for_as_other_clients_do():
    script = Script((200, SERVERS))
    async with client(script) as http:
        found = await fetch_agent_servers(ENDPOINT, http)
    assert found is not None and found.supports_vision("m/one") is True
    request = script.seen[0]
    assert (request.method, str(request.url)) == ("GET", "https://conol.test/api/agent-servers")
    assert request.headers["accept"] == "application/json"
    assert request.headers["referer"] == "https://conol.test/home"
    assert request.headers["cookie"] == f"__Secure-better-auth.session_token={TOKEN}"
    assert SECRET not in repr(found)


async def test_404_means_not_offered():
    async with client(Script((404, {"error": "Not found"}))) as http:
        assert await fetch_agent_servers(ENDPOINT, http) is None


@pytest.mark.parametrize(
    "status, body, expected",
    [
        (
            500,
            {"error": f"boom apiKey={SECRET} token={TOKEN}"},
            "conol failed while listing the agent servers (500)",
        ),
        (
            200,
            {"oops": SECRET},
            "conol's agent-servers answer is unreadable: expected a list of agent servers",
        ),
        (
            200,
            b"<html>" + SECRET.encode(),
            "conol's agent-servers answer is unreadable: the answer is not JSON",
        ),
    ],
)
async def test_failures_never_quote_the_answer(status, body, expected):
    async with client(Script((status, body))) as http:
        with pytest.raises(UpstreamError) as caught:
            await fetch_agent_servers(ENDPOINT, http)
    assert caught.value.message.startswith(expected)
    assert SECRET not in caught.value.message and TOKEN not in caught.value.message
    assert SECRET not in repr(caught.value)


async def test_the_cache_never_waits_and_serves_what_the_background_refresh_found():
    script = Script((200, SERVERS))
    script.gate = asyncio.Event()
    cache = DiscoveryCache()
    async with client(script) as http:
        assert cache.current(ENDPOINT, http, "startup") is None  # returns at once: the answer is held back
        assert cache.current(ENDPOINT, http, "startup") is None  # and starts no second fetch
        script.gate.set()
        await cache.settle()
        found = cache.current(ENDPOINT, http, "startup")
        assert found is not None and found.supports_vision("m/one") is True
        assert cache.current(ENDPOINT, http, "startup") is found  # startup: once
        assert cache.current(ENDPOINT, http, "off") is None
        await cache.settle()
    assert len(script.seen) == 1
    assert SECRET not in repr(cache)


async def test_a_failed_refresh_keeps_what_was_known_and_logs_no_secret(caplog):
    caplog.set_level(logging.INFO, logger="litellm_conol.discovery")
    script = Script((200, SERVERS), (500, {"error": SECRET}))
    cache = DiscoveryCache()
    async with client(script) as http:
        cache.current(ENDPOINT, http, "interval", interval=60)
        await cache.settle()
        known = cache.current(ENDPOINT, http, "interval", interval=60)
        entry = next(iter(cache._entries.values()))
        entry.next_due = 0.5  # due now (a monotonic time long past): the next read refreshes
        assert cache.current(ENDPOINT, http, "interval", interval=60) is known
        await cache.settle()
        assert cache.current(ENDPOINT, http, "interval", interval=60) is known
    assert len(script.seen) == 2
    assert (
        "conol model discovery failed (the catalog decides meanwhile): conol failed while listing"
        in caplog.text
    )
    assert SECRET not in caplog.text and TOKEN not in caplog.text


async def test_accounts_are_kept_apart():
    script = Script((200, SERVERS))
    cache = DiscoveryCache()
    async with client(script) as http:
        cache.current(ENDPOINT, http, "startup")
        cache.current(Endpoint("https://conol.test", "other-token"), http, "startup")
        await cache.settle()
    assert len(script.seen) == 2
    assert all(TOKEN not in str(key) for key in cache._entries)
