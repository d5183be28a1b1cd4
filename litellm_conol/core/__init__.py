"""The pure core: conol events in, OpenAI-shaped pieces out.

No I/O on the hot path, no clocks, and no LiteLLM, httpx or aiohttp (import-linter and
``tests/unit/test_layers.py`` keep it so): everything here is tested with plain lists.
"""

from __future__ import annotations

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
from ._cutter import (
    AnswerCutter as AnswerCutter,
)
from ._cutter import (
    AnswerLimits as AnswerLimits,
)
from ._cutter import (
    Cut as Cut,
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
    AuthenticationFailed as AuthenticationFailed,
)
from ._errors import (
    BadRequest as BadRequest,
)
from ._errors import (
    ConolError as ConolError,
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
from ._render import (
    convert_tools as convert_tools,
)
from ._render import (
    map_effort as map_effort,
)
from ._reuse import (
    DEFAULT_BACKOFF as DEFAULT_BACKOFF,
)
from ._reuse import (
    Binding as Binding,
)
from ._reuse import (
    ReuseOptions as ReuseOptions,
)
from ._reuse import (
    canonical_history as canonical_history,
)
from ._reuse import (
    history_digest as history_digest,
)
from ._reuse import (
    normalize_text as normalize_text,
)
from ._reuse import (
    returned_assistant as returned_assistant,
)
from ._reuse import (
    reuse_options as reuse_options,
)
from ._reuse import (
    scope_digest as scope_digest,
)
from ._reuse import (
    settings_digest as settings_digest,
)
from ._reuse import (
    split_new_turn as split_new_turn,
)
from ._session_info import (
    RunStats as RunStats,
)
from ._session_info import (
    SessionInfo as SessionInfo,
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
from ._turn import (
    Continue as Continue,
)
from ._turn import (
    Fresh as Fresh,
)
from ._turn import (
    TurnBody as TurnBody,
)
from ._turn import (
    TurnBoundary as TurnBoundary,
)
from ._turn import (
    bind_refusal as bind_refusal,
)
from ._turn import (
    decide as decide,
)
from ._turn import (
    model_bodies as model_bodies,
)
from ._turn import (
    render_turn as render_turn,
)
from ._wire import (
    AuthSession as AuthSession,
)
from ._wire import (
    ConolEvent as ConolEvent,
)
from ._wire import (
    CreateSessionBody as CreateSessionBody,
)
from ._wire import (
    CreateSessionResult as CreateSessionResult,
)
from ._wire import (
    HistoryDelta as HistoryDelta,
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
