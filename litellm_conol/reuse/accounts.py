"""Accounts that rest: an account out of credits is refused without a session until its refill, and
(``balance_poll_interval``) an account whose balance is below ``min_balance`` rests before it fails a
request (docs/team-deployment.md#several-accounts).

The rest is what LiteLLM's Router needs to keep the deployment out of rotation: every refusal, and
the credit error that started the rest, is a 429 carrying ``retry-after`` = the seconds left until the
account's refill, which the Router takes as the deployment's cooldown (in its Redis, across the fleet)
while it retries the request on the other deployments of the model group. Our own record of the
rest is kept where the failure memory keeps its records (``reuse.shared_state``: the Redis of session
reuse, shared by every worker and instance, else this process's memory), so a worker or instance whose
Router has not cooled the deployment yet still spends no session on that account.

When the refill is: ``dailyRefilledAt`` + 24 h from the balance (``GET /api/billing/balance``, read
once when the credit error comes and kept per account), bounded (``core.protocol.account.rest_seconds``).
The balance read of polling happens at most once per account per interval in the whole fleet: the
reader claims the account's read key for the interval. Nothing kept holds the token: accounts are
keyed by a digest.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import time
import uuid
from dataclasses import asdict, dataclass, field

from ..client.pool import shared_client
from ..client.transport import Transport
from ..core.config.options import ConolRequest
from ..core.errors import AccountResting, ConolError, OutOfCredits
from ..core.protocol import paths
from ..core.protocol.account import Balance, read_balance, rest_seconds
from ..core.protocol.agent_failures import NO_RETRY
from ..core.protocol.endpoint import Endpoint
from .shared_state import SharedState, forget_kind, shared_state

log = logging.getLogger("litellm_conol.accounts")

KIND = "account:v1"  # the records' format version: another version's workers read other keys
CAPACITY = 1024  # accounts remembered in memory per process
READ_TIMEOUT = 5.0  # seconds for one balance read
FIRST_READ_WAIT = 2.0  # seconds a request waits for another worker's first read of an account
LOOK_PAUSE = 0.05  # seconds between looks while waiting for it
_background: set[asyncio.Task[None]] = set()


def account_key(endpoint: Endpoint) -> str:
    """The account's key: conol and token, hashed (the token is never kept)."""
    return hashlib.sha256(f"{endpoint.base_url}\n{endpoint.token}".encode()).hexdigest()


@dataclass(frozen=True)
class Rest:
    """An account resting from ``since`` until ``until`` (POSIX seconds): ``out_of_credits`` or
    ``low_balance``."""

    until: float
    reason: str
    since: float = 0.0

    def left(self, now: float) -> float:
        return self.until - now

    @classmethod
    def from_json(cls, raw: str | None) -> Rest | None:
        try:
            data = json.loads(raw) if raw else None
            return (
                cls(float(data["until"]), str(data["reason"]), float(data.get("since", 0))) if data else None
            )
        except (ValueError, KeyError, TypeError):
            return None  # another version's record: none


@dataclass
class Seen:
    """What one request learnt of its account: the balance (and when it was read), the rest."""

    balance: Balance | None = None
    read_at: float | None = None
    rest: Rest | None = None
    resting: bool = False  # whether the request was refused or failed because the account rests


