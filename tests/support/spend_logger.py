"""Proxy callbacks for tests, loaded by the proxy subprocess (``PYTHONPATH=tests``) as
``support.spend_logger.spend_recorder`` and ``support.spend_logger.spend_rows``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from litellm.integrations.custom_logger import CustomLogger


class SpendRecorder(CustomLogger):  # type: ignore[misc]
    """Appends each request's StandardLoggingPayload (what LiteLLM's spend logs are made of) to the
    JSON-lines file named by SPEND_LOG_FILE."""

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write(kwargs, "success")

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write(kwargs, "failure")

    def _write(self, kwargs: Any, outcome: str) -> None:
        payload = kwargs.get("standard_logging_object") or {}
        row = {
            "outcome": outcome,
            "model": payload.get("model"),
            "prompt_tokens": payload.get("prompt_tokens"),
            "completion_tokens": payload.get("completion_tokens"),
            "total_tokens": payload.get("total_tokens"),
            "response_cost": payload.get("response_cost"),
            "stream": payload.get("stream"),
            "payload": json.dumps(payload, default=str),
        }
        with open(os.environ["SPEND_LOG_FILE"], "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


class SpendRows(CustomLogger):  # type: ignore[misc]
    """Writes, per request, the row LiteLLM's spend logs would store (``get_logging_payload``, the
    builder of ``LiteLLM_SpendLogs`` rows) and the StandardLoggingPayload, as JSON lines to the file
    named by SPEND_ROWS_FILE (the secrets test reads them)."""

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write("success", kwargs, response_obj, start_time, end_time)

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._write("failure", kwargs, response_obj, start_time, end_time)

    def _write(self, outcome: str, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        row: dict[str, Any] = {"outcome": outcome}
        try:
            from litellm.proxy.spend_tracking.spend_tracking_utils import get_logging_payload

            row["spend_log"] = get_logging_payload(kwargs, response_obj, start_time, end_time)
        except Exception as exc:  # recorded, so the test sees it
            row["spend_log_error"] = repr(exc)
        row["standard_logging_object"] = kwargs.get("standard_logging_object")
        with open(os.environ["SPEND_ROWS_FILE"], "a", encoding="utf-8") as out:
            out.write(json.dumps(row, default=str) + "\n")


spend_recorder = SpendRecorder()
spend_rows = SpendRows()


def spend_rows_after(path: Any, before: int, count: int, seconds: float) -> list[dict[str, Any]]:
    """The rows :class:`SpendRecorder` wrote after the first ``before``, once there are ``count`` (or
    ``seconds`` have passed: the proxy logs after it answers)."""
    deadline = time.monotonic() + seconds
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        lines = Path(path).read_text().splitlines() if Path(path).exists() else []
        rows = [json.loads(line) for line in lines[before:]]
        if len(rows) >= count:
            break
        time.sleep(0.1)
    return rows
