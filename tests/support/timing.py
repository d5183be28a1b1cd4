"""The one place wall-clock bounds come from, scaled for slow machines.

``CONOL_TEST_TIME_SCALE`` (default 1) multiplies every bound: on a loaded machine, run with e.g.
``CONOL_TEST_TIME_SCALE=3``. No bound is under one second, however small the scale: a tighter bound
would measure the machine's load, not the code.
"""

from __future__ import annotations

import os

MIN_BOUND = 1.0


def scale() -> float:
    raw = os.environ.get("CONOL_TEST_TIME_SCALE", "1")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"CONOL_TEST_TIME_SCALE must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"CONOL_TEST_TIME_SCALE must be positive, got {raw!r}")
    return value


def bound(seconds: float) -> float:
    """The wall-clock bound for something expected to take about ``seconds``: at least 1 s, scaled."""
    return max(MIN_BOUND, max(MIN_BOUND, seconds) * scale())
