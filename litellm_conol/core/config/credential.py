"""The session token, from what a user pastes: the raw cookie value, its percent-encoded form, or a
whole ``Cookie:`` header copied from the browser (docs/protocol.md#authentication).
Pure; never echoes the value.

- A raw value (``<token>.<signature>``) is used as it is.
- A percent-encoded value (``abc.d%2Be%3D``, as browsers' cookie panels show it) is decoded: conol
  accepts both forms, and one canonical form is what the error masking and
  the fake compare.
- A ``Cookie`` header (with or without the ``Cookie:`` prefix) gives its
  ``__Secure-better-auth.session_token`` value, else the value of a
  ``__Secure-better-auth.session_token_multi-…`` cookie (the same value, docs/protocol.md#authentication).

A value holding CR, LF or ``;`` (after decoding) is refused: it would split the ``Cookie`` header we
send, and a token never contains one. Errors name the cookies a header had, never a value.
"""

from __future__ import annotations

from urllib.parse import unquote

from ..errors import MissingCredential
from ..protocol.endpoint import COOKIE_NAME

_MULTI_PREFIX = COOKIE_NAME + "_multi-"
_FORBIDDEN = ("\r", "\n", ";")
# Characters a cookie value cannot carry (RFC 6265 cookie-octet excludes them) besides the above.
_NOT_IN_COOKIE = frozenset(' ",\\') | frozenset(chr(c) for c in range(0x20)) | {"\x7f"}


def session_token(pasted: str) -> str:
    """The token to send as ``__Secure-better-auth.session_token``; ``MissingCredential`` (401) saying
    what is wrong with ``pasted`` otherwise (without quoting it)."""
    text = pasted.strip()
    if text[:7].lower() == "cookie:":
        return _from_header(text[7:])
    if "=" in text.split(";", 1)[0] and (";" in text or text.startswith("__Secure-")):
        return _from_header(text)  # a header without its "Cookie:" prefix
    return _checked(text, "the session token")


def _from_header(header: str) -> str:
    pairs = [pair.strip().partition("=") for pair in header.split(";") if pair.strip()]
    cookies = {name.strip(): value.strip() for name, _, value in pairs}
    if COOKIE_NAME in cookies:
        return _checked(cookies[COOKIE_NAME], f"the {COOKIE_NAME} cookie")
    multi = next((name for name in cookies if name.startswith(_MULTI_PREFIX)), None)
    if multi is not None:
        return _checked(cookies[multi], f"the {multi} cookie")
    names = ", ".join(sorted(cookies)[:12]) or "none"
    raise MissingCredential(
        f"the pasted Cookie header has no {COOKIE_NAME} cookie (cookies in it: {names}); paste the header "
        "of a request to conol.ai made while logged in, or just that cookie's value"
    )


def _checked(value: str, what: str) -> str:
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]  # a quoted cookie value (RFC 6265 allows the quotes)
    decoded = unquote(value) if "%" in value else value
    if any(c in decoded for c in _FORBIDDEN):
        raise MissingCredential(f"{what} contains CR, LF or ';', which no session token does: refused")
    if not decoded:
        raise MissingCredential(f"{what} is empty")
    bad = sorted({f"U+{ord(c):04X}" for c in decoded if c in _NOT_IN_COOKIE})
    if bad:
        raise MissingCredential(
            f"{what} contains characters a cookie cannot carry ({', '.join(bad[:5])}): "
            "copy the cookie's value alone"
        )
    return decoded
