"""The conol protocol over HTTP: create a session, read its events, poll its status.

The session token travels only in the ``Cookie`` header of requests to ``base_url``. The driver
and the ops commands depend on :class:`SessionTransport`, a small Protocol: ``Transport`` is the
HTTP implementation, and tests script an in-memory one (httpx's ``MockTransport`` idea, one level up).
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from pydantic import ValidationError

from ..core.config.settings_table import DEFAULT_MAX_CONCURRENT_POLLS
from ..core.errors import AuthenticationFailed, ConolError, UpstreamError
from ..core.protocol import paths
from ..core.protocol.account import judge_auth
from ..core.protocol.endpoint import Endpoint
from ..core.protocol.follow_up import TurnBody
from ..core.protocol.sse import SSEDecoder
from ..core.protocol.wire import CreateSessionBody, CreateSessionResult, SessionStatus
from .aiohttp_stream import body_chunks, socket_of
from .http_errors import error_for_response, error_for_transport
from .pool import poll_slots

# The event stream's content types we read: SSE, and the line-per-event framings other clients parse
# (NDJSON, ``message\t`` lines; docs/protocol.md#stream), which a server would label as one of the others. An
# HTML page (a login or checkpoint page) is none of them.
STREAM_CONTENT_TYPES = frozenset(
    {"text/event-stream", "application/x-ndjson", "application/jsonl", "application/json", "text/plain"}
)

_OTHER_STREAM_TYPES = ", ".join(sorted(STREAM_CONTENT_TYPES - {"text/event-stream"}))


class EventSource(Protocol):
    """An open event stream: async-iterate it for ``data`` payloads; ``abort()`` drops it now."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    def abort(self) -> None: ...


class SessionTransport(Protocol):
    """What the driver needs of conol: the protocol's calls, nothing of HTTP. ``endpoint`` names the
    token, which the driver masks out of any error as a last line of defence."""

    endpoint: Endpoint

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]: ...

    async def get_status(self, session_id: str) -> str | None: ...

    def event_stream(self, session_id: str) -> AbstractAsyncContextManager[EventSource]: ...


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
    """:class:`SessionTransport` over HTTP, plus the token check and raw ``GET`` the ops commands use."""

    endpoint: Endpoint
    client: httpx.AsyncClient
    request_timeout: float = 30.0
    max_concurrent_polls: int = DEFAULT_MAX_CONCURRENT_POLLS

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        headers = self.endpoint.headers() | {"Content-Type": "application/json"}
        response = await self._send(
            "POST", paths.SESSIONS, "creating the session", headers=headers, content=body.to_json()
        )
        if not response.is_success:
            raise self._error(response, "creating the session")
        return _parse_created(response)

    async def post_turn(self, session_id: str, body: TurnBody) -> None:
        """A turn on an existing session (docs/protocol.md#follow-up-turns): any 2xx is accepted, its body
        ignored."""
        doing = "sending the turn to the session"
        headers = self.endpoint.headers() | {"Content-Type": "application/json"}
        path = paths.session_messages(session_id)
        response = await self._send("POST", path, doing, headers=headers, content=body.to_json())
        if not response.is_success:
            raise self._error(response, doing)

    async def set_model(self, session_id: str, body: dict[str, Any]) -> bool:
        """``POST /api/sessions/{id}/model``: whether conol answered ``{"ok": true}``
        (docs/protocol.md#model-pinning)."""
        doing = "pinning the session's model"
        headers = self.endpoint.headers() | {"Content-Type": "application/json"}
        content = json.dumps(body).encode()
        response = await self._send(
            "POST", paths.session_model(session_id), doing, headers=headers, content=content
        )
        if response.status_code in (401, 403):
            raise self._error(response, doing)
        try:
            answer = json.loads(response.content)
        except ValueError:
            return False
        return response.is_success and isinstance(answer, dict) and answer.get("ok") is True

    async def check_token(self) -> None:
        """Whether the session token is alive (``GET /api/auth/get-session``): no session, nothing billed.

        Raises what a chat request with this token would: 401 → ``AuthenticationFailed``, 403 →
        ``PermissionDenied``, 429 / 5xx / unreachable → their errors. Of a 200 (``judge_auth``): no
        user behind the token → ``AuthenticationFailed``; a body that is not JSON (a checkpoint page)
        or of an unknown shape → ``UpstreamError``, transient, never "dead".
        """
        doing = "checking the session token"
        response = await self._send("GET", paths.GET_SESSION, doing, headers=self.endpoint.headers())
        if not response.is_success:
            raise self._error(response, doing)
        answer = judge_auth(response.status_code, response.content)
        if answer.verdict == "dead":
            raise AuthenticationFailed(
                f"conol knows no session for the token while {doing} ({answer.detail}): it is invalid "
                "or expired. Set a fresh CONOL_SESSION_TOKEN (or api_key)."
            )
        if answer.verdict != "alive":
            raise UpstreamError(f"conol's answer while {doing}: {answer.detail}")

    async def get_status(self, session_id: str) -> str | None:
        """The session's status, or ``None`` when the poll failed for a transient reason."""
        try:
            async with poll_slots(self.max_concurrent_polls):
                response = await self._send(
                    "GET",
                    paths.session(session_id),
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

    async def get_raw(self, path: str, doing: str) -> tuple[int, bytes, dict[str, str]]:
        """``GET path`` as is: its HTTP status, body and headers, for checks that judge the answer
        themselves (``core.protocol.account.judge_auth``). Only unreachable raises."""
        response = await self._send("GET", path, doing, headers=self.endpoint.headers())
        return response.status_code, response.content, dict(response.headers)

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
            # With gzip the real service buffers the stream into large bursts (docs/protocol.md#stream).
            "Accept-Encoding": "identity",
            "Cache-Control": "no-cache",
        }
        url = self.endpoint.url(paths.session_messages(session_id))
        try:
            async with self.client.stream("GET", url, params={"logDeltas": "1"}, headers=headers) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._error(response, "opening the event stream")
                content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if content_type not in STREAM_CONTENT_TYPES:
                    raise UpstreamError(
                        "conol answered the event-stream request with "
                        f"{content_type or 'no content type'} instead of text/event-stream "
                        f"(or another type of event lines: {_OTHER_STREAM_TYPES})"
                    )
                yield body_chunks(response), socket_of(response)
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


async def _payloads(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    decoder = SSEDecoder()
    async for chunk in chunks:
        for payload in decoder.feed(chunk):
            yield payload
