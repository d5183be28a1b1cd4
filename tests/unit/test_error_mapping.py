"""Our exceptions through LiteLLM's own exception mapping: the LiteLLM classes they map to are the
ones they mapped to when they subclassed ``CustomLLMError`` (before commit 6fcabfa), message,
status and headers included. The Router's retries, cooldowns and fallbacks depend on these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import litellm
import pytest
from litellm.litellm_core_utils.exception_mapping_utils import exception_type
from litellm.llms.custom_llm import CustomLLMError

from litellm_conol import (
    AgentFailed,
    AuthenticationFailed,
    BadRequest,
    ConolError,
    InvalidStructuredOutput,
    MissingCredential,
    ModelDowngraded,
    ModelNotFound,
    PermissionDenied,
    RateLimited,
    RequestTimeout,
    UpstreamError,
    UpstreamUnavailable,
)
from litellm_conol.client.http_errors import error_for_response, error_for_transport

pytestmark = pytest.mark.timeout(30)

TOKEN = "tok-SECRET-5f0c9a"
RETRY_AFTER = {"retry-after": "7"}


class OldConolError(CustomLLMError):
    """``ConolError`` as it was at commit 3cdbad5: a ``CustomLLMError`` carrying ``headers``."""

    def __init__(self, message: str, *, status_code: int, headers: Mapping[str, str] | None = None):
        super().__init__(status_code=status_code, message=message)
        self.headers: dict[str, str] = dict(headers or {})


@pytest.fixture(autouse=True)
def _quiet_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(litellm, "suppress_debug_info", True)  # no "Give Feedback" banner per mapping


def mapped(exc: Exception) -> Exception:
    """What LiteLLM raises for ``exc`` raised by the ``conol`` provider."""
    with pytest.raises(Exception) as caught:
        exception_type(model="conol/x", original_exception=exc, custom_llm_provider="conol")
    return caught.value


def observed(error: Exception) -> dict[str, Any]:
    """Everything of a mapped error that LiteLLM's callers read."""
    response = getattr(error, "response", None)
    return {
        "type": type(error),
        "str": str(error),
        "message": getattr(error, "message", None),
        "status_code": getattr(error, "status_code", None),
        "llm_provider": getattr(error, "llm_provider", None),
        "model": getattr(error, "model", None),
        "litellm_response_headers": getattr(error, "litellm_response_headers", None),
        "response_status": getattr(response, "status_code", None),
        "response_headers": dict(response.headers) if isinstance(response, httpx.Response) else None,
    }


CASES: list[tuple[type[ConolError], dict[str, str] | None, int, type[Exception]]] = [
    (BadRequest, None, 400, litellm.BadRequestError),
    (ModelDowngraded, None, 400, litellm.BadRequestError),
    (AuthenticationFailed, None, 401, litellm.AuthenticationError),
    (MissingCredential, None, 401, litellm.AuthenticationError),
    (PermissionDenied, None, 403, litellm.PermissionDeniedError),
    (ModelNotFound, None, 404, litellm.NotFoundError),
    (RequestTimeout, None, 408, litellm.Timeout),
    (RateLimited, RETRY_AFTER, 429, litellm.RateLimitError),
    (AgentFailed, None, 500, litellm.InternalServerError),
    (UpstreamError, None, 502, litellm.BadGatewayError),
    (UpstreamUnavailable, RETRY_AFTER, 503, litellm.ServiceUnavailableError),
    (InvalidStructuredOutput, None, 502, litellm.BadGatewayError),
]


@pytest.mark.parametrize(
    ("cls", "headers", "status", "litellm_class"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_each_error_maps_to_the_litellm_class_it_did_as_a_custom_llm_error(
    cls, headers, status, litellm_class
):
    ours = cls("conol said no", headers=headers)
    assert not isinstance(ours, CustomLLMError)  # duck-typed now: the core imports no LiteLLM
    assert ours.status_code == status

    now = observed(mapped(ours))
    before = observed(mapped(OldConolError("conol said no", status_code=status, headers=headers)))

    assert now == before
    assert now["type"] is litellm_class
    assert now["status_code"] == status
    assert now["llm_provider"] == "conol"
    assert now["message"] == f"litellm.{litellm_class.__name__}: ConolException - conol said no"
    assert now["litellm_response_headers"] == headers  # Retry-After reaches the Router


def test_a_rate_limit_keeps_its_retry_after_for_the_router():
    error = mapped(RateLimited("slow down", headers=RETRY_AFTER))

    assert isinstance(error, litellm.RateLimitError)
    assert error.litellm_response_headers == RETRY_AFTER
    assert error.status_code == 429


def test_a_status_given_explicitly_picks_the_class():
    # e.g. the driver re-raising a stream failure with the last error's status
    assert type(mapped(UpstreamError("gateway timeout", status_code=504))) is type(
        mapped(OldConolError("gateway timeout", status_code=504))
    )
    assert type(mapped(BadRequest("gone", status_code=410))) is type(
        mapped(OldConolError("gone", status_code=410))
    )


# --- the token never reaches a mapped error ---------------------------------------------------------


def _echoing_response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    body = {"error": f"bad request: Cookie: __Secure-better-auth.session_token={TOKEN}"}
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.parametrize("status", [400, 404, 500, 502, 503, 504])
def test_an_upstream_body_quoting_the_token_is_masked_through_the_mapping(status):
    ours = error_for_response(_echoing_response(status), "creating the session", secrets=(TOKEN,))
    error = mapped(ours)

    for shown in (str(error), getattr(error, "message", ""), repr(error)):
        assert TOKEN not in shown
    assert "session_token=***" in str(error)


def test_a_transport_error_quoting_the_token_is_masked_through_the_mapping():
    failure = httpx.ConnectError(f"proxy refused CONNECT with Cookie {TOKEN}")
    ours = error_for_transport(failure, "creating the session", secrets=(TOKEN,))
    error = mapped(ours)

    assert isinstance(error, litellm.ServiceUnavailableError)
    assert TOKEN not in str(error)
    assert str(error).endswith(
        "ConolException - could not reach conol while creating the session: ConnectError: "
        "proxy refused CONNECT with Cookie ***"
    )


def test_an_upstream_429_maps_to_a_rate_limit_with_its_retry_after():
    ours = error_for_response(
        httpx.Response(429, headers={"Retry-After": "7"}), "creating the session", secrets=(TOKEN,)
    )
    error = mapped(ours)

    assert isinstance(error, litellm.RateLimitError)
    assert error.litellm_response_headers == RETRY_AFTER
    assert str(error).endswith(
        "ConolException - conol rate-limited the request while creating the session (429). Retry after 7 s."
    )
