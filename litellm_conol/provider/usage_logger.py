"""The usage-log callback (``litellm_conol.usage_log.usage_logger``; that module says how to use it)."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

from ..core.config.options import HEALTH_CHECK_ACCOUNT
from ..core.config.settings_table import SETTINGS
from .usage_fields import USAGE_FIELDS_KEY

ENV_USAGE_LOG = str(SETTINGS["usage_log"].env)
ERROR_LIMIT = 300


class UsageLogger(CustomLogger):  # type: ignore[misc]
    """Writes ``usage_record`` of every request; ``path`` overrides ``CONOL_USAGE_LOG``."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.path = path

    async def async_log_success_event(
        self, kwargs: dict[str, Any], response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write(kwargs, response_obj, "success")

    async def async_log_failure_event(
        self, kwargs: dict[str, Any], response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write(kwargs, response_obj, "failure")

    def _write(self, kwargs: dict[str, Any], response_obj: Any, outcome: str) -> None:
        record = usage_record(kwargs, response_obj, outcome)
        # Counted once: the proxy's Router retries on one logging object, which may be logged at a
        # failed attempt and again when a retry answers (docs/team-deployment.md#usage-log-and-spend).
        kwargs.pop(USAGE_FIELDS_KEY, None)
        if record is None:
            return
        line = json.dumps(record, ensure_ascii=False, default=str)
        path = self.path or os.environ.get(ENV_USAGE_LOG)
        if not path:
            sys.stderr.write(line + "\n")
            return
        # One write of one line in append mode: workers sharing the file never interleave lines.
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def usage_record(kwargs: Mapping[str, Any], response_obj: Any, outcome: str) -> dict[str, Any] | None:
    """One request's usage line, from what LiteLLM passes a callback; None for a health check."""
    payload: Mapping[str, Any] = kwargs.get("standard_logging_object") or {}
    metadata: Mapping[str, Any] = payload.get("metadata") or {}
    if metadata.get("user_api_key_team_id") == HEALTH_CHECK_ACCOUNT:
        return None
    conol = conol_fields(response_obj)
    error = payload.get("error_str")
    return {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        "outcome": outcome,
        **_identity(kwargs, payload, metadata),
        "model_group": payload.get("model_group"),
        "model": payload.get("model"),
        "stream": bool(payload.get("stream")),
        "prompt_tokens": payload.get("prompt_tokens"),
        "completion_tokens": payload.get("completion_tokens"),
        "usage_estimated": bool(conol.get("usage_estimated", True)),
        "cost": payload.get("response_cost"),
        "session_id": conol.get("session_id"),
        "effective_model": conol.get("effective_model"),
        "model_downgraded": conol.get("model_downgraded"),
        **_request_fields(kwargs, conol),
        "error": str(error)[:ERROR_LIMIT] if error else None,
        "pid": os.getpid(),
    }


def _identity(
    kwargs: Mapping[str, Any], payload: Mapping[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """Who asked, as LiteLLM's standard logging object has it (what the proxy's auth wrote): the
    end user (the request's ``user``), the key's hash and alias, its team and user."""
    return {
        "user": kwargs.get("user") or payload.get("end_user") or None,
        "key_hash": metadata.get("user_api_key_hash"),
        "key_alias": metadata.get("user_api_key_alias"),
        "team_id": metadata.get("user_api_key_team_id"),
        "user_id": metadata.get("user_api_key_user_id"),
    }


def _request_fields(kwargs: Mapping[str, Any], conol: Mapping[str, Any]) -> dict[str, Any]:
    """Sessions spent, reuse, and what refused the request, as the handler noted them
    (``provider.usage_fields``); for a call the handler never saw (LiteLLM failed before it), reuse
    from the response if any."""
    noted = kwargs.get(USAGE_FIELDS_KEY)
    if isinstance(noted, Mapping):
        return dict(noted)
    return {
        "sessions_created": None,
        "followup_turns": None,
        "session_reused": conol.get("session_reused"),
        "session_reuse_reason": conol.get("session_reuse_reason"),
        "refused_by": None,
    }


def conol_fields(response_obj: Any) -> Mapping[str, Any]:
    """The conol fields of a response (session id, effective model, …), streamed or not.

    A non-streamed response has them in its message's ``provider_specific_fields``. For a stream,
    LiteLLM's assembled response keeps only the last chunk's hidden ``provider_specific_fields``,
    where the handler puts the same fields.
    """
    choices = getattr(response_obj, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    fields = getattr(message, "provider_specific_fields", None)
    if isinstance(fields, Mapping) and fields:
        return fields
    hidden = getattr(response_obj, "_hidden_params", None)
    fields = hidden.get("provider_specific_fields") if isinstance(hidden, Mapping) else None
    return fields if isinstance(fields, Mapping) else {}


usage_logger = UsageLogger()
