"""``doctor``'s account checks: is the token alive, and what is left of the balance.

Both sources' dead-token answers count (401, and 200 without a user); a 429, a 5xx or a 200 that is
not JSON (a checkpoint page) is transient: it fails the check but stops nothing, never "dead".
"""

from __future__ import annotations

from ...client.transport import Transport
from ...core.errors import ConolError
from ...core.protocol import paths
from ...core.protocol.account import describe_json_shape, judge_auth, read_balance
from .report import Check, Stopwatch

DEAD = "the token is not alive"


async def check_token(transport: Transport) -> tuple[Check, str | None]:
    """(the check, why nothing else can work: a dead token or an unreachable conol; else None)."""
    stopwatch = Stopwatch()
    try:
        code, body, headers = await transport.get_raw(paths.GET_SESSION, "checking the session token")
    except ConolError as exc:
        return Check("token", "fail", exc.message, stopwatch.elapsed()), "conol is not reachable"
    took = stopwatch.elapsed()
    answer = judge_auth(code, body, headers.get("retry-after"))
    if answer.verdict == "alive":
        alive = "alive" + (f", expires {answer.expires}" if answer.expires else "")
        return Check("token", "pass", alive, took), None
    if answer.verdict == "dead":
        return Check("token", "fail", answer.detail, took), DEAD
    return Check("token", "fail", answer.detail, took), None


async def check_balance(transport: Transport) -> Check:
    """PASS with the breakdown (a low balance says so), FAIL with no credits left or an unreadable
    answer, ABSENT when conol has no balance endpoint (404)."""
    stopwatch = Stopwatch()
    code, data = await transport.get_json(paths.BALANCE, "reading the balance")
    took = stopwatch.elapsed()
    if code == 404:
        return Check("balance", "absent", "GET /api/billing/balance answered HTTP 404", took)
    if code != 200:
        return Check("balance", "fail", f"GET /api/billing/balance answered HTTP {code}", took)
    balance = read_balance(data)
    if balance is None:
        return Check("balance", "fail", f"no number under 'total' ({describe_json_shape(data)})", took)
    if balance.total <= 0:
        detail = f"no credits left: {balance.describe()}; requests fail ('credit balance is too low')"
        return Check("balance", "fail", detail, took)
    low = "low: " if balance.low else ""
    return Check("balance", "pass", low + balance.describe(), took)
