"""A proxy callback for tests (``support.payload_logger.payload_recorder``, loaded by the proxy
subprocess with ``PYTHONPATH=tests``): what any LiteLLM logging integration gets of conol's per-request
fields, i.e. ``standard_logging_object.metadata.spend_logs_metadata.conol`` (docs/metrics.md), one JSON
line per request in the file named by PAYLOAD_LOG_FILE."""

from __future__ import annotations

import json
import os
from typing import Any

from litellm.integrations.custom_logger import CustomLogger


class PayloadRecorder(CustomLogger):  # type: ignore[misc]
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
        metadata = payload.get("metadata") or {}
        row = {
            "outcome": outcome,
            "call_id": payload.get("litellm_call_id"),  # the response's x-litellm-call-id
            "model_group": payload.get("model_group"),
            "model_id": payload.get("model_id"),
            "conol": (metadata.get("spend_logs_metadata") or {}).get("conol"),
            "pid": os.getpid(),
        }
        with open(os.environ["PAYLOAD_LOG_FILE"], "a", encoding="utf-8") as out:
            out.write(json.dumps(row, default=str) + "\n")


payload_recorder = PayloadRecorder()
