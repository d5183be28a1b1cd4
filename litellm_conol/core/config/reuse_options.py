"""The session-reuse options of a call (``session_reuse``, ``model_pinning``, their limits and where
bindings are shared), read from the settings model (docs/session-reuse.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote

from ..settings import Settings

ReuseMode = Literal["auto", "off"]
PinningMode = Literal["create", "pin", "auto"]

# As other public clients keep them (docs/protocol.md#session-reuse-by-other-clients):
DEFAULT_TTL = 6 * 3600.0  # seconds a binding lives after its last use
DEFAULT_CAP = 500  # bindings one process keeps in memory
DEFAULT_BACKOFF = 600.0  # seconds reuse stays off for an upstream that refused a follow-up


@dataclass(frozen=True)
class ReuseOptions:
    """``session_reuse`` and ``model_pinning`` and their limits, per deployment or per request."""

    mode: ReuseMode = "auto"
    pinning: PinningMode = "create"
    ttl: float = DEFAULT_TTL
    cap: int = DEFAULT_CAP
    backoff: float = DEFAULT_BACKOFF
    # the deployment's Redis (else the environment's, else memory); holds the password: never in a repr
    redis_url: str | None = field(default=None, repr=False)


def reuse_options(settings: Settings) -> ReuseOptions:
    """The reuse options of one call, as the settings model read them."""
    return ReuseOptions(
        mode="off" if settings["session_reuse"] == "off" else "auto",
        pinning=settings["model_pinning"],
        ttl=settings["session_reuse_ttl"],
        cap=settings["session_reuse_cap"],
        backoff=settings["session_reuse_backoff"],
        redis_url=redis_url(settings),
    )


def redis_url(settings: Settings) -> str | None:
    """Where bindings are shared, the way LiteLLM takes Redis settings: ``redis_url``, else
    ``redis_host``/``redis_port`` with ``redis_username``/``redis_password`` (percent-encoded: a
    password may hold ``@`` or ``/``) and ``redis_ssl`` (``rediss://``); the call's own settings as a
    group before the environment's (a deployment naming a host is not mixed with an environment's URL)."""
    for source in ("param", "env"):
        if settings.source("redis_url") == source:
            return str(settings["redis_url"])
        if settings.source("redis_host") == source:
            username, password = settings["redis_username"], settings["redis_password"]
            user = quote(username, safe="") if username else ""
            auth = f"{user}:{quote(password, safe='')}@" if password else f"{user}@" if user else ""
            host = str(settings["redis_host"])
            host = f"[{host}]" if ":" in host and not host.startswith("[") else host  # IPv6
            scheme = "rediss" if settings["redis_ssl"] else "redis"
            return f"{scheme}://{auth}{host}:{settings['redis_port']}"
    return None
