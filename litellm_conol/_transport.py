"""The only place that talks HTTP: create a session, read its events, poll its status.

One ``httpx.AsyncClient`` per event loop is shared by all requests on that loop (connection
reuse). The session token travels only in the ``Cookie`` header of requests to ``base_url``; the
client keeps no cookie jar, so nothing a server sets can leak from one user's request to another.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import http.cookiejar
import json
import os
import re
import socket
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from ._errors import (
    AuthenticationFailed,
    BadRequest,
    ConolError,
    PermissionDenied,
    RateLimited,
    RequestTimeout,
    UpstreamError,
    UpstreamUnavailable,
)
from ._sse import SSEDecoder
from ._wire import AuthSession, CreateSessionBody, CreateSessionResult, SessionStatus

COOKIE_NAME = "__Secure-better-auth.session_token"
DEFAULT_BASE_URL = "https://conol.ai"

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)
_poll_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)
DEFAULT_MAX_CONCURRENT_POLLS = 16


def _no_cookies() -> httpx.Cookies:
    return httpx.Cookies(
        http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    )


def _pool() -> httpx.AsyncBaseTransport:
    """The connection pool under the shared client: LiteLLM's own choice for its providers.

    By default that is LiteLLM's aiohttp transport (what ``openai/…`` runs on; it keeps no cookies
    either). httpcore's pool does O(n²) bookkeeping per request in open connections
    (encode/httpcore#1035), and a conol request holds two (events + create/poll), so at 200
    concurrent streams it doubled latency and CPU (bench/RESULTS.md). With LiteLLM's aiohttp
    transport turned off (``litellm.disable_aiohttp_transport``) we use httpx's own pool.
    """
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    transport: httpx.AsyncBaseTransport | None = AsyncHTTPHandler.create_async_transport()
    if transport is not None and not isinstance(transport, httpx.AsyncHTTPTransport):
        return transport  # LiteLLM's aiohttp transport
    return httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200))


def shared_client() -> httpx.AsyncClient:
    """The pooled client of the running event loop (created on first use, closed with the loop)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            transport=_pool(),
            cookies=_no_cookies(),
            # The event stream is read without a read timeout: the driver enforces its own budgets.
            timeout=httpx.Timeout(connect=10.0, read=None, write=10.0, pool=10.0),
            trust_env=False,
        )
        _clients[loop] = client
        _close_with_loop(client)
    return client


def poll_slots(limit: int = DEFAULT_MAX_CONCURRENT_POLLS) -> asyncio.Semaphore:
    """How many status polls may be in flight at once on the running loop (all sessions together;
    ``limit`` applies when the loop's first poll creates it).

    Quiet sessions started together poll together; each poll in flight holds a pooled connection
    besides its session's event stream, and an idle connection stays in the pool afterwards. A
    burst of 100 polls kept 100 extra sockets open, 12 KB of memory per stream (bench/RESULTS.md);
    a poll takes milliseconds, so 16 at a time serve hundreds of quiet sessions.
    """
    loop = asyncio.get_running_loop()
    slots = _poll_slots.get(loop)
    if slots is None:
        slots = asyncio.Semaphore(limit)
        _poll_slots[loop] = slots
    return slots


def _close_with_loop(client: httpx.AsyncClient) -> None:
    """Close ``client`` when its loop shuts down (``asyncio.run`` and the proxy's lifespan end).

    asyncio has no shutdown hook for arbitrary objects, but it does close every async generator
    still suspended (``loop.shutdown_asyncgens()``): park one that closes the client on exit. So
    code that calls ``asyncio.run`` per request leaves no pooled connections behind.
    """

    async def closer() -> AsyncIterator[None]:
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()

    parked = closer()
    _parked_closers[client] = parked
    asyncio.get_running_loop().create_task(_start(parked))


_parked_closers: weakref.WeakKeyDictionary[httpx.AsyncClient, AsyncIterator[None]] = (
    weakref.WeakKeyDictionary()
)


async def _start(generator: AsyncIterator[None]) -> None:
    await generator.__anext__()  # runs to the yield; the loop's shutdown_asyncgens() resumes it


