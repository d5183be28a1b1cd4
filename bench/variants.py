"""Prototype transports for the conol handler, to measure levers without editing ``_transport.py``
or ``_driver.py`` (another engineer owns them). Nothing here is used outside the benchmark.

Two independent levers, combined into providers the benchmark registers next to ``conol``:

* connection pool — ``httpx``: the project's ``shared_client()`` (httpcore's pool, whose bookkeeping
  is O(n²) in open connections, encode/httpcore#1035); ``aiohttp``: the same ``httpx.AsyncClient``
  API over LiteLLM's ``LiteLLMAiohttpTransport`` (an aiohttp pool and its C HTTP parser), which is
  what LiteLLM 1.108's own ``openai/`` provider uses by default. Same settings as
  ``shared_client()``: no cookie jar, no read timeout, no proxy environment.
* SSE decoding — ``httpx_sse``: the project's ``aconnect_sse`` (bytes → text → lines → joined field
  values, several copies of every byte); ``bytes``: :func:`sse_payloads`, which splits raw bytes
  and hands each ``data`` payload to ``parse_event`` as bytes.

Providers: ``conolaio`` (aiohttp pool, httpx_sse), ``conolfast`` (aiohttp pool, bytes SSE),
``conolbytes`` (httpx pool, bytes SSE).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from litellm.types.utils import ModelResponseStream

from litellm_conol import _handler, _transport
from litellm_conol._handler import ConolLLM
from litellm_conol._transformation import ChunkMaker, estimate_usage, result_fields
from litellm_conol._transport import Transport, error_for_response, error_for_transport

_aiohttp_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def aiohttp_client() -> httpx.AsyncClient:
    """One httpx.AsyncClient over an aiohttp pool per event loop (as ``shared_client()`` does for httpx)."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    loop = asyncio.get_running_loop()
    client = _aiohttp_clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            transport=AsyncHTTPHandler.create_aiohttp_transport(),
            cookies=_transport._no_cookies(),
            timeout=httpx.Timeout(connect=10.0, read=None, write=10.0, pool=10.0),
            trust_env=False,
        )
        _aiohttp_clients[loop] = client
    return client


_httpx2_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def httpx2_client() -> Any:
    """The same settings on ``httpx2`` (a fork whose httpcore2 pool assigns in O(N+M), not O(N·M))."""
    import http.cookiejar

    import httpx2

    loop = asyncio.get_running_loop()
    client = _httpx2_clients.get(loop)
    if client is None or client.is_closed:
        jar = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        client = httpx2.AsyncClient(
            cookies=httpx2.Cookies(jar),
            timeout=httpx2.Timeout(connect=10.0, read=None, write=10.0, pool=10.0),
            limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=200),
            trust_env=False,
        )
        _httpx2_clients[loop] = client
    return client


def client_for(pool: str) -> httpx.AsyncClient:
    if pool == "aiohttp":
        return aiohttp_client()
    if pool == "httpx2":
        return httpx2_client()  # type: ignore[no-any-return]  # duck-typed: same API as httpx
    return _transport.shared_client()


def pool_connections(pool: str) -> int | None:
    """Connections held by the pool on the running loop (None if not inspectable)."""
    try:
        client = client_for(pool)
        if pool == "aiohttp":
            session = client._transport.client  # type: ignore[attr-defined]
            connector = None if callable(session) else session.connector
            if connector is None:
                return None
            return sum(len(c) for c in connector._conns.values()) + len(connector._acquired)
        return len(client._transport._pool.connections)  # type: ignore[attr-defined]
    except Exception:
        return None


# --- SSE straight from bytes ------------------------------------------------------------------------


