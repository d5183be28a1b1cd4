"""The only place that talks HTTP: create a session, read its events, poll its status.

One ``httpx.AsyncClient`` per event loop is shared by all requests on that loop (connection
reuse). The session token travels only in the ``Cookie`` header of requests to ``base_url``; the
client keeps no cookie jar, so nothing a server sets can leak from one user's request to another.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from httpx_sse import aconnect_sse
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
from ._wire import CreateSessionBody, CreateSessionResult, SessionStatus

COOKIE_NAME = "__Secure-better-auth.session_token"
DEFAULT_BASE_URL = "https://conol.ai"

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


def _no_cookies() -> httpx.Cookies:
    return httpx.Cookies(
        http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    )


def shared_client() -> httpx.AsyncClient:
    """The pooled client of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            cookies=_no_cookies(),
            # The event stream is read without a read timeout: the driver enforces its own budgets.
            timeout=httpx.Timeout(connect=10.0, read=None, write=10.0, pool=10.0),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200),
            trust_env=False,
        )
        _clients[loop] = client
    return client


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


@dataclass
class Transport:
    endpoint: Endpoint
    client: httpx.AsyncClient
    request_timeout: float = 30.0

    async def create_session(self, body: CreateSessionBody) -> tuple[str, CreateSessionResult]:
        headers = self.endpoint.headers() | {"Content-Type": "application/json"}
        response = await self._send(
            "POST", "/api/sessions", "creating the session", headers=headers, content=body.to_json()
        )
        if not response.is_success:
            raise error_for_response(response, "creating the session")
        try:
            result = CreateSessionResult.model_validate_json(response.content)
        except ValidationError as exc:
            raise UpstreamError(
                "conol's create-session response is not the expected JSON object "
                f"({exc.error_count()} problems)"
            ) from None
        session_id = result.resolved_id()
        if not session_id:
            keys = sorted((result.model_extra or {}).keys() | result.model_fields_set)
            raise UpstreamError(
                f"conol's create-session response has no session id (looked for sessionId, id, session.id; "
                f"keys present: {keys})"
            )
        return session_id, result

    async def get_status(self, session_id: str) -> str | None:
        """The session's status, or ``None`` when the poll failed for a transient reason."""
        try:
            response = await self._send(
                "GET",
                f"/api/sessions/{session_id}",
                "polling the session status",
                headers=self.endpoint.headers(),
            )
        except ConolError:
            return None
        if response.status_code in (401, 403):
            raise error_for_response(response, "polling the session status")
        if not response.is_success:
            return None
        try:
            return SessionStatus.model_validate_json(response.content).status
        except ValidationError:
            return None

    @asynccontextmanager
    async def event_stream(self, session_id: str) -> AsyncIterator[AsyncIterator[str]]:
        """The session's SSE ``data`` payloads (heartbeat comments are dropped by the decoder)."""
        headers = self.endpoint.headers() | {
            "Accept": "text/event-stream",
            # With gzip the real service buffers the stream into large bursts (spec §2.3).
            "Accept-Encoding": "identity",
            "Cache-Control": "no-cache",
        }
        url = self.endpoint.url(f"/api/sessions/{session_id}/messages")
        try:
            async with aconnect_sse(
                self.client, "GET", url, params={"logDeltas": "1"}, headers=headers
            ) as source:
                if not source.response.is_success:
                    await source.response.aread()
                    raise error_for_response(source.response, "opening the event stream")
                yield (sse.data async for sse in source.aiter_sse())
        except httpx.HTTPError as exc:
            raise error_for_transport(exc, "reading the event stream") from None

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
            raise error_for_transport(exc, doing) from None


# --- error classification -----------------------------------------------------------------------


def error_for_response(response: httpx.Response, doing: str) -> ConolError:
    """An upstream HTTP error status → the exception that makes LiteLLM and its Router do the right thing."""
    code = response.status_code
    detail = _short_detail(response)
    if code == 401:
        return AuthenticationFailed(
            f"conol rejected the session token while {doing} (401): it is invalid or expired. "
            "Set a fresh CONOL_SESSION_TOKEN (or api_key)."
        )
    if code == 403:
        return PermissionDenied(
            f"conol refused access while {doing} (403): the session token lacks permission."
        )
    if code == 429:
        retry_after = response.headers.get("retry-after")
        headers = {"retry-after": retry_after} if retry_after else {}
        hint = f" Retry after {retry_after} s." if retry_after else ""
        return RateLimited(f"conol rate-limited the request while {doing} (429).{hint}", headers=headers)
    if 400 <= code < 500:
        return BadRequest(f"conol rejected the request while {doing} ({code}){detail}", status_code=code)
    if code == 503:
        return UpstreamUnavailable(f"conol is unavailable while {doing} (503){detail}")
    return UpstreamError(
        f"conol failed while {doing} ({code}){detail}", status_code=code if code >= 500 else 502
    )


def error_for_transport(exc: httpx.HTTPError, doing: str) -> ConolError:
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeout(f"conol did not answer in time while {doing} ({type(exc).__name__})")
    return UpstreamUnavailable(f"could not reach conol while {doing}: {type(exc).__name__}: {exc}")


def _short_detail(response: httpx.Response) -> str:
    # Only the start of conol's own error text: enough to explain, too little to echo a request.
    try:
        text = response.text.strip()
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    return f": {text[:200]}" if text else ""