def _forget_after_fork() -> None:
    """In a forked child: drop the parent's pooled clients and poll slots, unclosed.

    Their connections' sockets are shared with the parent (closing or reusing them here would cut or
    cross the parent's streams), and their loops run only in the parent. Nothing is created at import
    time, so a child forked before first use (gunicorn, multiprocessing) starts clean anyway.
    """
    for client in list(_clients.values()):
        _parked_closers.pop(client, None)
    _clients.clear()
    _poll_slots.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


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


@dataclass(frozen=True)
class Endpoint:
    """Where conol is and how to authenticate. ``repr`` never shows the token."""

    base_url: str
    token: str = field(repr=False)

    def headers(self) -> dict[str, str]:
        origin = _origin(self.base_url)
        return {
            "Cookie": f"{COOKIE_NAME}={self.token}",
            "Origin": origin,
            "Referer": origin + "/",
        }

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


def _origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


class EventStream:
    """An open event stream: iterate it for ``data`` payloads; ``abort()`` drops the connection now."""

    __slots__ = ("_lines", "_socket")

    def __init__(self, lines: AsyncIterator[bytes], raw_socket: Any) -> None:
        self._lines = lines
        self._socket = raw_socket

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines

    def abort(self) -> None:
        """Shut the connection down at once, synchronously: conol sees it close even while this
        event loop is busy elsewhere (e.g. the proxy handling the client's disconnect). The reader
        still closes the response normally; the connection is never reused (an unfinished stream)."""
        raw_socket, self._socket = self._socket, None
        if raw_socket is None:
            return
        # shutdown() acts on the connection, not the descriptor: do it through a duplicate, which
        # works for every loop's socket wrapper (uvloop's refuses shutdown()) and leaves the
        # original descriptor for the reader to close as usual.
        with (
            contextlib.suppress(OSError, AttributeError, ValueError, TypeError),
            socket.fromfd(raw_socket.fileno(), raw_socket.family, raw_socket.type) as duplicate,
        ):
            duplicate.shutdown(socket.SHUT_RDWR)


