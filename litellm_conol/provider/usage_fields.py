"""What the usage log records of a request beyond LiteLLM's own logging
(docs/team-deployment.md#usage-log-and-spend).

The handler notes them on LiteLLM's logging object of the call (``litellm_compat.call_details``),
which every callback receives as ``kwargs``, on success and on failure alike: a failed request has no
response object to carry ``provider_specific_fields``, and its exception reaches callbacks mapped to
a LiteLLM class.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..client.follow_up import FollowUpStart
from .exchange import Exchange
from .litellm_compat import call_details

USAGE_FIELDS_KEY = "litellm_conol_usage"  # the key in the callbacks' kwargs


def request_fields(exchange: Exchange | None, error: BaseException | None = None) -> dict[str, Any]:
    """After a request answered or failed (``error``): the conol sessions it created (repair turns
    and the new session replacing a refused follow-up included), the turns it posted on existing
    sessions, whether it continued a session and why (not), and what refused it without a session."""
    runs = exchange.runs if exchange is not None else []
    followups = [isinstance(run.start, FollowUpStart) for run in runs if run.info is not None]
    reuse = exchange.reuse.fields() if exchange is not None else {}
    return {
        "sessions_created": followups.count(False),
        "followup_turns": followups.count(True),
        "session_reused": reuse.get("session_reused", False),
        "session_reuse_reason": reuse.get("session_reuse_reason") or None,
        "refused_by": getattr(error, "refused_by", "") or None,
    }


@dataclass
class Noted:
    """The request being noted: set ``exchange`` once it exists."""

    exchange: Exchange | None = None


@contextmanager
def noting(kwargs: Mapping[str, Any]) -> Iterator[Noted]:
    """Note the request's fields on the way out, answered or failed (the error re-raised)."""
    noted = Noted()
    error: BaseException | None = None
    try:
        yield noted
    except BaseException as exc:
        error = exc
        raise
    finally:
        details = call_details(kwargs.get("logging_obj"))
        if details is not None:
            details[USAGE_FIELDS_KEY] = _added(
                details.get(USAGE_FIELDS_KEY), request_fields(noted.exchange, error)
            )


def _added(earlier: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """The proxy's Router retries a request on one logging object: the sessions and turns of the
    attempts since the usage log last wrote a line of it (it takes the fields when it does) add up;
    reuse and refusal are the last attempt's."""
    if isinstance(earlier, Mapping):
        for name in ("sessions_created", "followup_turns"):
            fields[name] += int(earlier.get(name) or 0)
    return fields
