"""The transport on LiteLLM's aiohttp pool (the default): the event stream is read from aiohttp
itself, and ``abort()`` drops the connection at once, before the reader has closed anything.

Both reach through httpx's wrapper around the transport's stream; if those internals moved, the
stream would still work (through httpx) but slower and without abort: these tests say so.
"""

from __future__ import annotations

import time

import pytest

from litellm_conol._options import build_request
from litellm_conol._transport import Transport, _aiohttp_response_of, shared_client
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
    assert _aiohttp_response_of(response) is not None  # found under httpx's BoundAsyncStream
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
        assert connection.closed_at - aborted_at < 0.1
