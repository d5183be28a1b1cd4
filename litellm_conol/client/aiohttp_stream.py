"""The one place that touches LiteLLM's and aiohttp's internals (import-linter allows it alone).

LiteLLM runs its providers on its own aiohttp-based httpx transport; we share that pool (see
``client/pool.py`` for why) and, for the event stream, read aiohttp's buffer directly. Each helper here
degrades to plain httpx when the internals it looks for are not there, so a LiteLLM release that
moves them costs speed, never correctness (``tests/unit/test_aiohttp_internals.py`` fails loudly
when they move).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx


def litellm_transport() -> httpx.AsyncBaseTransport | None:
    """LiteLLM's own async transport for its providers (aiohttp by default), or None when LiteLLM
    would use httpx's (``litellm.disable_aiohttp_transport``)."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    transport: httpx.AsyncBaseTransport | None = AsyncHTTPHandler.create_async_transport()
    if transport is not None and not isinstance(transport, httpx.AsyncHTTPTransport):
        return transport
    return None


def body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as the socket delivers it.

    On LiteLLM's aiohttp transport, read aiohttp's buffer whole (``iter_any``) rather than through
    the transport's 16 KB re-chunking and httpx's stream layers: a snapshot of hundreds of KB is
    then one or two reads, not dozens (half the CPU of a long answer, bench/RESULTS.md).
    Everywhere else, and if the body is encoded after all, httpx's decoded bytes.
    """
    aiohttp_response = aiohttp_response_of(response)
    encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
    if aiohttp_response is None or encoded:
        return response.aiter_bytes()
    return _aiohttp_chunks(aiohttp_response)


async def _aiohttp_chunks(aiohttp_response: Any) -> AsyncIterator[bytes]:
    from litellm.llms.custom_httpx.aiohttp_transport import map_aiohttp_exceptions

    try:
        with map_aiohttp_exceptions():  # aiohttp's errors as httpx's, as the transport does
            async for chunk in aiohttp_response.content.iter_any():
                yield chunk
    finally:
        aiohttp_response.close()  # an unfinished stream's connection is not reused


def aiohttp_response_of(response: httpx.Response) -> Any:
    """The aiohttp response under LiteLLM's transport, or None (httpcore, or internals moved).

    httpx wraps the transport's stream in its own (``BoundAsyncStream._stream``) once sent.
    """
    stream: Any = response.stream
    for _ in range(3):  # the transport's stream, under at most a couple of httpx wrappers
        found = getattr(stream, "_aiohttp_response", None)
        if found is not None:
            return found
        stream = getattr(stream, "_stream", None)
        if stream is None:
            return None
    return None


def socket_of(response: httpx.Response) -> Any:
    """The response's socket (for ``EventStream.abort``), on httpcore or aiohttp; None if hidden."""
    network = response.extensions.get("network_stream")
    if network is not None:
        return network.get_extra_info("socket")
    connection = getattr(aiohttp_response_of(response), "connection", None)
    transport = getattr(connection, "transport", None)
    return transport.get_extra_info("socket") if transport is not None else None


def pooled_connections(client: httpx.AsyncClient) -> int | None:
    """Connections the client's pool holds (idle or busy), or None if the pool is not inspectable.

    For leak tests and the benchmark; reads the pools' internals, which may move between versions.
    """
    transport = getattr(client, "_transport", None)
    session = getattr(transport, "client", None)
    if callable(session):  # LiteLLM's aiohttp transport before its first request: a factory
        return 0
    connector = getattr(session, "connector", None)
    if connector is not None:  # LiteLLM's aiohttp transport
        idle = sum(len(conns) for conns in getattr(connector, "_conns", {}).values())
        return idle + len(getattr(connector, "_acquired", ()))
    pool = getattr(transport, "_pool", None)
    if pool is not None:  # httpcore
        return len(getattr(pool, "connections", ()) or ())
    return None
