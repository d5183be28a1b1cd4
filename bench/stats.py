"""Small statistics helpers (no numpy)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile; NaN for no values."""
    data = sorted(v for v in values if v is not None and not math.isnan(v))
    if not data:
        return math.nan
    pos = (len(data) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return quantile(values, 0.5)


def p99(values: Sequence[float]) -> float:
    return quantile(values, 0.99)


def ratio(ours: float, theirs: float) -> float:
    if theirs == 0 or math.isnan(theirs) or math.isnan(ours):
        return math.nan
    return ours / theirs
