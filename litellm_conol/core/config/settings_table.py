"""The declarations: every option the plugin reads, with its scope (``docs/configuration.md``).

A careful operator's reading decides each scope: anything that says where the proxy connects
(conol, Redis), what it may fetch, how long it waits or how many paid sessions a request may take
is the operator's; what only shapes the caller's own answer is the caller's; a limit the caller
may only lower is ``narrow``. ``docs/configuration.md``'s table is generated from this list
(``litellm-conol settings --write-docs``) and a test keeps the two equal.
"""

from __future__ import annotations

from ..models.discovery import DEFAULT_DISCOVERY_INTERVAL, MIN_DISCOVERY_INTERVAL
from ..protocol.account import LOW_BALANCE
from ..protocol.end_policy import Timing
from ..protocol.endpoint import DEFAULT_BASE_URL
from ..request.images import (
    DEFAULT_FETCH_PORTS,
    DEFAULT_FETCH_TIMEOUT,
    DEFAULT_IMAGE_BYTES_IN_FLIGHT,
    DEFAULT_MAX_IMAGE_BYTES,
    DEFAULT_MAX_IMAGES,
    DEFAULT_URL_CACHE_TTL,
)
from ..settings import Setting
from .reuse_options import DEFAULT_BACKOFF, DEFAULT_CAP, DEFAULT_TTL

_TIMING_DEFAULTS = Timing()

# How many status polls may be in flight at once per event loop (client/pool.py says why).
DEFAULT_MAX_CONCURRENT_POLLS = 16
MiB = 1024 * 1024
DAY = 86400.0

# One declaration a block reads as a table (ruff would give each argument its own line).
# fmt: off
_CONNECTION = (
    Setting("api_key", "secret", None, "operator",
            "conol session token (the `__Secure-better-auth.session_token` cookie); none → "
            "`AuthenticationError` (401) before any network call",
            env="CONOL_SESSION_TOKEN"),
    Setting("api_base", "text", DEFAULT_BASE_URL, "operator",
            "where conol is (the fake's URL in tests)",
            env="CONOL_API_BASE"),
    Setting("agent_model", "text", None, "operator",
            "the `agentModel` to send, for an id the catalog does not know (default: from the catalog)"),
    Setting("strict_model", "flag", False, "operator",
            "refuse a session conol downgraded to another model"),
    Setting("default_effort", "text", None, "operator",
            "the effort of a request that asks for none "
            "([details](effort-and-retries.md#default-and-cap-per-deployment))",
            section="effort"),
    Setting("max_effort", "text", None, "operator",
            "a cap no request can exceed "
            "([details](effort-and-retries.md#default-and-cap-per-deployment))",
            section="effort"),
    Setting("caller_options", "names", (), "operator",
            "option names this deployment opens to callers: a caller's value is then taken as it is; never "
            "`api_key`, `api_base`, `redis_*`, `image_fetch_ports`, `discovery*`, `session_reuse_cap`, "
            "`session_reuse_backoff`, `balance_poll_interval` or `min_balance` (see "
            "[Who sets what](#who-sets-what))"),
    Setting("models_file", "text", None, "operator",
            "a models.json of your own, instead of the packaged catalog",
            env="CONOL_MODELS_FILE", param=False),
    Setting("models_extra", "text", None, "operator",
            "models.json files (`:`-separated) added to the catalog; same `id` replaces",
            env="CONOL_MODELS_EXTRA", param=False),
    Setting("usage_log", "text", None, "operator",
            "a JSON-lines file the usage logger appends to ([Team deployment](team-deployment.md))",
            env="CONOL_USAGE_LOG", param=False),
)

_TIMING = (
    Setting("settle_window", "seconds", _TIMING_DEFAULTS.settle_window, "operator",
            "after conol's status turns terminal with no definitive end signal, end after this much "
            "stream silence",
            env="CONOL_SETTLE_WINDOW", low=0, high=120, section="timing"),
    Setting("status_poll_interval", "seconds", _TIMING_DEFAULTS.poll_interval, "operator",
            "how soon and how often the status is polled while the stream is quiet (never while events "
            "flow)",
            low=0, high=120, section="timing"),
    Setting("tool_call_settle", "seconds", _TIMING_DEFAULTS.tool_call_settle, "operator",
            "after a client tool call, wait this long for sibling calls before ending the turn",
            low=0, high=120, section="timing"),
    Setting("first_event_timeout", "seconds", _TIMING_DEFAULTS.first_event_timeout, "operator",
            "no event at all this long after the session was created → `Timeout`",
            env="CONOL_FIRST_EVENT_TIMEOUT", low=0, high=3600, low_open=True, section="timing"),
    Setting("idle_timeout", "seconds", _TIMING_DEFAULTS.idle_timeout, "operator",
            "no event this long mid-answer while the session still runs → `Timeout` (long enough for "
            "silent built-in tool runs)",
            env="CONOL_IDLE_TIMEOUT", low=0, high=3600, low_open=True, section="timing"),
    Setting("max_concurrent_polls", "whole", DEFAULT_MAX_CONCURRENT_POLLS, "operator",
            "status polls in flight at once per process (per event loop), all sessions together",
            env="CONOL_MAX_CONCURRENT_POLLS", param=False, low=1, high=10000, section="timing"),
    Setting("failure_memory_seconds", "seconds", 300.0, "operator",
            "how long an agent failure, or an answer that never validated, is remembered per request "
            "(in Redis when reuse has one) "
            "([details](effort-and-retries.md#the-memory-of-recent-failures)); `0` turns it off",
            env="CONOL_FAILURE_MEMORY_SECONDS", param=False, low=0, high=DAY, section="timing"),
)

