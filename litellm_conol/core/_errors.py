"""Our exceptions. Each carries the HTTP status LiteLLM maps to its typed exceptions
(401 → AuthenticationError, 429 → RateLimitError, 408 → Timeout, …), which is what the Router uses
to decide retries, cooldowns and fallbacks. Messages never contain the session token.

They do not subclass LiteLLM's ``CustomLLMError``: LiteLLM's exception mapping
(``litellm_core_utils/exception_mapping_utils.exception_type``) reads ``status_code``, ``message`` and
``headers`` off any exception, duck-typed, and never checks the class. So the core stays free of
LiteLLM (``tests/unit/test_error_mapping.py`` checks the attributes LiteLLM reads).
"""

from __future__ import annotations

from collections.abc import Mapping


class ConolError(Exception):
    """Base class: ``status_code`` picks the LiteLLM exception; ``headers`` reach the Router."""

    status = 500

    def __init__(
        self, message: str, *, status_code: int | None = None, headers: Mapping[str, str] | None = None
    ):
        super().__init__(message)
        self.status_code: int = status_code or self.status
        self.message: str = message
        # LiteLLM copies `headers` to `litellm_response_headers` (Retry-After for the Router).
        self.headers: dict[str, str] = dict(headers or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code}, message={self.message!r})"


class BadRequest(ConolError):
    status = 400


class MissingCredential(ConolError):
    status = 401


class AuthenticationFailed(ConolError):
    status = 401


class PermissionDenied(ConolError):
    status = 403


class ImageTooLarge(BadRequest):
    """conol refused an image upload as too large (413), or the image is over our own cap."""

    status = 413


class ImageTypeUnsupported(BadRequest):
    """conol refused an image upload's media type (415)."""

    status = 415


class ModelNotFound(ConolError):
    status = 404


class RequestTimeout(ConolError):
    status = 408


class ModelDowngraded(ConolError):
    """strict_model is on and conol ran another model than the one asked for."""

    status = 400


class RateLimited(ConolError):
    status = 429


class AgentFailed(ConolError):
    """The agent itself failed: an ``error`` event or a failed/error session status."""

    status = 500


class UpstreamError(ConolError):
    """conol answered with a 5xx or with a body we cannot use."""

    status = 502


class UpstreamUnavailable(ConolError):
    status = 503


class InvalidStructuredOutput(ConolError):
    """The answer (or a tool call's arguments) still failed validation after the repair turns.

    502, LiteLLM's ``BadGatewayError``: the request was fine, the upstream answer was not usable
    (as LiteLLM's own ``JSONSchemaValidationError`` is a 5xx). So the Router may retry it and run
    fallbacks (another model may well conform); a 400 would tell the client its request was wrong
    and, from a provider, disables fallbacks. Cooldowns count it only where a model group has
    several deployments, as for any upstream failure.
    """

    status = 502
