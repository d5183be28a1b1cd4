"""The time budgets of a request, from its settings (``core/config/settings_table.py``), and its
overall timeout."""

from __future__ import annotations

from typing import Protocol

from ..protocol.end_policy import Timing
from ..settings import Settings

DEFAULT_TIMEOUT = 600.0


def request_timing(settings: Settings) -> Timing:
    """The end-of-answer timing of one call; the stall budgets (``first_event_timeout``,
    ``idle_timeout``) bound silence, the request ``timeout`` still bounds the whole call."""
    defaults = Timing()
    settle: float = settings["settle_window"]
    interval: float = settings["status_poll_interval"]
    return Timing(
        settle_window=settle,
        poll_interval=interval,
        poll_after_idle=interval,
        # thinner polls only once the settle window has passed, and never slower than that window
        medium_poll_after=settle + interval,
        medium_poll_interval=max(interval, min(defaults.medium_poll_interval, settle)),
        tool_call_settle=settings["tool_call_settle"],
        first_event_timeout=settings["first_event_timeout"],
        idle_timeout=settings["idle_timeout"],
    )


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
