"""Raw results → numbers: per-phase latencies and counts, straight-line fits of parse cost.

Definitions (every time is ``time.time()`` on this machine, fakes and clients alike):

* added TTFT: the client's first chunk *with content* minus the fake's send time of the first content
  event (conol: first snapshot; OpenAI: first content chunk). Role-only / empty chunks do not count.
* finish delay: the end of the client's response minus the fake's last event ([DONE] / conol's
  ``done`` event), or minus ``terminal_at`` when conol ends by status alone.
* truncated: the streamed text is not exactly the workload's text.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from .stats import median

PROVIDERS = ("conol", "openai")


def phase_numbers(phase: dict[str, Any], ref: str = "done_at") -> dict[str, Any]:
    recs: dict[str, Any] = phase["records"]
    samples: list[dict[str, Any]] = phase["samples"]
    ttft, finish, finish_last, latency, polls, polls_after = [], [], [], [], [], []
    errors = sum(1 for s in samples if s["error"])
    truncated = sum(1 for s in samples if not s["error"] and not s["ok"])
    for s in samples:
        rec = recs.get(s["tag"])
        if rec is None or s["error"]:
            continue
        if s["first"] and rec.get("first_content_at"):
            ttft.append((s["first"] - rec["first_content_at"]) * 1000)
        if s["end"] and rec.get(ref):
            finish.append((s["end"] - rec[ref]) * 1000)
        if s["end"] and rec.get("last_content_at"):
            finish_last.append((s["end"] - rec["last_content_at"]) * 1000)
        if s["end"]:
            latency.append(s["end"] - s["start"])
        if "polls" in rec:
            polls.append(rec["polls"])
            polls_after.append(rec.get("polls_after_terminal", 0))
    n = max(1, phase["n"])
    return {
        "n": phase["n"],
        "concurrency": phase["concurrency"],
        "errors": errors,
        "truncated": truncated,
        "missing_records": sum(1 for s in samples if s["tag"] not in recs),
        "ttft": ttft,
        "finish": finish,
        "finish_after_last": finish_last,
        "latency": latency,
        "polls": polls,
        "polls_after_terminal": polls_after,
        "cpu_ms": phase["cpu"] / n * 1000,
        "wall": phase["wall"],
        "throughput": (phase["n"] - errors) / phase["wall"] if phase["wall"] else math.nan,
        "fake_cpu_total": phase.get("fake_cpu_total"),
    }


def level_keys(phases: dict[str, Any]) -> list[str]:
    """Proxy phase keys (``c1``, ``c50``, …) by concurrency."""
    return sorted(phases, key=lambda k: int(k[1:]))


def polls_median(mem: dict[str, Any]) -> str:
    polls = [r["polls"] for r in mem.get("records", {}).values() if "polls" in r]
    return f"{median(polls):.0f}" if polls else "–"


def fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares intercept and slope."""
    if len(points) < 2:
        return (math.nan, math.nan)
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return (math.nan, math.nan)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return (my - slope * mx, slope)


def marginals(points: Sequence[tuple[float, float]]) -> list[float]:
    """Cost per extra byte between consecutive sizes (grows with size if the cost is superlinear)."""
    pts = sorted(points)
    return [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(pts) if x2 > x1]


def e2e_point(entry: dict[str, Any]) -> tuple[float, float]:
    """(bytes received, median CPU) of one end-to-end answer size."""
    return ((entry["runs"][0]["bytes"] or 0), median([r["cpu"] for r in entry["runs"]]))


def e2e_fit(entries: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """(fixed, slope) of one end-to-end mode's median CPU against the bytes received."""
    return fit([e2e_point(e) for e in entries])


def offline_fit(offline: Sequence[dict[str, Any]], key: str) -> tuple[float, float]:
    """(fixed, slope) of one offline measurement (``json_loads``, ``core``, …) against the bytes."""
    return fit([(o["bytes"], o["seconds"][key]) for o in offline])


def floor_for(offline: Sequence[dict[str, Any]], chars: int) -> float:
    for o in offline:
        if o["chars"] == chars:
            return float(o["seconds"]["json_loads"])
    return math.nan
