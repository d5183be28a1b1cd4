"""The credential as users paste it (docs/protocol.md#authentication): a raw token, a
percent-encoded token, or a whole ``Cookie:`` header; CR, LF and ``;`` inside a value are refused;
errors never quote the value."""

from __future__ import annotations

import pytest

from litellm_conol import MissingCredential
from litellm_conol.core.config.credential import session_token
from litellm_conol.core.config.options import build_request
from litellm_conol.core.protocol.endpoint import COOKIE_NAME

RAW = "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3.Xy+Z/abc=="
ENCODED = "q8w7e6r5t4y3u2i1o0p9a8s7d6f5g4h3.Xy%2BZ%2Fabc%3D%3D"


@pytest.mark.parametrize(
    "pasted",
    [
        RAW,
        f"  {RAW}\n",
        ENCODED,
        f'"{RAW}"',
        f"Cookie: {COOKIE_NAME}={ENCODED}",
        f"cookie: theme=dark; {COOKIE_NAME}={RAW}; conol_cookie_consent=1",
        f"theme=dark; {COOKIE_NAME}={ENCODED}",
        f"{COOKIE_NAME}={RAW}",
        f"Cookie: better-auth-passkey=x; {COOKIE_NAME}_multi-q8w7e6r5={ENCODED}",
    ],
)
def test_every_form_gives_the_raw_token(pasted):
    assert session_token(pasted) == RAW


def test_the_exact_cookie_wins_over_a_multi_cookie():
    header = f"Cookie: {COOKIE_NAME}_multi-abc=other; {COOKIE_NAME}={RAW}"
    assert session_token(header) == RAW


@pytest.mark.parametrize(
    ("pasted", "message"),
    [
        (f"{RAW}%0D%0Aevil: 1", "contains CR, LF or ';', which no session token does: refused"),
        (f"{RAW}%3Bother=1", "contains CR, LF or ';', which no session token does: refused"),
        (f"Cookie: {COOKIE_NAME}={RAW}%0A", "contains CR, LF or ';', which no session token does: refused"),
        (
            f"Cookie: theme=dark; sid={RAW}",
            f"the pasted Cookie header has no {COOKIE_NAME} cookie (cookies in it: sid, theme)",
        ),
        (f"{RAW} tail", "contains characters a cookie cannot carry (U+0020)"),
        (f"Cookie: {COOKIE_NAME}=", "is empty"),
    ],
)
def test_bad_values_are_refused_naming_the_problem_never_the_value(pasted, message):
    with pytest.raises(MissingCredential) as caught:
        session_token(pasted)
    assert message in caught.value.message and caught.value.status_code == 401
    assert RAW not in caught.value.message and "q8w7e6" not in caught.value.message


def test_requests_send_the_decoded_token_in_the_one_cookie():
    request = build_request(
        model="claude-haiku-4-5",
        messages=[{"role": "user", "content": "hi"}],
        api_key=f"Cookie: theme=dark; {COOKIE_NAME}={ENCODED}",
        api_base="http://127.0.0.1:9",
        optional_params={},
        timeout=None,
    )
    assert request.endpoint.token == RAW
    assert request.endpoint.headers()["Cookie"] == f"{COOKIE_NAME}={RAW}"
    assert RAW not in repr(request.endpoint)
