"""Classifying HTTP failures: an upstream status or a transport error → the exception that makes
LiteLLM and its Router do the right thing (retry, cool down, fall back, or tell the caller).

Anything quoted from a response is short and has the session token masked out: a broken upstream
may echo the request, cookie included.
"""

from __future__ import annotations

import html
import json
import re

import httpx

from ..core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConolError,
    PermissionDenied,
    RateLimited,
    RequestTimeout,
    UpstreamError,
    UpstreamUnavailable,
)


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
