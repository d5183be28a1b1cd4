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
    """Base class: ``status_code`` picks the LiteLLM exception; ``headers`` reach the Router.

    ``refused_by`` names what refused the request before any conol session was spent on it
    (``"failure_memory"``, ``"settings_boundary"``), for the usage log; ``""`` otherwise.
    """

    status = 500
    refused_by = ""

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
    """The request cannot be served as it is (400, or the 4xx conol answered): bad messages,
    tools, options or images, or conol rejected the request; the message names what is wrong."""

    status = 400


class MissingCredential(ConolError):
    """No usable session token (no ``api_key`` nor ``CONOL_SESSION_TOKEN``, an empty one, or one a
    cookie cannot carry): 401, before any request to conol."""

    status = 401


class AuthenticationFailed(ConolError):
    """conol refused the session token (401): invalid or expired."""

    status = 401


class PermissionDenied(ConolError):
    """conol answered 403: the account may not do what was asked."""

    status = 403


class ImageTooLarge(BadRequest):
    """conol refused an image upload as too large (413), or the image is over our own cap."""

    status = 413


class ImageTypeUnsupported(BadRequest):
    """conol refused an image upload's media type (415)."""

    status = 415


class ModelNotFound(ConolError):
    """The model is not in the catalog (404), raised before any conol session is created."""

    status = 404


class RequestTimeout(ConolError):
    """conol did not answer in time (408): no event within ``first_event_timeout`` or
    ``idle_timeout``, the request's ``timeout`` passed, or an HTTP call timed out."""

    status = 408


class ModelDowngraded(ConolError):
    """strict_model is on and conol ran another model than the one asked for."""

    status = 400


class RateLimited(ConolError):
    """conol answered 429; its ``Retry-After`` is in ``headers`` for the Router."""

    status = 429


class AgentFailed(ConolError):
    """The agent itself failed: an ``error`` event, an ``error`` preview (e.g. "credit balance is too
    low") or a failed/error session status.

    500, so the Router and the clients' SDKs retry it: a first failure may be transient. ``kind``
    and ``signature`` (``core/protocol/agent_failures.py``) say what failed, without session ids, so
    a retry that fails the same way can be told from one that fails differently. ``agent_message``
    is conol's own text, unprefixed, when conol gave one: what the classification reads.
    """

    status = 500
    kind = "unexplained"
    signature = ""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        agent_message: str | None = None,
    ):
        super().__init__(message, status_code=status_code, headers=headers)
        self.agent_message = agent_message


class AgentFailedPermanently(AgentFailed):
    """The agent failed in a way a retry repeats: a non-transient message, or the same failure twice.

    400, LiteLLM's ``BadRequestError``: no SDK (openai, anthropic: only 408/409/429/5xx), no Codex
    (4xx but 401/429) and no Router (``litellm.should_retry``) retries it, so one such failure costs
    at most two conol sessions instead of one per retry.
    """

    status = 400
    kind = "deterministic"


class OutOfCredits(AgentFailed):
    """conol said the account's credit balance is too low (docs/protocol.md#stream).

    429, LiteLLM's ``RateLimitError``, as OpenAI reports an exhausted quota (429
    ``insufficient_quota``): the Router retries the request at once on the other deployments of its
    model group (other accounts) and cools this one down for the ``retry-after`` the failure memory
    puts on it, the time to the account's next refill (docs/team-deployment.md#several-accounts). A
    402 would be retried nowhere: the caller would get it while other accounts stood by.
    """

    status = 429
    kind = "out_of_credits"


class AccountResting(ConolError):
    """The account is resting (out of credits, or below ``min_balance``) until its refill: refused
    before a session, with the time left as ``retry-after``; 429 as :class:`OutOfCredits`, so the
    Router keeps this deployment cooled down and serves from the others."""

    status = 429
    refused_by = "account_rest"


class UpstreamError(ConolError):
    """conol answered with a 5xx or with a body we cannot use."""

    status = 502


class UpstreamUnavailable(ConolError):
    """conol could not be reached (connection refused or reset, DNS failure) or answered 503."""

    status = 503


class InvalidStructuredOutput(ConolError):
    """The answer (or a tool call's arguments) still failed validation after the repair turns.

    502, LiteLLM's ``BadGatewayError``: the request was fine, the upstream answer was not usable
    (as LiteLLM's own ``JSONSchemaValidationError`` is a 5xx). So the Router may retry it and run
    fallbacks (another model may well conform); a 400 would tell the client its request was wrong
    and, from a provider, disables fallbacks. Cooldowns count it only where a model group has
    several deployments, as for any upstream failure.

    The failure memory (``reuse/known_failures.py``) keeps it like an unexplained agent failure:
    the same request failing validation again within its window is deterministic (still 502, with
    ``x-should-retry: false``), and later identical requests are refused without a session.
    """

    status = 502
    kind = "validation"
    signature = "validation"
