"""What one check reports (``Check``), how every check is timed (``Stopwatch``) and kept from crashing
the run (``guarded``), and the text and JSON reports of them all."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ...core.errors import ConolError

# PASS, FAIL, SKIP (not tried: what it needs failed first) or ABSENT (this conol does not offer it)
Outcome = Literal["pass", "fail", "skip", "absent"]


@dataclass
class Check:
    name: str
    outcome: Outcome
    detail: str
    seconds: float | None = None

    @property
    def failed(self) -> bool:
        return self.outcome == "fail"

    def line(self) -> str:
        took = f"{self.seconds:6.2f} s" if self.seconds is not None else " " * 8
        return f"{self.outcome.upper():6}  {self.name:<36} {took}  {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, "seconds": self.seconds, "detail": self.detail}


@dataclass
class Stopwatch:
    """How long a check took: seconds since the stopwatch was made, to the millisecond."""

    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)


async def guarded(name: str, make: Callable[[], Awaitable[Check]]) -> Check:
    """A check that raised is a failed check saying why (ConolError messages never hold the token)."""
    stopwatch = Stopwatch()
    try:
        return await make()
    except ConolError as exc:
        return Check(name, "fail", exc.message, stopwatch.elapsed())
    except Exception as exc:  # a diagnostic reports, it does not crash
        return Check(name, "fail", f"{type(exc).__name__}: {exc}", stopwatch.elapsed())


def scrubbed(check: Check, token: str) -> Check:
    """The check with the session token masked wherever its detail quotes it."""
    if token and token in check.detail:
        check.detail = check.detail.replace(token, "***")
    return check


def report_text(checks: Iterable[Check], api_base: str, seconds: float) -> str:
    checks = list(checks)
    counts = Counter(check.outcome for check in checks)
    summary = (
        f"doctor: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped, "
        f"{counts['absent']} absent in {seconds:.1f} s against {api_base}"
    )
    return "\n".join([*(check.line() for check in checks), summary])


def report_json(checks: Iterable[Check], api_base: str, seconds: float) -> str:
    checks = list(checks)
    return json.dumps(
        {
            "ok": not any(check.failed for check in checks),
            "api_base": api_base,
            "seconds": round(seconds, 3),
            "checks": [check.to_json() for check in checks],
        },
        indent=2,
    )
