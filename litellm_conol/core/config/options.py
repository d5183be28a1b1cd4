"""Everything one request needs, resolved from the call, the deployment config and the environment.

LiteLLM hands a custom provider the deployment's extra ``litellm_params`` and the caller's extra
kwargs together in ``optional_params`` (and ``extra_body`` separately), so an option can be set
per deployment in the proxy config, per call as a kwarg, or per call in ``extra_body``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..answer.cutter import AnswerLimits
from ..answer.structured import OutputFormat, check_tool_schema, format_instruction, parse_response_format
from ..errors import BadRequest, MissingCredential
from ..models.catalog import Catalog, CatalogModel, default_catalog
from ..models.discovery import Discovered
from ..models.effort import choose_effort, effort_inputs, reported_ladder
from ..protocol.end_policy import Timing
from ..protocol.endpoint import Endpoint
from ..protocol.wire import CreateSessionBody, Effort, MessagePart, TextPart, ToolSpec
from ..request.images import ImageLimits, ImageSource, check_images, image_limits
from ..request.render import convert_tools, render_messages
from ..settings import Settings
from .boundary import flat_params, settings_of
from .budgets import SplitTimeout, request_timing, timeout_seconds
from .credential import session_token
from .reuse_options import ReuseOptions, reuse_options
from .settings_table import DEFAULT_MAX_CONCURRENT_POLLS, SETTINGS

BuiltinMode = Literal["hide", "expose"]
ToolValidation = Literal["repair", "error", "off"]

ENV_TOKEN = str(SETTINGS["api_key"].env)
ENV_BASE = str(SETTINGS["api_base"].env)
ENV_MODELS_FILE = str(SETTINGS["models_file"].env)
ENV_MODELS_EXTRA = str(SETTINGS["models_extra"].env)

MAX_PROMPT_CHARS = 2_000_000  # conol has no documented limit; refuse what no model window holds
DEFAULT_MAX_REPAIR_TURNS: int = SETTINGS["max_repair_turns"].default


@dataclass(frozen=True)
class BalanceWatch:
    """How often the account's balance is read (``poll_interval`` seconds, 0: never) and the floor
    below which the account rests until its refill (docs/team-deployment.md#several-accounts)."""

    poll_interval: float = 0.0
    min_balance: float = 0.0


@dataclass(frozen=True)
class ConolRequest:
    endpoint: Endpoint
    body: CreateSessionBody
    model: str
    strict_model: bool
    timing: Timing
    timeout: float
    client_tools: frozenset[str]
    dropped_tools: frozenset[str]  # the request's tools that tool_choice left out: their calls are dropped
    builtin_tools: BuiltinMode
    max_tool_calls: int | None
    tool_choice_required: bool
    max_concurrent_polls: int = DEFAULT_MAX_CONCURRENT_POLLS
    output_format: OutputFormat | None = None  # response_format, enforced by validation + repair turns
    tool_schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # empty: not validated
    tool_validation: ToolValidation = "repair"
    max_repair_turns: int = DEFAULT_MAX_REPAIR_TURNS
    extras: dict[str, Any] = field(default_factory=dict)
    limits: AnswerLimits = field(default_factory=AnswerLimits)  # stop / max_tokens, enforced by us
    image_limits: ImageLimits = field(default_factory=ImageLimits)
    images: Mapping[str, ImageSource] = field(default_factory=dict)  # to upload, by pending key
    effort_ladder: tuple[Effort, ...] = ()  # the ladder agent_effort was clamped onto
    reuse: ReuseOptions = field(default_factory=ReuseOptions)  # session_reuse, model_pinning
    balance_watch: BalanceWatch = field(default_factory=BalanceWatch)
    # Who is calling, as an opaque digest (never key material), filled by the provider: it scopes
    # bindings, uploaded images and the failure memory under the credential; "": the credential
    # alone (docs/session-reuse.md#whose-sessions).
    caller: str = ""

    def body_for(self, messages: list[Any]) -> CreateSessionBody:
        """The session body for ``messages`` (a repair turn's longer conversation), same settings;
        its images are the request's (a repair turn adds text only), still pending."""
        parts = render_prompt(messages, self.output_format, self.image_limits)
        return self.body.model_copy(update={"messages": parts})


def render_prompt(
    messages: list[Any],
    output_format: OutputFormat | None,
    image_limits: ImageLimits | None = None,
    images: dict[str, ImageSource] | None = None,
) -> list[MessagePart]:
    """The transcript, then (with a response_format) the instruction what to answer and how."""
    parts = render_messages(messages, image_limits, images)
    if output_format is not None:
        parts.append(TextPart(content=format_instruction(output_format)))
    if sum(len(p.content) for p in parts) > MAX_PROMPT_CHARS:
        raise BadRequest(
            f"the prompt is longer than the {MAX_PROMPT_CHARS:,}-character limit of this provider"
        )
    return parts


def build_request(
    *,
    model: str,
    messages: list[Any],
    api_key: str | None,
    api_base: str | None,
    optional_params: Mapping[str, Any],
    timeout: float | SplitTimeout | None,
    original_body: Mapping[str, Any] | None = None,
    discovered: Discovered | None = None,
) -> ConolRequest:
    """Validate and resolve one call; raises our 4xx errors before any network call or upload.

    ``original_body``: the request as the client sent it to the proxy (``None`` in-process), where the
    effort keys LiteLLM's adapters drop are read. ``discovered``: what run-time discovery knows.
    """
    params = flat_params(optional_params)
    settings = settings_of(params)
    limits = _checked_limits(params)
    endpoint = request_endpoint(api_key, api_base)
    catalog_model = _catalog_model(model, settings["agent_model"])
    all_tools = convert_tools(params.get("tools"))
    tools, tool_choice = _tools_and_choice(all_tools, params.get("tool_choice"))
    output_format = parse_response_format(params.get("response_format"))
    tool_validation: ToolValidation = settings["tool_validation"]
    limits_of_images, images = image_limits(settings), dict[str, ImageSource]()
    parts = render_prompt(messages, output_format, limits_of_images, images)
    check_images(catalog_model, images, limits_of_images, discovered)
    ladder = _effort_ladder(catalog_model, discovered)
    body = CreateSessionBody(
        messages=parts,
        timezone=settings["timezone"],
        agent_model=catalog_model.agent_model,
        agent_effort=_effort(params, settings, original_body, ladder),
        tools=tools or None,
    )
    return ConolRequest(
        endpoint=endpoint,
        body=body,
        model=catalog_model.id,
        strict_model=settings["strict_model"],
        timing=request_timing(settings),
        timeout=timeout_seconds(timeout),
        client_tools=frozenset(t.name for t in tools),
        dropped_tools=frozenset(t.name for t in all_tools) - {t.name for t in tools},
        builtin_tools=settings["builtin_tools"],
        max_tool_calls=1 if params.get("parallel_tool_calls") is False else None,
        tool_choice_required=tool_choice == "required",
        max_concurrent_polls=settings["max_concurrent_polls"],
        limits=limits,
        output_format=output_format,
        tool_schemas=_tool_schemas(tools, tool_validation),
        tool_validation=tool_validation,
        max_repair_turns=settings["max_repair_turns"],
        image_limits=limits_of_images,
        images=images,
        effort_ladder=ladder,
        reuse=reuse_options(settings),
        balance_watch=BalanceWatch(settings["balance_poll_interval"], settings["min_balance"]),
    )


def _effort_ladder(model: CatalogModel, discovered: Discovered | None) -> tuple[Effort, ...]:
    """The ladder the effort is clamped onto: the one discovery reports for the model, else the one
    a refreshed catalog file wrote for it, else ``effort_ladders`` in models.json, else ``low…max``."""
    found = discovered.effort_ladder(model.agent_model) if discovered is not None else None
    for words in (found, model.efforts):
        ladder = reported_ladder(words)
        if ladder:
            return ladder
    return configured_catalog().ladder(model.id)


def request_endpoint(api_key: str | None, api_base: str | None) -> Endpoint:
    """Where this call goes and its token (a 401 without one), as ``build_request`` resolves them."""
    return Endpoint(base_url=_base_url(api_base), token=_token(api_key))


# The service account LiteLLM's health checks run as (``/health``, background health checks):
# litellm.constants.LITTELM_INTERNAL_HEALTH_SERVICE_ACCOUNT_NAME.
HEALTH_CHECK_ACCOUNT = "litellm-internal-health-check"


def is_health_check(litellm_params: Any) -> bool:
    """Whether this call is LiteLLM's health check of the deployment (``litellm.ahealth_check``).

    LiteLLM probes a chat deployment with a real completion ("What's 1 + 1?"); for conol that would
    be a paid session per deployment per probe. The probe's ``metadata`` names the health-check
    account as its team; on a real proxy request that field is the caller key's team, set by the
    proxy over anything the request body says (``litellm_metadata`` is not: it is not trusted here).
    """
    if not isinstance(litellm_params, Mapping):
        return False
    metadata = litellm_params.get("metadata")
    return isinstance(metadata, Mapping) and metadata.get("user_api_key_team_id") == HEALTH_CHECK_ACCOUNT


def configured_catalog() -> Catalog:
    """The catalog as this environment configures it (``CONOL_MODELS_FILE``, ``CONOL_MODELS_EXTRA``)."""
    return default_catalog(os.environ.get(ENV_MODELS_FILE), os.environ.get(ENV_MODELS_EXTRA))


def _catalog_model(model: str, agent_model: str | None) -> CatalogModel:
    """The catalog's entry for ``model``; or, when the deployment names the ``agent_model`` to send,
    that one: a model conol offers that the catalog does not know yet."""
    if agent_model is None:
        return configured_catalog().resolve(model)
    return CatalogModel(id=model.removeprefix("conol/"), agent_model=agent_model)


def _effort(
    params: Mapping[str, Any], settings: Settings, original_body: Mapping[str, Any] | None, ladder: Any
) -> Any:
    return choose_effort(
        effort_inputs(params, original_body),
        ladder=ladder,
        default_effort=settings["default_effort"],
        max_effort=settings["max_effort"],
    ).effort


def _checked_limits(params: Mapping[str, Any]) -> AnswerLimits:
    _refuse_unsupported(params)
    return answer_limits(params)


def _refuse_unsupported(params: Mapping[str, Any]) -> None:
    n = params.get("n")
    if n not in (None, 1):
        raise BadRequest(f"n={n} is not supported: conol returns exactly one answer per request")


def _tool_schemas(tools: list[ToolSpec], mode: ToolValidation) -> dict[str, Mapping[str, Any]]:
    """The schemas client tool calls are validated against (none when validation is off)."""
    if mode == "off":
        return {}
    for tool in tools:
        check_tool_schema(tool.name, tool.input_schema)
    return {tool.name: tool.input_schema for tool in tools}


def _token(api_key: str | None) -> str:
    token = api_key or os.environ.get(ENV_TOKEN)
    if not token:
        raise MissingCredential(
            "no conol session token: set CONOL_SESSION_TOKEN, or pass api_key (in code, or as "
            "litellm_params.api_key in the proxy config), to the value of the "
            "__Secure-better-auth.session_token cookie of a logged-in conol.ai browser session"
        )
    return session_token(token)  # the raw value, percent-encoded or inside a pasted Cookie header


def _base_url(api_base: str | None) -> str:
    return str(api_base or os.environ.get(ENV_BASE) or SETTINGS["api_base"].default).rstrip("/")


def _tools_and_choice(tools: list[ToolSpec], tool_choice: Any) -> tuple[list[ToolSpec], Any]:
    """The tools to send, per ``tool_choice`` (conol itself enforces none of it)."""
    choice = tool_choice or "auto"
    if choice == "none":
        return [], choice  # no tools sent, so no tool calls can come back for the client
    if isinstance(choice, Mapping):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        chosen = [t for t in tools if t.name == name]
        if not chosen:
            raise BadRequest(f"tool_choice names {name!r}, which is not one of the request's tools")
        return chosen, choice
    if choice not in ("auto", "required"):
        raise BadRequest(
            f"tool_choice {choice!r} is not one of 'auto', 'none', 'required' or a named function"
        )
    if choice == "required" and not tools:
        raise BadRequest("tool_choice 'required' needs at least one tool")
    return tools, choice


MAX_STOP_SEQUENCES = 4  # as OpenAI allows


def answer_limits(params: Mapping[str, Any]) -> AnswerLimits:
    """``stop`` and ``max_tokens`` / ``max_completion_tokens`` (the smaller of the two), checked."""
    limits = [
        _token_limit(name, params.get(name))
        for name in ("max_tokens", "max_completion_tokens")
        if params.get(name) is not None
    ]
    return AnswerLimits(stop=_stop_sequences(params.get("stop")), max_tokens=min(limits, default=None))


def _token_limit(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequest(f"{name} must be a whole number of at least 1, got {value!r}")
    return value


def _stop_sequences(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    sequences = [value] if isinstance(value, str) else value
    if not isinstance(sequences, list | tuple):
        raise BadRequest(f"stop must be a string or a list of strings, got {type(value).__name__}")
    if len(sequences) > MAX_STOP_SEQUENCES:
        raise BadRequest(f"stop takes at most {MAX_STOP_SEQUENCES} sequences, got {len(sequences)}")
    for sequence in sequences:
        if not isinstance(sequence, str) or not sequence:
            raise BadRequest(f"stop sequences must be non-empty strings, got {sequence!r}")
    return tuple(sequences)
