"""The LiteLLM/aiohttp internals ``litellm_conol/client/aiohttp_stream.py`` relies on are where it looks.

If a LiteLLM release moves them, the fast path silently degrades to plain httpx (slower, still
correct); these tests make that move loud instead. No socket is opened: the response stream is
built around a stand-in aiohttp response.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from litellm.llms.custom_httpx import aiohttp_transport

from litellm_conol.client.aiohttp_stream import aiohttp_response_of, litellm_transport, pooled_connections

pytestmark = pytest.mark.timeout(60)


class _StandInAiohttpResponse:
    content: Any = None


def test_litellm_gives_its_aiohttp_transport_by_default() -> None:
    transport = litellm_transport()
    assert isinstance(transport, aiohttp_transport.LiteLLMAiohttpTransport)


def test_the_aiohttp_response_is_found_under_httpx_wrappers() -> None:
    raw = _StandInAiohttpResponse()
    stream = aiohttp_transport.AiohttpResponseStream(raw)  # type: ignore[arg-type]
    response = httpx.Response(200, stream=stream)
    assert aiohttp_response_of(response) is raw


def test_a_plain_httpx_response_has_no_aiohttp_response() -> None:
    assert aiohttp_response_of(httpx.Response(200, content=b"x")) is None


def test_aiohttp_errors_are_mapped_to_httpx_errors() -> None:
    import aiohttp

    with pytest.raises(httpx.ReadError), aiohttp_transport.map_aiohttp_exceptions():
        raise aiohttp.ClientPayloadError("cut")


async def test_the_pool_of_a_fresh_litellm_transport_is_inspectable() -> None:
    client = httpx.AsyncClient(transport=litellm_transport())
    try:
        assert pooled_connections(client) == 0
    finally:
        await client.aclose()