_ANSWER = (
    Setting("max_repair_turns", "whole", 2, "narrow",
            "with a `response_format` or validated tool calls: repair turns (each a new session) an "
            "invalid answer gets; a caller may only lower it",
            low=0, high=10, section="answer"),
    Setting("tool_validation", "choice", "repair", "narrow",
            "client tool-call arguments against their schema: `repair` (repair turns), `error` (502 at "
            "once), `off`; a caller may choose `error` or `off` where the deployment repairs",
            choices=("repair", "error", "off"), ranks={"off": 0, "error": 0, "repair": 1}, when_false="off",
            section="answer"),
    Setting("builtin_tools", "choice", "hide", "request",
            "`expose` returns conol's built-in tool calls (WebSearch, …) as `tool_calls`",
            choices=("hide", "expose"), section="answer"),
    Setting("timezone", "text", "UTC", "request",
            "IANA timezone sent with the session",
            env="CONOL_TIMEZONE", section="answer"),
)

_IMAGES = (
    Setting("image_fetch", "choice", "off", "operator",
            "`public`: the proxy fetches `http(s)` image URLs from public addresses "
            "([Images](images-and-discovery.md#options))",
            choices=("off", "public"), when_false="off", section="images"),
    Setting("image_fetch_timeout", "seconds", DEFAULT_FETCH_TIMEOUT, "operator",
            "the time budget for fetching one request's image URLs",
            low=0, high=120, low_open=True, section="images"),
    Setting("image_fetch_ports", "ports", DEFAULT_FETCH_PORTS, "operator",
            "the ports an image URL may name",
            section="images"),
    Setting("image_url_cache_ttl", "seconds", DEFAULT_URL_CACHE_TTL, "operator",
            "how long an uploaded image URL's asset is reused before the URL is fetched again",
            low=0, high=DAY, low_open=True, section="images"),
    Setting("image_bytes_in_flight", "whole", DEFAULT_IMAGE_BYTES_IN_FLIGHT, "operator",
            "bytes of fetched image URLs held at once per process (per event loop), all requests "
            "together: a fetch waits for room within `image_fetch_timeout`, and each image is uploaded "
            "as it arrives",
            env="CONOL_IMAGE_BYTES_IN_FLIGHT", param=False, low=MiB, high=64 * 1024 * MiB, section="images"),
    Setting("max_image_bytes", "whole", DEFAULT_MAX_IMAGE_BYTES, "narrow",
            "largest image (decoded or fetched); a caller may only lower it",
            low=1, high=50 * MiB, section="images"),
    Setting("max_images", "whole", DEFAULT_MAX_IMAGES, "narrow",
            "most distinct images in one request; a caller may only lower it",
            low=1, high=100, section="images"),
    Setting("discovery", "choice", "off", "operator",
            "run-time model discovery: `startup` or `interval` "
            "([details](images-and-discovery.md#run-time-discovery))",
            choices=("off", "startup", "interval"), when_false="off", section="images"),
    Setting("discovery_interval", "seconds", DEFAULT_DISCOVERY_INTERVAL, "operator",
            "for `discovery: interval`",
            low=MIN_DISCOVERY_INTERVAL, high=7 * DAY, section="images"),
)

