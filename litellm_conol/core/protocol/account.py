"""The account's answers, judged: is the token alive (``GET /api/auth/get-session``), and what is
left of the balance (``GET /api/billing/balance``). Pure functions of the status and the body.

The sources disagree on how a dead token looks (docs/protocol.md#authentication), so both count as dead: 401
(or 403), and 200 without a ``user``. A 200 whose body is not JSON is a checkpoint or proxy page in
front of conol: transient, never "dead" (a user would throw away a good token), as are 429 and 5xx.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["alive", "dead", "transient", "unknown"]
LOW_BALANCE = 10.0  # credits; below this doctor warns (a long agent turn can cost several)
DAY = 86400.0  # daily credits refill a day after the last refill (docs/protocol.md#balance)
REST_WHEN_UNKNOWN = 900.0  # seconds an exhausted account rests when its refill time is unknown
REST_WHEN_OVERDUE = 60.0  # seconds it rests when its refill is due but has not shown yet


@dataclass(frozen=True)
class AuthAnswer:
    verdict: Verdict
    detail: str  # what was seen, never the body's values (it may hold the token)
    expires: str | None = None


def judge_auth(status: int, body: bytes, retry_after: str | None = None) -> AuthAnswer:
    """What one get-session answer says about the token."""
    if status in (401, 403):
        return AuthAnswer("dead", f"HTTP {status}: the token is invalid or expired")
    if status == 429 or status >= 500:
        wait = f", Retry-After {retry_after}" if retry_after else ""
        return AuthAnswer("transient", f"HTTP {status}{wait}: conol is busy or failing; try again")
    if status != 200:
        return AuthAnswer("unknown", f"GET /api/auth/get-session answered HTTP {status}")
    try:
        data = json.loads(body)
    except ValueError:
        return AuthAnswer(
            "transient",
            f"HTTP 200 but the body is not JSON ({len(body)} bytes): a checkpoint or proxy page, not "
            "conol's answer; try again",
        )
    if data is None or data == {}:
        return AuthAnswer("dead", f"HTTP 200 but no session behind the token ({json.dumps(data)})")
    if not isinstance(data, dict):
        return AuthAnswer("unknown", f"HTTP 200 but the answer is a JSON {type(data).__name__}")
    if not {"session", "user"} & data.keys():
        return AuthAnswer(
            "unknown", f"HTTP 200 but neither session nor user in the answer ({describe_json_shape(data)})"
        )
    if not isinstance(data.get("user"), dict):
        return AuthAnswer("dead", f"HTTP 200 but no user behind the token ({describe_json_shape(data)})")
    session = data.get("session")
    expires = session.get("expiresAt") if isinstance(session, dict) else None
    return AuthAnswer("alive", "alive", expires if isinstance(expires, str) else None)


def describe_json_shape(value: Any) -> str:
    if isinstance(value, dict):
        return "keys: " + (", ".join(sorted(map(str, value))[:12]) or "none")
    return f"a JSON {type(value).__name__}" if value is not None else "not JSON"


# --- balance -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Balance:
    """``GET /api/billing/balance`` (docs/protocol.md#balance): ``total`` = daily + subscription + extra
    credits. The breakdown fields are ``None`` where the answer has only the total."""

    total: float
    daily: float | None = None
    subscription: float | None = None
    extra: float | None = None
    daily_refilled_at: str | None = None
    subscription_amount: float | None = None

    @property
    def has_breakdown(self) -> bool:
        return None not in (self.daily, self.subscription, self.extra)

    @property
    def plan(self) -> str | None:
        """A subscription when ``subscriptionAmount`` (the allotment) is above 0
        (docs/protocol.md#balance)."""
        if self.subscription_amount is None:
            return None
        return "Subscription" if self.subscription_amount > 0 else "Free"

    @property
    def low(self) -> bool:
        return self.total < LOW_BALANCE

    @property
    def next_refill(self) -> float | None:
        """When the daily credits refill next (POSIX seconds): ``dailyRefilledAt`` + 24 h; ``None``
        when the answer does not say."""
        refilled = _timestamp(self.daily_refilled_at)
        return None if refilled is None else refilled + DAY

    def describe(self) -> str:
        text = f"total {self.total:g}"
        if not self.has_breakdown:
            return text + " (no breakdown: daily, subscription and extra credits absent)"
        plan = f", plan {self.plan}" if self.plan else ""
        text += f": daily {self.daily:g}, subscription {self.subscription:g}{plan}, extra {self.extra:g}"
        if self.daily_refilled_at:
            text += f"; daily credits refilled {self.daily_refilled_at}"
        return text


def read_balance(data: Any) -> Balance | None:
    """The balance in a JSON answer; ``None`` when it has no number under ``total``."""
    if not isinstance(data, dict):
        return None
    total = _number(data.get("total"))
    if total is None:
        return None
    refilled = data.get("dailyRefilledAt")
    return Balance(
        total=total,
        daily=_number(data.get("dailyCredits")),
        subscription=_number(data.get("subscriptionCredits")),
        extra=_number(data.get("extraCredits")),
        daily_refilled_at=refilled if isinstance(refilled, str) else None,
        subscription_amount=_number(data.get("subscriptionAmount")),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _timestamp(text: str | None) -> float | None:
    """An ISO 8601 time (``2026-12-03T19:48:40.123Z``) as POSIX seconds; ``None`` when unreadable.
    A time without a zone is read as UTC (conol's answers carry ``Z``)."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def rest_seconds(next_refill: float | None, now: float) -> float:
    """How long an account out of credits rests: until its next refill, at most a day;
    ``REST_WHEN_UNKNOWN`` when the refill time is not known, ``REST_WHEN_OVERDUE`` when it is past
    (conol has not refilled yet, or the balance answer was stale)."""
    if next_refill is None:
        return REST_WHEN_UNKNOWN
    if next_refill <= now:
        return REST_WHEN_OVERDUE
    return min(next_refill - now, DAY)