async def sse_payloads(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The ``data`` payloads of an SSE byte stream (comments, ``event``/``id``/``retry`` dropped).

    Lines end at ``\\n`` (a trailing ``\\r`` is dropped, so ``\\r\\n`` works); an event ends at a blank
    line; several ``data`` lines are joined with ``\\n``; an unfinished event at EOF is dropped — the
    same results as httpx_sse for every stream that does not use bare ``\\r`` line ends. A payload
    that fits in one read is one slice of that read; a longer one is two copies, whatever its size.
    """
    pending = bytearray()
    data: list[bytes] = []
    async for chunk in chunks:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                pending += chunk[start:] if start else chunk
                break
            if pending:
                pending += chunk[start:nl]
                line = bytes(pending)
                pending.clear()
            else:
                line = chunk[start:nl]
            start = nl + 1
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield data[0] if len(data) == 1 else b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            # comments (":"), and the event / id / retry fields: nothing the driver uses


@dataclass
class BytesTransport(Transport):
    """``Transport`` whose event stream yields raw ``data`` payloads (``parse_event`` takes bytes)."""

    @asynccontextmanager
    async def event_stream(self, session_id: str) -> AsyncIterator[Any]:
        headers = self.endpoint.headers() | {
            "Accept": "text/event-stream",
            "Accept-Encoding": "identity",
            "Cache-Control": "no-cache",
        }
        url = self.endpoint.url(f"/api/sessions/{session_id}/messages")
        try:
            async with self.client.stream("GET", url, params={"logDeltas": "1"}, headers=headers) as response:
                if not response.is_success:
                    await response.aread()
                    raise error_for_response(response, "opening the event stream")
                content_type = response.headers.get("content-type", "").partition(";")[0]
                if "text/event-stream" not in content_type:
                    raise httpx.TransportError(f"expected text/event-stream, got {content_type!r}")
                payloads = sse_payloads(response.aiter_bytes())
                event_stream = getattr(_transport, "EventStream", None)  # the transport's wrapper, if any
                if event_stream is None:
                    yield payloads  # type: ignore[misc]
                else:
                    network = response.extensions.get("network_stream")
                    raw_socket = network.get_extra_info("socket") if network is not None else None
                    yield event_stream(payloads, raw_socket)
        except httpx.HTTPError as exc:
            raise error_for_transport(exc, "reading the event stream") from None


_native_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def native_session() -> Any:
    """A plain aiohttp ClientSession per loop (no cookie jar, no env proxies), for the event stream."""
    import aiohttp

    loop = asyncio.get_running_loop()
    session = _native_sessions.get(loop)
    if session is None or session.closed:
        session = aiohttp.ClientSession(
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10.0, sock_read=None),
            trust_env=False,
            auto_decompress=True,
        )
        _native_sessions[loop] = session
    return session


@dataclass
class NativeStreamTransport(Transport):
    """The event stream read with aiohttp directly (``iter_any``: whatever the socket has, no 16 KB
    re-chunking through httpx's stream layers), split by :func:`sse_payloads`; the rest unchanged."""

    @asynccontextmanager
    async def event_stream(self, session_id: str) -> AsyncIterator[Any]:
        import aiohttp

        headers = self.endpoint.headers() | {
            "Accept": "text/event-stream",
            "Accept-Encoding": "identity",
            "Cache-Control": "no-cache",
        }
        url = self.endpoint.url(f"/api/sessions/{session_id}/messages")
        try:
            async with native_session().get(url, params={"logDeltas": "1"}, headers=headers) as response:
                if response.status >= 300:
                    raise httpx.HTTPError(f"HTTP {response.status} opening the event stream")
                content_type = response.headers.get("content-type", "").partition(";")[0]
                if "text/event-stream" not in content_type:
                    raise httpx.TransportError(f"expected text/event-stream, got {content_type!r}")
                payloads = sse_payloads(response.content.iter_any())
                event_stream = getattr(_transport, "EventStream", None)
                if event_stream is None:
                    yield payloads
                else:
                    conn = response.connection
                    raw = conn.transport.get_extra_info("socket") if conn and conn.transport else None
                    yield event_stream(payloads, raw)
        except (aiohttp.ClientError, httpx.HTTPError) as exc:
            raise error_for_transport(httpx.TransportError(str(exc)), "reading the event stream") from None


class VariantConolLLM(ConolLLM):
    """``ConolLLM`` with another pool and/or SSE decoder (everything else is the project's code)."""

    def __init__(self, pool: str, sse: str) -> None:
        super().__init__()
        self.pool, self.sse = pool, sse

    async def astreaming(
        self, model: str, messages: list[Any], api_base: str | None = None, **kwargs: Any
    ) -> AsyncIterator[ModelResponseStream]:
        request = _handler._request(model, messages, api_base, kwargs)
        run = _handler._session_run(request)
        kind = {"bytes": BytesTransport, "native": NativeStreamTransport}.get(self.sse, Transport)
        run.transport = kind(request.endpoint, client_for(self.pool))
        maker = ChunkMaker(model=request.model)
        async for chunk in _handler._chunks(request, run, maker):
            yield chunk
        fields = result_fields(run.info, run.assembler, run.stats)
        for chunk in maker.closing(run.assembler, fields, estimate_usage(messages, run.assembler)):
            yield chunk


VARIANTS = {
    "conolx2": ("httpx2", "httpx_sse"),
    "conolaio": ("aiohttp", "httpx_sse"),
    "conolfast": ("aiohttp", "bytes"),
    "conolbytes": ("httpx", "bytes"),
    "conolnative": ("aiohttp", "native"),
}
HANDLERS: dict[str, ConolLLM] = {name: VariantConolLLM(*kind) for name, kind in VARIANTS.items()}


def handler_for(provider: str) -> ConolLLM:
    return HANDLERS.get(provider) or _handler.conol_llm


# names the proxy config can point at (custom_handler: bench.variants.<provider>_llm)
conolx2_llm, conolaio_llm = HANDLERS["conolx2"], HANDLERS["conolaio"]
conolfast_llm, conolbytes_llm = HANDLERS["conolfast"], HANDLERS["conolbytes"]
conolnative_llm = HANDLERS["conolnative"]
