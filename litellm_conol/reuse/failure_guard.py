"""The memory of recent failures (``reuse.known_failures``'s rules), keyed per request and kept where
the deployment's session reuse keeps its bindings: Redis shared by every worker and instance when
one is configured, else this process's memory (``reuse.shared_state``). Agent failures are keyed per
session body, answers that never validated per request (``FailureGuard.validation``).

``CONOL_FAILURE_MEMORY_SECONDS`` (default 300; 0 turns it off) is how long a failure is remembered
(docs/effort-and-retries.md#the-memory-of-recent-failures).

Remembering is not enough when identical requests arrive together (a client's retries of a request
still running, or one request sent to every instance at once): each would start its session before
any failed. So a request waits while an identical one is finding out: the first claims the request's
key for ``SAME_REQUEST_WAIT`` seconds; the others wait until it ends (and then are refused if it
failed in a way a retry repeats, or one of them tries next if it failed once unexplained), or until
it succeeded (then all run at once), at most ``SAME_REQUEST_WAIT`` seconds. So a deterministic
failure costs at most two sessions in the whole fleet however its retries arrive.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

from ..core.config.boundary import setting_value
from ..core.config.options import ConolRequest
from ..core.errors import AgentFailed, InvalidStructuredOutput, OutOfCredits
from ..core.protocol.wire import CreateSessionBody
from .accounts import AccountGuard
from .known_failures import KnownFailures, Remembered, failure_key
from .shared_state import SharedState, shared_state

FAILURE_KIND = "failure:v1"  # the record's format version: another version's workers read other keys
CLAIM_KIND = "failure-claim:v1"
CAPACITY = 4096  # records kept in memory per process
SAME_REQUEST_WAIT = 15.0  # seconds a request waits at most for an identical one to end
PASSED = "passed"  # an identical request succeeded: the claim is open to all
FIRST_PAUSE, LONGEST_PAUSE = 0.05, 0.5  # seconds between looks while waiting


@dataclass
class FailureGuard:
    """One session body's view of the memory: refuse a known failure, classify a new one, and let
    one identical request at a time find out."""

    request_key: str
    records: SharedState
    claims: SharedState
    ttl: float
    account: AccountGuard | None = None  # the account's rest (reuse/accounts.py), for a turn's guard
    _claim: str | None = field(default=None, init=False)

    @classmethod
    def of(
        cls, request: ConolRequest, body: CreateSessionBody, account: AccountGuard | None = None
    ) -> FailureGuard:
        endpoint, url = request.endpoint, request.reuse.redis_url
        return cls(
            failure_key(endpoint.base_url, endpoint.token, body.to_json(), request.caller),
            shared_state(url, FAILURE_KIND, CAPACITY),
            shared_state(url, CLAIM_KIND, CAPACITY),
            setting_value("failure_memory_seconds"),
            account,
        )

    async def check(self) -> None:
        """Raise the remembered failure instead of spending a session on it; while an identical
        request is running and has not succeeded, wait for it (at most ``SAME_REQUEST_WAIT``). A
        resting account refuses first, whatever the request."""
        if self.account is not None:
            await self.account.check()
        if self.ttl <= 0:
            return
        loop = asyncio.get_running_loop()
        give_up, pause = loop.time() + SAME_REQUEST_WAIT, FIRST_PAUSE
        mine = uuid.uuid4().hex
        while True:
            held = await self.claims.claim(self.request_key, mine, SAME_REQUEST_WAIT)
            if held == mine:
                self._claim = mine
            try:
                await self._raise_remembered()  # read after the claim: a failure just recorded counts
            except (AgentFailed, InvalidStructuredOutput):
                await self.release()
                raise
            if held in (mine, PASSED) or loop.time() >= give_up:
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)

    async def _raise_remembered(self) -> None:
        memory = self._memory(await self.records.get(self.request_key))
        refusal = memory.refusal(self.request_key, time.time())
        if refusal is not None:
            raise refusal

    async def failed(self, error: Remembered) -> Remembered:
        """Record ``error`` for this request; the error to raise (a repeat becomes deterministic). Out
        of credits, the account rests instead (until its refill, whatever the request)."""
        if isinstance(error, OutOfCredits) and self.account is not None:
            error = await self.account.exhausted(error)
        if self.ttl <= 0:
            return error
        memory = self._memory(await self.records.get(self.request_key))
        classified = memory.record(self.request_key, error, time.time())
        record = memory.export(self.request_key)
        if record is not None:
            await self.records.put(self.request_key, record, self.ttl)
        if self._claim is None:
            await self.claims.take(self.request_key, PASSED)  # identical requests wait again
        return classified

    def validation(self, request: ConolRequest) -> FailureGuard:
        """The guard of the request's validation (its answer, or its tool calls, never validating
        after the repair turns): a key of its own, so a first turn the agent ran without failing
        does not forget it, holding what decides validation besides the body (the schemas and the
        format instruction are in it): another ``tool_validation`` or ``max_repair_turns`` is
        another request."""
        how = f"{request.tool_validation}:{request.max_repair_turns}"
        return FailureGuard(f"{self.request_key}:validation:{how}", self.records, self.claims, self.ttl)

    async def succeeded(self) -> None:
        """Forget this request's failures; identical requests waiting for it run now."""
        if self.ttl <= 0:
            return
        await self.records.delete(self.request_key)
        if self._claim is not None:
            await self.claims.put(self.request_key, PASSED, SAME_REQUEST_WAIT)
            self._claim = None

    async def release(self) -> None:
        """The claim, if this request holds one, goes to the next identical request."""
        claim, self._claim = self._claim, None
        if claim is not None:
            await self.claims.take(self.request_key, claim)

    def _memory(self, record: str | None) -> KnownFailures:
        memory = KnownFailures(ttl=self.ttl)
        memory.adopt(self.request_key, record)
        return memory