@dataclass
class AccountGuard:
    """One request's view of its account's rest and balance."""

    endpoint: Endpoint
    key: str
    records: SharedState
    poll_interval: float = 0.0
    min_balance: float = 0.0
    seen: Seen = field(default_factory=Seen)

    @classmethod
    def of(cls, request: ConolRequest) -> AccountGuard:
        endpoint = request.endpoint
        records = shared_state(request.reuse.redis_url, KIND, CAPACITY)
        watch = request.balance_watch
        return cls(endpoint, account_key(endpoint), records, watch.poll_interval, watch.min_balance)

    async def check(self) -> None:
        """Raise ``AccountResting`` (429, ``retry-after``) instead of spending a session while the
        account rests; with polling, read the balance when due, and rest a low account first."""
        raw_rest, raw_balance = await self.records.get_many([f"rest:{self.key}", f"balance:{self.key}"])
        now = time.time()
        self._adopt_balance(raw_balance)
        rest = Rest.from_json(raw_rest)
        if self.poll_interval > 0:
            await self._poll(now)
            if rest is not None and self._topped_up(rest):
                await self.records.delete(f"rest:{self.key}")
                rest = None
            if rest is None and self._low():
                rest = await self._rest("low_balance", now)
        if rest is not None and rest.left(now) > 0:
            self.seen.rest, self.seen.resting = rest, True
            raise _refusal(rest, now, self.seen.balance)
        self.seen.rest = rest

    async def exhausted(self, error: OutOfCredits) -> OutOfCredits:
        """conol said the account is out of credits: it rests until its refill (a rest another worker
        just started is taken as it is); the error carries the time left as ``retry-after``."""
        now = time.time()
        rest = Rest.from_json(await self.records.get(f"rest:{self.key}"))
        if rest is None or rest.left(now) <= 0:
            refill = self.seen.balance.next_refill if self.seen.balance is not None else None
            if refill is None or refill <= now:  # unknown, or from before the last refill: read again
                await self._read(now)
            rest = await self._rest("out_of_credits", now)
        self.seen.rest, self.seen.resting = rest, True
        seconds = _whole_seconds(rest.left(now))
        error.message += f" (this account rests until its refill in {seconds} s: requests go to the others)"
        error.headers.update({"retry-after": str(seconds), **NO_RETRY})
        return error

    # -- the balance --

    def _adopt_balance(self, raw: str | None) -> None:
        if not raw:
            return
        try:
            data = json.loads(raw)
            balance = read_balance(data["balance"])
            if balance is not None:
                self.seen.balance, self.seen.read_at = balance, float(data["read_at"])
        except (ValueError, KeyError, TypeError):
            return  # another version's record: none

    async def _poll(self, now: float) -> None:
        """Read the balance when the last read is ``poll_interval`` old, if this request claims the
        read (one per account per interval in the fleet). A first read is waited for (briefly, when
        another worker does it): a request must not run on an account nobody has looked at yet."""
        read_at = self.seen.read_at
        if read_at is not None and now - read_at < self.poll_interval:
            return
        mine = uuid.uuid4().hex  # the claim is this request's only if it holds this value
        claimed = await self.records.claim(f"read:{self.key}", mine, self.poll_interval) == mine
        if read_at is not None:
            if claimed:  # a refresh: in the background, the request goes on with what is known
                task = asyncio.ensure_future(self._read(now))
                _background.add(task)
                task.add_done_callback(_background.discard)
            return
        if claimed:
            await self._read(now)
            return
        give_up = time.monotonic() + FIRST_READ_WAIT
        while self.seen.balance is None and time.monotonic() < give_up:
            await asyncio.sleep(LOOK_PAUSE)
            self._adopt_balance(await self.records.get(f"balance:{self.key}"))

    async def _read(self, now: float) -> None:
        """``GET /api/billing/balance`` → ``seen`` and the shared record; a failed read keeps what
        was known (the request goes on: a balance never decides an answer)."""
        transport = Transport(self.endpoint, shared_client(), request_timeout=READ_TIMEOUT)
        try:
            status, data = await transport.get_json(paths.BALANCE, "reading the balance")
        except ConolError as exc:
            log.warning("litellm-conol: the balance could not be read: %s", exc.message)
            return
        balance = read_balance(data) if status == 200 else None
        if balance is None:
            log.warning("litellm-conol: the balance answer is unusable (HTTP %s)", status)
            return
        self.seen.balance, self.seen.read_at = balance, now
        record = json.dumps({"read_at": now, "balance": _balance_json(balance)})
        await self.records.put(f"balance:{self.key}", record, max(3 * self.poll_interval, 3600.0))

    def _low(self) -> bool:
        balance = self.seen.balance
        return balance is not None and balance.total < self.min_balance

    def _topped_up(self, rest: Rest) -> bool:
        """A balance read after the rest began says the account has credits again."""
        balance, read_at = self.seen.balance, self.seen.read_at
        fresh = read_at is not None and read_at > rest.since
        return fresh and balance is not None and balance.total > 0 and not self._low()

    async def _rest(self, reason: str, now: float) -> Rest:
        balance = self.seen.balance
        rest = Rest(now + rest_seconds(balance.next_refill if balance else None, now), reason, since=now)
        await self.records.put(f"rest:{self.key}", json.dumps(asdict(rest)), rest.left(now))
        log.warning(
            "litellm-conol: a conol account rests for %.0f s (%s)", rest.left(now), reason.replace("_", " ")
        )
        return rest


def _balance_json(balance: Balance) -> dict[str, object]:
    """The balance as conol's own answer spells it (``read_balance`` reads it back)."""
    return {
        "total": balance.total,
        "dailyCredits": balance.daily,
        "subscriptionCredits": balance.subscription,
        "extraCredits": balance.extra,
        "dailyRefilledAt": balance.daily_refilled_at,
        "subscriptionAmount": balance.subscription_amount,
    }


def _whole_seconds(seconds: float) -> int:
    """Retry-After in whole seconds, at least one (LiteLLM reads it as an integer)."""
    return max(1, math.ceil(seconds))


def _refusal(rest: Rest, now: float, balance: Balance | None) -> AccountResting:
    seconds = _whole_seconds(rest.left(now))
    why = (
        f"its balance ({balance.total:g} credits) is below min_balance"
        if rest.reason == "low_balance" and balance is not None
        else "it is out of credits"
    )
    return AccountResting(
        f"refused without starting a conol session: this deployment's conol account rests until its "
        f"refill in {seconds} s ({why}); the model group's other deployments serve meanwhile",
        headers={"retry-after": str(seconds), **NO_RETRY},
    )


def forget_accounts() -> None:
    """Forget every account's rest and balance this process holds in memory (a test's fresh start:
    the ``conol_fake`` fixture; what Redis holds stays)."""
    forget_kind(KIND)
