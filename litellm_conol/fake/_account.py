"""The fake's conol accounts: one per token, each with its own balance and daily refill
(docs/protocol.md#balance), and the account endpoints' answers in each mode of ``FakeConfig``
(``balance``, ``auth``).

An account's daily credits refill to its allotment one day after the last refill
(``dailyRefilledAt`` + 24 h), found out lazily whenever the account is looked at. Every turn (a
session's first turn, a follow-up) takes ``turn_cost`` credits, daily credits first, then the
subscription's, then extra ones; an account that cannot pay a turn runs it as conol does when
the balance is too low (the ``credit_error`` scenario: the session is created, its preview says so).
The default account (the fake's own token) costs nothing per turn, so it never runs out unless
``balance`` is ``zero``.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import unquote

from ._library._readings import NO_CREDITS as NO_CREDITS

# What a Vercel-style checkpoint in front of conol answers with 200: not JSON
# (docs/protocol.md#authentication).
CHECKPOINT_PAGE = (
    "<!doctype html><html><head><title>Vercel Security Checkpoint</title></head>"
    "<body><p>We're verifying your browser.</p></body></html>"
)
DAILY, EXTRA = 10.0, 2.5  # the "full" balance: 12.5 in all, as the spec's {total} shape says
DAY = 86400.0  # seconds between two daily refills
DEFAULT_ACCOUNT = "default"
# What can be set on an account (``FakeConol.add_account`` / ``set_account``, ``POST /_fake/accounts``).
SETTABLE = (
    "daily",
    "daily_allotment",
    "subscription",
    "subscription_amount",
    "extra",
    "turn_cost",
    "refill_in",
)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


@dataclass
class FakeAccount:
    """One conol account: its credits, when its daily credits were last refilled, and what the fake
    saw it do (``sessions``, ``followups``, ``uploads``, ``credit_errors``: turns it could not pay).
    ``repr`` never shows the token."""

    name: str
    token: str = field(repr=False)
    daily: float = DAILY
    daily_allotment: float = DAILY
    subscription: float = 0.0
    subscription_amount: float = 0.0
    extra: float = EXTRA
    turn_cost: float = 0.0
    refilled_at: float = field(default_factory=lambda: time.time() - 3600)
    refills: int = 0
    sessions: int = 0
    followups: int = 0
    uploads: int = 0
    credit_errors: int = 0
    balance_reads: int = 0

    @property
    def total(self) -> float:
        return self.daily + self.subscription + self.extra

    @property
    def next_refill(self) -> float:
        return self.refilled_at + DAY

    def refill_if_due(self, now: float) -> None:
        """Daily credits back to the allotment for each day passed since the last refill."""
        while now >= self.refilled_at + DAY:
            self.refilled_at += DAY
            self.daily = self.daily_allotment
            self.refills += 1

    def pay_turn(self, now: float, *, empty: bool = False) -> bool:
        """Take one turn's credits; ``False`` (nothing taken, ``credit_errors`` counted) when the
        balance is too low for it (``empty``: the ``balance: zero`` reading)."""
        self.refill_if_due(now)
        if empty or self.total <= 0 or self.total < self.turn_cost:
            self.credit_errors += 1
            return False
        cost = self.turn_cost
        for part in ("daily", "subscription", "extra"):
            taken = min(cost, getattr(self, part))
            setattr(self, part, getattr(self, part) - taken)
            cost -= taken
        return True

    def update(self, changes: dict[str, Any], now: float) -> None:
        """Set any of ``SETTABLE``; ``refill_in`` is seconds until the next daily refill."""
        unknown = set(changes) - set(SETTABLE)
        if unknown:
            raise ValueError(f"unknown account keys {sorted(unknown)}; known: {', '.join(SETTABLE)}")
        for key, value in changes.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"account {key} must be a number, got {value!r}")
            if key == "refill_in":
                self.refilled_at = now - DAY + float(value)
            else:
                setattr(self, key, float(value))

    def balance_body(self, mode: str, now: float) -> dict[str, Any]:
        """``GET /api/billing/balance``: the eight fields (``full``, ``zero``) or ``{total}``."""
        self.refill_if_due(now)
        self.balance_reads += 1
        zero = mode == "zero"
        daily, subscription, extra = (0.0, 0.0, 0.0) if zero else (self.daily, self.subscription, self.extra)
        if mode == "total":
            return {"total": daily + subscription + extra}
        return {
            "userId": f"usr_{self.name}",
            "dailyCredits": daily,
            "dailyRefilledAt": _iso(self.refilled_at),
            "subscriptionCredits": subscription,
            "subscriptionAmount": self.subscription_amount,
            "extraCredits": extra,
            "total": daily + subscription + extra,
            "updatedAt": _iso(now),
        }

    def to_json(self) -> dict[str, Any]:
        """The account as ``GET /_fake/accounts`` shows it (the token included: it is the fake's)."""
        return {**asdict(self), "total": self.total, "next_refill": self.next_refill}


_COUNTERS = ("refills", "sessions", "followups", "uploads", "credit_errors", "balance_reads")


class Accounts:
    """The accounts by name; a request's cookie finds its account (compared decoded, in constant
    time: conol takes the value raw or percent-encoded, docs/protocol.md#authentication)."""

    def __init__(self, token: str) -> None:
        self._initial: dict[str, tuple[str, dict[str, Any]]] = {DEFAULT_ACCOUNT: (token, {})}
        self.by_name: dict[str, FakeAccount] = {}
        self.reset()

    def reset(self) -> None:
        """Every account back to the state it was added with, its counts at zero."""
        now = time.time()
        self.by_name = {}
        for name, (token, state) in self._initial.items():
            account = FakeAccount(name, token)
            account.update(state, now)
            self.by_name[name] = account

    def add(self, name: str, token: str, state: dict[str, Any]) -> FakeAccount:
        if not name or name in self.by_name:
            raise ValueError(f"account name {name!r} is empty or taken")
        if not token or any(hmac.compare_digest(token, a.token) for a in self.by_name.values()):
            raise ValueError("the token is empty or another account's")
        account = FakeAccount(name, token)
        account.update(state, time.time())  # ValueError before anything is kept
        self._initial[name] = (token, dict(state))
        self.by_name[name] = account
        return account

    def find(self, cookie: str | None) -> FakeAccount | None:
        if cookie is None:
            return None
        given = unquote(cookie).encode()
        found = None
        for account in self.by_name.values():  # every one compared: the time tells nothing
            if hmac.compare_digest(given, unquote(account.token).encode()):
                found = account
        return found

    def get(self, name: str | None) -> FakeAccount:
        return self.by_name[name or DEFAULT_ACCOUNT]


def account_counts(account: FakeAccount) -> dict[str, int]:
    """What the fake counted for an account (for tests comparing with a client's own counts)."""
    return {name: getattr(account, name) for name in _COUNTERS}
