"""Time budgets and the other numeric options of a request: read from the deployment's or the caller's
params, else the environment, else the defaults; checked, with errors that name the option."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol

from ._end_policy import Timing
from ._endpoint import DEFAULT_MAX_CONCURRENT_POLLS
from ._errors import BadRequest

ENV_FIRST_EVENT_TIMEOUT = "CONOL_FIRST_EVENT_TIMEOUT"
ENV_IDLE_TIMEOUT = "CONOL_IDLE_TIMEOUT"
ENV_MAX_CONCURRENT_POLLS = "CONOL_MAX_CONCURRENT_POLLS"
ENV_SETTLE = "CONOL_SETTLE_WINDOW"


MAX_BUDGET_SECONDS = 3600.0


DEFAULT_TIMEOUT = 600.0


def request_timing(params: Mapping[str, Any]) -> Timing:
    defaults = Timing()
    settle = _seconds(params, "settle_window", defaults.settle_window, env=ENV_SETTLE)
    interval = _seconds(params, "status_poll_interval", defaults.poll_interval)
    tool_settle = _seconds(params, "tool_call_settle", defaults.tool_call_settle)
    return Timing(
        settle_window=settle,
        poll_interval=interval,
        poll_after_idle=interval,
        # thinner polls only once the settle window has passed, and never slower than that window
        medium_poll_after=settle + interval,
        medium_poll_interval=max(interval, min(defaults.medium_poll_interval, settle)),
        tool_call_settle=tool_settle,
        **_budgets(params, defaults),
    )


def _budgets(params: Mapping[str, Any], defaults: Timing) -> dict[str, float]:
    """The stall budgets (seconds, > 0, at most an hour), from the call/deployment or the environment.

    * ``first_event_timeout`` (env ``CONOL_FIRST_EVENT_TIMEOUT``, default 60): no event at all this
      long after the session was created → ``litellm.Timeout``;
    * ``idle_timeout`` (env ``CONOL_IDLE_TIMEOUT``, default 120): no event this long mid-answer
      while the session is still running → ``litellm.Timeout``. conol can be silent for many
      seconds while a built-in tool runs: keep it well above that.

    The request ``timeout`` still bounds the whole call.
    """
    budgets: dict[str, float] = {}
    for name, env, default in (
        ("first_event_timeout", ENV_FIRST_EVENT_TIMEOUT, defaults.first_event_timeout),
        ("idle_timeout", ENV_IDLE_TIMEOUT, defaults.idle_timeout),
    ):
        value, source = _option_or_env(params, name, env)
        budgets[name] = default if value is None else _budget_seconds(source, value)
    return budgets


def max_concurrent_polls() -> int:
    """Status polls in flight at once per event loop (env ``CONOL_MAX_CONCURRENT_POLLS``, default 16)."""
    raw = os.environ.get(ENV_MAX_CONCURRENT_POLLS, "").strip()
    if not raw:
        return DEFAULT_MAX_CONCURRENT_POLLS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise BadRequest(f"{ENV_MAX_CONCURRENT_POLLS} must be a whole number of at least 1, got {raw!r}")
    return value


def _option_or_env(params: Mapping[str, Any], name: str, env: str | None) -> tuple[Any, str]:
    """The call's/deployment's value, else the environment's; with where it came from (for errors)."""
    value = params.get(name)
    if value is None and env and os.environ.get(env, "").strip():
        return os.environ[env], env
    return value, name


def _as_seconds(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{name} must be a number of seconds, got {value!r}") from None


def _budget_seconds(name: str, value: Any) -> float:
    seconds = _as_seconds(name, value)
    if not 0 < seconds <= MAX_BUDGET_SECONDS:
        raise BadRequest(
            f"{name} must be more than 0 and at most {MAX_BUDGET_SECONDS:g} seconds, got {seconds}"
        )
    return seconds


def _seconds(params: Mapping[str, Any], name: str, default: float, env: str | None = None) -> float:
    value, source = _option_or_env(params, name, env)
    if value is None:
        return default
    seconds = _as_seconds(source, value)
    if not 0 <= seconds <= 120:
        raise BadRequest(f"{source} must be between 0 and 120 seconds, got {seconds}")
    return seconds


class SplitTimeout(Protocol):
    """A timeout given per phase, as ``httpx.Timeout`` is (read structurally: the core imports no httpx)."""

    @property
    def read(self) -> float | None: ...

    @property
    def connect(self) -> float | None: ...

    @property
    def pool(self) -> float | None: ...


def timeout_seconds(timeout: float | SplitTimeout | None) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, int | float):
        return float(timeout)
    values = [v for v in (timeout.read, timeout.connect, timeout.pool) if v is not None]
    return max(values) if values else DEFAULT_TIMEOUT
