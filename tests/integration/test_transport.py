"""The transport on LiteLLM's aiohttp pool (the default): the event stream is read from aiohttp
itself, and ``abort()`` drops the connection at once, before the reader has closed anything;
status polls share a bounded number of slots per event loop.

Both reach through httpx's wrapper around the transport's stream; if those internals moved, the
stream would still work (through httpx) but slower and without abort: these tests say so."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import aiohttp
import pytest
from support.timing import bound

from litellm_conol.client.aiohttp_stream import aiohttp_response_of
from litellm_conol.client.pool import shared_client
from litellm_conol.client.transport import Transport
from litellm_conol.core.config.options import build_request
from litellm_conol.fake import BUILTINS

pytestmark = pytest.mark.timeout(30)


async def open_session(conol_fake, marker: str) -> tuple[Transport, str]:
    request = build_request(
        model="claude-haiku-4-5",
        messages=[{"role": "user", "content": marker}],
        api_key=conol_fake.token,
        api_base=conol_fake.base_url,
        optional_params={},
        timeout=30.0,
    )
    transport = Transport(request.endpoint, shared_client())
    session_id, _ = await transport.create_session(request.body)
    return transport, session_id


async def test_the_event_stream_is_read_from_aiohttp_directly(conol_fake):
    transport, session_id = await open_session(conol_fake, "[[fake:done]]")
    response = await transport.client.get(f"{conol_fake.base_url}/api/models")
    found = aiohttp_response_of(response)  # found under httpx's BoundAsyncStream
    assert found is not None
    assert (type(found), str(found.url), found.status) == (
        aiohttp.ClientResponse,
        f"{conol_fake.base_url}/api/models",
        401,  # sent without the session cookie
    )
    async with transport.event_stream(session_id) as stream:
        payloads = []
        async for payload in stream:
            payloads.append(payload)
            if b'"type":"done"' in payload:
                break
    assert all(isinstance(p, bytes) for p in payloads)
    assert BUILTINS["done"].final_text.encode() in payloads[-2]


async def test_abort_closes_the_upstream_connection_before_the_reader_does(conol_fake):
    transport, session_id = await open_session(conol_fake, "[[fake:silence]]")
    async with transport.event_stream(session_id) as stream:
        assert await conol_fake.await_until(lambda: bool(conol_fake.last_session.connections), 5.0)
        assert stream._socket is not None
        aborted_at = time.time()
        stream.abort()  # synchronous: the loop does not run the reader in between
        assert await conol_fake.await_until(
            lambda: conol_fake.last_session.connections[-1].closed_at is not None, 1.0
        )
        connection = conol_fake.last_session.connections[-1]
        assert connection.closed_by == "client"
        assert connection.closed_at - aborted_at < bound(0.1)


async def test_polls_of_all_sessions_on_a_loop_share_a_bounded_number_of_slots(conol_fake):
    """Quiet sessions poll in lockstep: at most the limit are in flight; the rest wait their turn."""
    sessions = [await open_session(conol_fake, "[[fake:silence]]") for _ in range(12)]
    in_flight = peak = 0
    real_send = Transport._send

    async def counted_send(self, *args, **kwargs):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await asyncio.sleep(0.05)  # a slow upstream: every poll overlaps the others
            return await real_send(self, *args, **kwargs)
        finally:
            in_flight -= 1

    polls = [dataclasses.replace(t, max_concurrent_polls=3) for t, _ in sessions]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Transport, "_send", counted_send)
        statuses = await asyncio.gather(
            *(t.get_status(sid) for t, (_, sid) in zip(polls, sessions, strict=True))
        )
    assert statuses == ["running"] * 12
    assert peak == 3
