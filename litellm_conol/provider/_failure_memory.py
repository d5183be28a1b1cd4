"""The process's memory of recent failures (``core.FailureMemory``), keyed per request: agent
failures per session body, and answers that never validated per request (``FailureGuard.validation``).

One per process: each proxy worker remembers its own (``docs/effort-and-retries.md`` says what
that means for the session budget). ``CONOL_FAILURE_MEMORY_SECONDS`` (default 300; 0 turns it off)
is how long a failure is remembered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..core import (
    SETTINGS,
    ConolRequest,
    CreateSessionBody,
    FailureMemory,
    Remembered,
    failure_key,
    setting_value,
)

DEFAULT_SECONDS: float = SETTINGS["failure_memory_seconds"].default


_memory = FailureMemory(ttl=DEFAULT_SECONDS)


@dataclass(frozen=True)
class FailureGuard:
    """One session body's view of the memory: refuse a known failure, classify a new one."""

    request_key: str

    @classmethod
    def of(cls, request: ConolRequest, body: CreateSessionBody) -> FailureGuard:
        _memory.ttl = setting_value("failure_memory_seconds")
        endpoint = request.endpoint
        return cls(failure_key(endpoint.base_url, endpoint.token, body.to_json(), request.caller))

    def check(self) -> None:
        """Raise the remembered failure instead of spending a session on it."""
        refusal = _memory.refusal(self.request_key, time.monotonic())
        if refusal is not None:
            raise refusal

    def failed(self, error: Remembered) -> Remembered:
        return _memory.record(self.request_key, error, time.monotonic())

    def validation(self, request: ConolRequest) -> FailureGuard:
        """The guard of the request's validation (its answer, or its tool calls, never validating
        after the repair turns): a key of its own, so a first turn the agent ran without failing
        does not forget it, holding what decides validation besides the body (the schemas and the
        format instruction are in it): another ``tool_validation`` or ``max_repair_turns`` is
        another request."""
        how = f"{request.tool_validation}:{request.max_repair_turns}"
        return FailureGuard(f"{self.request_key}:validation:{how}")

    def succeeded(self) -> None:
        _memory.forget(self.request_key)
