"""Markdown building blocks shared by every report section: number formatting and tables."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .stats import median, p99


def f(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def fx(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f}×"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def mp(values: Sequence[float], digits: int = 1) -> tuple[str, str]:
    """Median and p99, formatted."""
    return f(median(values), digits), f(p99(values), digits)