@dataclass
class Transport:
    endpoint: Endpoint
    client: httpx.AsyncClient
    request_timeout: float = 30.0
    max_concurrent_polls: int = DEFAULT_MAX_CONCURRENT_POLLS

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        headers = self.endpoint.headers() | {"Content-Type": "application/json"}
        response = await self._send(
            "POST", "/api/sessions", "creating the session", headers=headers, content=body.to_json()
        )
        if not response.is_success:
            raise self._error(response, "creating the session")
        return _parse_created(response)

    async def check_token(self) -> None:
        """Whether the session token is alive (``GET /api/auth/get-session``): no session, nothing billed.

        Raises what a chat request with this token would: 401 → ``AuthenticationFailed``, 403 →
        ``PermissionDenied``, 5xx / unreachable → their errors; a 200 without a session (a dead token,
        as better-auth reports it) → ``AuthenticationFailed``.
        """
        doing = "checking the session token"
        response = await self._send("GET", "/api/auth/get-session", doing, headers=self.endpoint.headers())
        if not response.is_success:
            raise self._error(response, doing)
        try:
            data = json.loads(response.content)
        except ValueError:  # a login or proxy page, not conol's answer
            raise UpstreamError(
                f"conol answered the session check with HTTP {response.status_code} but the body is not "
                f"JSON ({len(response.content)} bytes)"
            ) from None
        try:
            alive = isinstance(data, dict) and AuthSession.model_validate(data).session is not None
        except ValidationError:
            alive = False
        if not alive:
            raise AuthenticationFailed(
                f"conol knows no session for the token while {doing}: it is invalid or expired. "
                "Set a fresh CONOL_SESSION_TOKEN (or api_key)."
            )

    async def get_status(self, session_id: str) -> str | None:
        """The session's status, or ``None`` when the poll failed for a transient reason."""
        try:
            async with poll_slots(self.max_concurrent_polls):
                response = await self._send(
                    "GET",
                    f"/api/sessions/{session_id}",
                    "polling the session status",
                    headers=self.endpoint.headers(),
                )
        except ConolError:
            return None
        if response.status_code in (401, 403):
            raise self._error(response, "polling the session status")
        if not response.is_success:
            return None
        try:
            return SessionStatus.model_validate_json(response.content).status
        except ValidationError:
            return None

    async def get_json(self, path: str, doing: str) -> tuple[int, Any]:
        """``GET path`` as is: its HTTP status and JSON body (``None`` when not JSON), for checks that
        judge the answer's shape themselves (``litellm-conol doctor``). Only unreachable raises."""
        response = await self._send("GET", path, doing, headers=self.endpoint.headers())
        try:
            return response.status_code, json.loads(response.content)
        except ValueError:
            return response.status_code, None

    @asynccontextmanager
    async def event_stream(self, session_id: str) -> AsyncIterator[EventStream]:
        """The session's SSE ``data`` payloads, as bytes (comments and heartbeats dropped)."""
        async with self.event_stream_body(session_id) as (chunks, raw_socket):
            yield EventStream(_payloads(chunks), raw_socket)

    @asynccontextmanager
    async def event_stream_body(self, session_id: str) -> AsyncIterator[tuple[AsyncIterator[bytes], Any]]:
        """The opened and checked event stream: its body's chunks as read, and its socket."""
        headers = self.endpoint.headers() | {
            "Accept": "text/event-stream",
            # With gzip the real service buffers the stream into large bursts (spec §2.3).
            "Accept-Encoding": "identity",
            "Cache-Control": "no-cache",
        }
        url = self.endpoint.url(f"/api/sessions/{session_id}/messages")
        try:
            async with self.client.stream("GET", url, params={"logDeltas": "1"}, headers=headers) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._error(response, "opening the event stream")
                content_type = response.headers.get("content-type", "").partition(";")[0].strip()
                if "text/event-stream" not in content_type:
                    raise UpstreamError(
                        "conol answered the event-stream request with "
                        f"{content_type or 'no content type'} instead of text/event-stream"
                    )
                yield _body_chunks(response), _socket_of(response)
        except httpx.HTTPError as exc:
            raise error_for_transport(exc, "reading the event stream", secrets=self._secrets) from None

    async def _send(
        self, method: str, path: str, doing: str, *, headers: dict[str, str], content: bytes | None = None
    ) -> httpx.Response:
        try:
            return await self.client.request(
                method,
                self.endpoint.url(path),
                headers=headers,
                content=content,
                timeout=self.request_timeout,
            )
        except httpx.HTTPError as exc:
            raise error_for_transport(exc, doing, secrets=self._secrets) from None

    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self.endpoint.token,)

    def _error(self, response: httpx.Response, doing: str) -> ConolError:
        return error_for_response(response, doing, secrets=self._secrets)


def _parse_created(response: httpx.Response) -> tuple[str, CreateSessionResult]:
    """A 2xx create answer → (session id, result); a 502-style UpstreamError saying what is wrong.

    The error names what was wrong (not JSON, not an object, which keys were there), never the raw
    body: a broken upstream may echo the request, cookie included.
    """
    content_type = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    try:
        data = json.loads(response.content)
    except ValueError:
        raise UpstreamError(
            f"conol answered the create-session request with HTTP {response.status_code} but the body is "
            f"not JSON ({content_type}, {len(response.content)} bytes)"
        ) from None
    if not isinstance(data, dict):
        raise UpstreamError(
            f"conol's create-session response is JSON but not an object (got {type(data).__name__})"
        )
    try:
        result = CreateSessionResult.model_validate(data)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in error["loc"]) for error in exc.errors()})
        raise UpstreamError(
            f"conol's create-session response has fields of unexpected types: {', '.join(fields)}"
        ) from None
    session_id = result.resolved_id()
    if not session_id:
        raise UpstreamError(
            "conol's create-session response has no session id (looked for sessionId, id, session.id; "
            f"keys present: {sorted(data)[:20]})"
        )
    return session_id, result


# --- reading the event stream --------------------------------------------------------------------


