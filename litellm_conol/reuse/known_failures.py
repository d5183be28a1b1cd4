"""Known failures: the same request failing the same way twice is deterministic, so a third attempt
is refused without a paid session (docs/effort-and-retries.md#the-memory-of-recent-failures).

It keeps agent failures and answers that never validated (``InvalidStructuredOutput`` after the
repair turns) alike. It keeps no clock; callers pass ``now``. Where the records live (memory or
Redis) and who consults them: ``failure_guard``.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass

from ..core.errors import AgentFailed, AgentFailedPermanently, InvalidStructuredOutput, OutOfCredits
from ..core.protocol.agent_failures import NO_RETRY


def failure_key(base_url: str, token: str, body: bytes, caller: str = "") -> str:
    """A request's key: the account (conol and token), the caller (an opaque digest, ``""`` for
    none) and the session body, hashed, so neither the token nor the prompt is kept. One caller's
    failures never refuse another caller's requests."""
    account = hashlib.sha256(f"{base_url}\n{token}".encode()).hexdigest()
    scope = account + (f"\n{caller}" if caller else "")
    return hashlib.sha256(scope.encode() + b"\n" + body).hexdigest()


# What the memory keeps: agent failures, and answers that failed validation after the repair turns.
Remembered = AgentFailed | InvalidStructuredOutput


@dataclass
class _Seen:
    signature: str
    at: float
    error: Remembered | None  # set once the failure is known deterministic: later attempts get it
    rounds: int = 1  # how often the request failed this way in a row


class KnownFailures:
    """Recent failures per request, for ``ttl`` seconds.

    * A deterministic failure is remembered: the same request within ``ttl`` is refused without a
      new session. (Out of credits is the account's, not the request's: the account rests until its
      refill, ``reuse/accounts.py``; another deployment's account runs the same request at once.)
    * An unexplained failure is remembered by signature: if the same request fails the same way
      again within ``ttl``, that second failure is deterministic (400) and remembered as such.
    * A validation failure (the answer or a tool call still invalid after the repair turns) is
      remembered the same way: the same request gets one more round; failing again, it is
      deterministic (still 502, so Router fallbacks run, with ``x-should-retry: false``).
    * Transient failures stay retryable; a success forgets the request.
    """

    def __init__(self, ttl: float = 300.0, capacity: int = 4096) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self._seen: OrderedDict[str, _Seen] = OrderedDict()

    def refusal(self, request_key: str, now: float) -> Remembered | None:
        """The error to raise instead of starting a session, if this request is known to fail."""
        seen = self._live(request_key, now)
        if seen is not None and seen.error is not None:
            return _refused(seen.error, now - seen.at)
        return None

    def record(self, request_key: str, error: Remembered, now: float) -> Remembered:
        """Note ``error`` for this request; the error to raise (a repeat becomes deterministic)."""
        if self.ttl <= 0:
            return error
        if isinstance(error, AgentFailedPermanently):
            self._put(request_key, _Seen(error.signature, now, error))
            return error
        if isinstance(error, OutOfCredits) or error.kind == "transient":
            return error
        before = self._live(request_key, now)
        if before is not None and before.signature == error.signature:
            repeated = self._repeated(error, before, now)
            self._put(request_key, _Seen(error.signature, now, repeated, before.rounds + 1))
            return repeated
        self._put(request_key, _Seen(error.signature, now, None))
        return error

    def _repeated(self, error: Remembered, before: _Seen, now: float) -> Remembered:
        """The deterministic form of a failure seen before for the same request."""
        ago = now - before.at
        repeated: Remembered
        if isinstance(error, InvalidStructuredOutput):
            repeated = InvalidStructuredOutput(
                f"{error.message} (the same request failed validation in {before.rounds + 1} rounds in a "
                f"row, the one before {ago:.0f} s earlier: a retry would fail again, so identical requests "
                f"are refused without a conol session for the next {self.ttl:.0f} s; not retried)",
                headers=NO_RETRY,
            )
        else:
            repeated = AgentFailedPermanently(
                f"{error.message} (the same request failed the same way {ago:.0f} s before: "
                "a retry would fail again, not retried)",
                headers=NO_RETRY,
            )
        repeated.signature = error.signature
        return repeated

    def forget(self, request_key: str) -> None:
        self._seen.pop(request_key, None)

    # -- a store shared by processes keeps one request's record as JSON; the rules stay here --

    def export(self, request_key: str) -> str | None:
        """This request's record as JSON (for :meth:`adopt` in another process), or ``None``."""
        seen = self._seen.get(request_key)
        if seen is None:
            return None
        error = (
            None
            if seen.error is None
            else {"class": type(seen.error).__name__, "message": seen.error.message}
        )
        return json.dumps({"signature": seen.signature, "at": seen.at, "error": error, "rounds": seen.rounds})

    def adopt(self, request_key: str, raw: str | bytes | None) -> None:
        """Hold this request's record as :meth:`export` wrote it, instead of any of ours; ``None`` or
        a value that does not parse (another version's) leaves none."""
        self._seen.pop(request_key, None)
        seen = _seen_from_json(raw) if raw is not None else None
        if seen is not None:
            self._put(request_key, seen)

    def _live(self, key: str, now: float) -> _Seen | None:
        seen = self._seen.get(key)
        if seen is not None and now - seen.at > self.ttl:
            del self._seen[key]
            return None
        return seen

    def _put(self, key: str, seen: _Seen) -> None:
        self._seen.pop(key, None)
        self._seen[key] = seen
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)


_REMEMBERED_CLASSES: dict[str, type[Remembered]] = {
    "AgentFailedPermanently": AgentFailedPermanently,
    "OutOfCredits": OutOfCredits,
    "InvalidStructuredOutput": InvalidStructuredOutput,
}


def _seen_from_json(raw: str | bytes) -> _Seen | None:
    try:
        data = json.loads(raw)
        error = None
        if data["error"] is not None:
            error = _REMEMBERED_CLASSES[data["error"]["class"]](
                str(data["error"]["message"]), headers=NO_RETRY
            )
            error.signature = str(data["signature"])
        return _Seen(str(data["signature"]), float(data["at"]), error, int(data.get("rounds", 1)))
    except (ValueError, KeyError, TypeError):
        return None


def _refused(error: Remembered, ago: float) -> Remembered:
    refused = type(error)(
        f"refused without starting a conol session: {error.message} ({ago:.0f} s ago)", headers=NO_RETRY
    )
    refused.signature = error.signature
    refused.refused_by = "failure_memory"
    return refused