_REUSE = (
    Setting("session_reuse", "choice", "auto", "narrow",
            "continue the session that holds a request's exact history ([Session "
            "reuse](session-reuse.md)); a caller may only turn it `off`",
            choices=("auto", "off"), ranks={"off": 0, "auto": 1}, when_true="auto", when_false="off",
            section="reuse"),
    Setting("model_pinning", "choice", "create", "operator",
            "how the model is set: `create`, `pin` or `auto` ([details](session-reuse.md))",
            choices=("create", "pin", "auto"), section="reuse"),
    Setting("session_reuse_ttl", "seconds", DEFAULT_TTL, "operator",
            "a binding lives this long after its last use",
            low=0, high=7 * DAY, low_open=True, section="reuse"),
    Setting("session_reuse_cap", "whole", DEFAULT_CAP, "operator",
            "bindings kept in memory per process",
            low=1, high=1_000_000, section="reuse"),
    Setting("session_reuse_backoff", "seconds", DEFAULT_BACKOFF, "operator",
            "reuse stays off this long for an upstream that refused a follow-up",
            low=0, high=DAY, low_open=True, section="reuse"),
    Setting("redis_url", "secret", None, "operator",
            "where bindings, upstream decisions and failures are shared (`redis://`, `rediss://`); "
            "else `redis_host`…",
            env="REDIS_URL", section="reuse"),
    Setting("redis_host", "text", None, "operator",
            "Redis host, with `redis_port`, `redis_username`, `redis_password`, `redis_ssl`",
            env="REDIS_HOST", section="reuse"),
    Setting("redis_port", "whole", 6379, "operator",
            "Redis port",
            env="REDIS_PORT", low=1, high=65535, section="reuse"),
    Setting("redis_username", "text", None, "operator",
            "Redis ACL user (Redis 6+), with `redis_password`",
            env="REDIS_USERNAME", section="reuse"),
    Setting("redis_password", "secret", None, "operator",
            "Redis password",
            env="REDIS_PASSWORD", section="reuse"),
    Setting("redis_ssl", "flag", False, "operator",
            "TLS to Redis (`rediss://`), as LiteLLM's `REDIS_SSL`",
            env="REDIS_SSL", section="reuse"),
)

_ACCOUNTS = (
    Setting("balance_poll_interval", "seconds", 0.0, "operator",
            "read the account's balance at most this often, all workers and instances together (through "
            "the Redis of session reuse): an account below `min_balance` rests until its refill before it "
            "fails a request ([details](team-deployment.md#several-accounts)); `0` turns it off",
            low=0, high=DAY, section="accounts"),
    Setting("min_balance", "whole", int(LOW_BALANCE), "operator",
            "credits: with `balance_poll_interval`, an account whose `total` is below this rests until "
            "its refill",
            low=0, high=1_000_000, section="accounts"),
)

_OPENAI = (
    Setting("reasoning_effort", "structured", None, "request",
            "also `reasoning`, `thinking`, `output_config.effort` → `agentEffort`, capped by `max_effort`"
            " ([Effort](effort-and-retries.md#effort))",
            section="openai"),
    Setting("response_format", "structured", None, "request",
            "validated, with repair turns ([Structured "
            "output](tools-and-structured-output.md#structured-output))",
            section="openai"),
    Setting("stop", "structured", None, "request",
            "up to 4 sequences, enforced by us",
            section="openai"),
    Setting("max_tokens", "structured", None, "request",
            "also `max_completion_tokens`: the answer is cut there",
            section="openai"),
    Setting("tools", "structured", None, "request",
            "client tools; `tool_choice`, `parallel_tool_calls` as OpenAI defines them",
            section="openai"),
    Setting("n", "structured", None, "request",
            "only 1: conol returns one answer",
            section="openai"),
)
# fmt: on

SETTINGS: dict[str, Setting] = {
    s.name: s for group in (_CONNECTION, _TIMING, _ANSWER, _IMAGES, _REUSE, _ACCOUNTS, _OPENAI) for s in group
}
# What ``caller_options`` can never open: where the proxy connects (conol, Redis, the ports an image
# fetch may name), what it runs in the background (discovery) and what every caller shares (the
# binding store's size, the upstream switch-off); the environment-only options are not per call at all.
NEVER_OPENED = frozenset(
    {
        "api_key",
        "api_base",
        "caller_options",
        "redis_url",
        "redis_host",
        "redis_port",
        "redis_username",
        "redis_password",
        "redis_ssl",
        "image_fetch_ports",
        "discovery",
        "discovery_interval",
        "session_reuse_cap",
        "session_reuse_backoff",
        # an account's rest is every caller's: polling and the low mark decide it for all of them
        "balance_poll_interval",
        "min_balance",
    }
    | {name for name, setting in SETTINGS.items() if not setting.param}
)
SECTIONS = {
    "connection": "Connection, model and catalog",
    "effort": "Effort",
    "timing": "Timing",
    "answer": "The answer",
    "images": "Images and discovery",
    "reuse": "Session reuse",
    "accounts": "Accounts and balance",
    "openai": "OpenAI request parameters",
}
