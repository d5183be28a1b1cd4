"""A proxy callback for tests: appends each request's StandardLoggingPayload (what LiteLLM's spend
logs are made of) to the JSON-lines file named by SPEND_LOG_FILE."""

from __future__ import annotations

import json
import os
from typing import Any

from litellm.integrations.custom_logger import CustomLogger


class SpendRecorder(CustomLogger):  # type: ignore[misc]
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


spend_recorder = SpendRecorder()
