"""The pure core: conol events in, OpenAI-shaped pieces out.

No I/O on the hot path, no clocks, and no LiteLLM, httpx or aiohttp (import-linter and
``tests/unit/test_layers.py`` keep it so): everything here is tested with plain lists.
"""

from __future__ import annotations

from ._account import (
    LOW_BALANCE as LOW_BALANCE,
)
from ._account import (
    AuthAnswer as AuthAnswer,
)
from ._account import (
    Balance as Balance,
)
from ._account import (
    judge_auth as judge_auth,
)
from ._account import (
    keys_of as keys_of,
)
from ._account import (
    read_balance as read_balance,
)
from ._assembler import (
    REASONING_TYPES as REASONING_TYPES,
)
from ._assembler import (
    Assembler as Assembler,
)
from ._assembler import (
    BuiltinToolUse as BuiltinToolUse,
)
from ._assembler import (
    ClientToolCall as ClientToolCall,
)
from ._assembler import (
    Piece as Piece,
)
from ._assembler import (
    ReasoningDelta as ReasoningDelta,
)
from ._assembler import (
    TextDelta as TextDelta,
)
from ._assembler import (
    coalesce as coalesce,
)
from ._catalog import (
    Catalog as Catalog,
)
from ._catalog import (
    CatalogModel as CatalogModel,
)
from ._catalog import (
    default_catalog as default_catalog,
)
from ._catalog import (
    load_catalog as load_catalog,
)
from ._credential import (
    session_token as session_token,
)
from ._cutter import (
    AnswerCutter as AnswerCutter,
)
from ._cutter import (
    AnswerLimits as AnswerLimits,
)
from ._cutter import (
    Cut as Cut,
)
from ._discovery import (
    Discovered as Discovered,
)
from ._discovery import (
    DiscoveredModel as DiscoveredModel,
)
from ._discovery import (
    DiscoveryUnreadable as DiscoveryUnreadable,
)
from ._discovery import (
    catalog_diff as catalog_diff,
)
from ._discovery import (
    catalog_json as catalog_json,
)
from ._discovery import (
    discovered_catalog as discovered_catalog,
)
from ._discovery import (
    discovery_settings as discovery_settings,
)
from ._discovery import (
    parse_agent_servers as parse_agent_servers,
)
from ._effort import (
    EffortChoice as EffortChoice,
)
from ._effort import (
    choose_effort as choose_effort,
)
from ._effort import (
    effort_inputs as effort_inputs,
)
from ._effort import (
    map_effort as map_effort,
)
from ._end_policy import (
    TERMINAL_STATUSES as TERMINAL_STATUSES,
)
from ._end_policy import (
    EndPolicy as EndPolicy,
)
from ._end_policy import (
    Finish as Finish,
)
from ._end_policy import (
    GiveUp as GiveUp,
)
from ._end_policy import (
    Poll as Poll,
)
from ._end_policy import (
    Timing as Timing,
)
from ._endpoint import (
    COOKIE_NAME as COOKIE_NAME,
)
from ._endpoint import (
    DEFAULT_BASE_URL as DEFAULT_BASE_URL,
)
from ._endpoint import (
    DEFAULT_MAX_CONCURRENT_POLLS as DEFAULT_MAX_CONCURRENT_POLLS,
)
from ._endpoint import (
    Endpoint as Endpoint,
)
from ._errors import (
    AgentFailed as AgentFailed,
)
from ._errors import (
    AgentFailedPermanently as AgentFailedPermanently,
)
from ._errors import (
    AuthenticationFailed as AuthenticationFailed,
)
from ._errors import (
    BadRequest as BadRequest,
)
from ._errors import (
    ConolError as ConolError,
)
from ._errors import (
    ImageTooLarge as ImageTooLarge,
)
from ._errors import (
    ImageTypeUnsupported as ImageTypeUnsupported,
)
from ._errors import (
    InvalidStructuredOutput as InvalidStructuredOutput,
)
from ._errors import (
    MissingCredential as MissingCredential,
)
from ._errors import (
    ModelDowngraded as ModelDowngraded,
)
from ._errors import (
    ModelNotFound as ModelNotFound,
)
from ._errors import (
    OutOfCredits as OutOfCredits,
)
from ._errors import (
    PermissionDenied as PermissionDenied,
)
from ._errors import (
    RateLimited as RateLimited,
)
from ._errors import (
    RequestTimeout as RequestTimeout,
)
from ._errors import (
    UpstreamError as UpstreamError,
)
from ._errors import (
    UpstreamUnavailable as UpstreamUnavailable,
)
from ._events import (
    ContextUsage as ContextUsage,
)
from ._events import (
    TurnUsage as TurnUsage,
)
from ._events import (
    read_context_usage as read_context_usage,
)
from ._events import (
    reported_model as reported_model,
)
from ._events import (
    turn_usage as turn_usage,
)
from ._failures import (
    FailureMemory as FailureMemory,
)
from ._failures import (
    classify_failure as classify_failure,
)
from ._failures import (
    failure_error as failure_error,
)
from ._failures import (
    failure_key as failure_key,
)
from ._images import (
    PENDING_PREFIX as PENDING_PREFIX,
)
from ._images import (
    AssetRef as AssetRef,
)
from ._images import (
    ImageFetch as ImageFetch,
)
from ._images import (
    ImageLimits as ImageLimits,
)
from ._images import (
    ImageSource as ImageSource,
)
from ._images import (
    asset_ref as asset_ref,
)
from ._images import (
    check_image_bytes as check_image_bytes,
)
from ._images import (
    content_key as content_key,
)
from ._images import (
    decode_data_url as decode_data_url,
)
from ._images import (
    fetched_media_type as fetched_media_type,
)
from ._images import (
    resolve_images as resolve_images,
)
from ._options import (
    HEALTH_CHECK_ACCOUNT as HEALTH_CHECK_ACCOUNT,
)
from ._options import (
    ConolRequest as ConolRequest,
)
from ._options import (
    build_request as build_request,
)
from ._options import (
    configured_catalog as configured_catalog,
)
from ._options import (
    is_health_check as is_health_check,
)
from ._options import (
    request_endpoint as request_endpoint,
)
from ._render import (
    convert_tools as convert_tools,
)
from ._session_info import (
    RunStats as RunStats,
)
from ._session_info import (
    SessionInfo as SessionInfo,
)
from ._sse import (
    FRAMING_MESSAGE as FRAMING_MESSAGE,
)
from ._sse import (
    FRAMING_NDJSON as FRAMING_NDJSON,
)
from ._sse import (
    FRAMING_SSE as FRAMING_SSE,
)
from ._sse import (
    SSEDecoder as SSEDecoder,
)
from ._structured import (
    CallToCheck as CallToCheck,
)
from ._structured import (
    Valid as Valid,
)
from ._structured import (
    answer_repair as answer_repair,
)
from ._structured import (
    check_answer as check_answer,
)
from ._structured import (
    check_tool_calls as check_tool_calls,
)
from ._structured import (
    tool_call_repair as tool_call_repair,
)
from ._wire import (
    AuthSession as AuthSession,
)
from ._wire import (
    CreateSessionBody as CreateSessionBody,
)
from ._wire import (
    CreateSessionResult as CreateSessionResult,
)
from ._wire import (
    ImagePart as ImagePart,
)
from ._wire import (
    MessagePart as MessagePart,
)
from ._wire import (
    SessionStatus as SessionStatus,
)
from ._wire import (
    TextPart as TextPart,
)
from ._wire import (
    ToolSpec as ToolSpec,
)
from ._wire import (
    parse_event as parse_event,
)
from ._wire import (
    unreadable_reason as unreadable_reason,
)