async def _payloads(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    decoder = SSEDecoder()
    async for chunk in chunks:
        for payload in decoder.feed(chunk):
            yield payload


def _body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as the socket delivers it.

    On LiteLLM's aiohttp transport, read aiohttp's buffer whole (``iter_any``) rather than through
    the transport's 16 KB re-chunking and httpx's stream layers: a snapshot of hundreds of KB is
    then one or two reads, not dozens (half the CPU of a long answer, bench/RESULTS.md).
    Everywhere else, and if the body is encoded after all, httpx's decoded bytes.
    """
    aiohttp_response = _aiohttp_response_of(response)
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


def _aiohttp_response_of(response: httpx.Response) -> Any:
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


def _socket_of(response: httpx.Response) -> Any:
    """The response's socket (for ``EventStream.abort``), on httpcore or aiohttp; None if hidden."""
    network = response.extensions.get("network_stream")
    if network is not None:
        return network.get_extra_info("socket")
    connection = getattr(_aiohttp_response_of(response), "connection", None)
    transport = getattr(connection, "transport", None)
    return transport.get_extra_info("socket") if transport is not None else None


# --- error classification -----------------------------------------------------------------------


def error_for_response(response: httpx.Response, doing: str, *, secrets: tuple[str, ...] = ()) -> ConolError:
    """An upstream HTTP error status → the exception that makes LiteLLM and its Router do the right thing.

    ``secrets`` (the session token) are masked out of anything quoted from the response.
    """
    code = response.status_code
    detail = _short_detail(response, secrets)
    retry_after = response.headers.get("retry-after")
    # LiteLLM copies these to litellm_response_headers; the Router honours Retry-After.
    headers = {"retry-after": retry_after} if retry_after else {}
    if code == 401:
        return AuthenticationFailed(
            f"conol rejected the session token while {doing} (401): it is invalid or expired. "
            "Set a fresh CONOL_SESSION_TOKEN (or api_key)."
        )
    if code == 403:
        return PermissionDenied(
            f"conol refused access while {doing} (403): the session token is invalid or expired, or "
            "its account may not do this. Set a fresh CONOL_SESSION_TOKEN (or api_key)."
        )
    if code == 429:
        hint = f" Retry after {retry_after} s." if retry_after else ""
        return RateLimited(f"conol rate-limited the request while {doing} (429).{hint}", headers=headers)
    if 400 <= code < 500:
        return BadRequest(f"conol rejected the request while {doing} ({code}){detail}", status_code=code)
    if code == 503:
        return UpstreamUnavailable(f"conol is unavailable while {doing} (503){detail}", headers=headers)
    return UpstreamError(
        f"conol failed while {doing} ({code}){detail}",
        status_code=code if code >= 500 else 502,
        headers=headers,
    )


def error_for_transport(exc: httpx.HTTPError, doing: str, *, secrets: tuple[str, ...] = ()) -> ConolError:
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeout(f"conol did not answer in time while {doing} ({type(exc).__name__})")
    reason = _redact(str(exc), secrets)[:200] or "no details"
    return UpstreamUnavailable(f"could not reach conol while {doing}: {type(exc).__name__}: {reason}")


_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RE = re.compile(r"\s+")
DETAIL_LIMIT = 200


def _short_detail(response: httpx.Response, secrets: tuple[str, ...] = ()) -> str:
    """conol's own error text, briefly: its ``error``/``message`` field, or an HTML page's title.

    Enough to explain, too little to echo a request; the token is masked if it appears.
    """
    try:
        text = response.text.strip()
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    if not text:
        return ""
    detail = _json_error_text(text)
    if detail is None and text.startswith("<"):
        title = _TITLE_RE.search(text)
        detail = html.unescape(title.group(1) if title else _TAG_RE.sub(" ", text))
    detail = _SPACE_RE.sub(" ", detail if detail is not None else text).strip()
    detail = _redact(detail, secrets)
    if len(detail) > DETAIL_LIMIT:
        detail = detail[:DETAIL_LIMIT] + "…"
    return f": {detail}" if detail else ""


def _json_error_text(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("message")
            if isinstance(value, str) and value:
                return value
    return json.dumps(data, ensure_ascii=False)


def _redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
