"""The account endpoints' answers in each mode of ``FakeConfig`` (``balance``, ``auth``)."""

from __future__ import annotations

import time
from typing import Any

from ._library._readings import NO_CREDITS as NO_CREDITS

# What a Vercel-style checkpoint in front of conol answers with 200: not JSON
# (docs/protocol.md#authentication).
CHECKPOINT_PAGE = (
    "<!doctype html><html><head><title>Vercel Security Checkpoint</title></head>"
    "<body><p>We're verifying your browser.</p></body></html>"
)
DAILY, EXTRA = 10.0, 2.5  # the "full" balance: 12.5 in all, as the spec's {total} shape says


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


def balance_body(mode: str, now: float) -> dict[str, Any]:
    """``GET /api/billing/balance`` (docs/protocol.md#balance): its fields with ``userId`` and ``updatedAt``
    (``full``, ``zero``), or only ``{total}``."""
    daily, extra = (0.0, 0.0) if mode == "zero" else (DAILY, EXTRA)
    if mode == "total":
        return {"total": daily + extra}
    return {
        "userId": "usr_fake",
        "dailyCredits": daily,
        "dailyRefilledAt": _iso(now - 3600),
        "subscriptionCredits": 0,
        "subscriptionAmount": 0,
        "extraCredits": extra,
        "total": daily + extra,
        "updatedAt": _iso(now),
    }
