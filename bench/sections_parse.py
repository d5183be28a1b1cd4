"""Report section 6: parse cost on long answers, offline call by call and end to end, with line fits."""

from __future__ import annotations

from typing import Any

from .numbers import e2e_point, fit, offline_fit
from .stats import median
from .tables import f, fx, table

OFFLINE_HEADER = [
    "answer",
    "JSON received (MB)",
    "json.loads (ms)",
    "orjson.loads (ms)",
    "parse_event (ms)",
    "core = parse_event + Assembler.feed (ms)",
    "core / json.loads",
    "core ns/byte",
    "json.loads ns/byte",
]
E2E_HEADER = [
    "path",
    "answer",
    "runs",
    "JSON received (MB)",
    "CPU median (ms)",
    "json.loads floor (ms)",
    "CPU / floor",
    "text exact",
]


def parse_section(sdk: dict[str, Any]) -> str:
    parse = (sdk.get("conol") or {}).get("parse")
    if not parse:
        return "_Parse benchmark not run._"
    out = (
        "Offline, the exact lines the fake sends (1,000 cumulative snapshots per answer), "
        "call by call:\n\n" + table(OFFLINE_HEADER, [_offline_row(o) for o in parse["offline"]])
    )
    floor = {o["chars"]: o["seconds"]["json_loads"] for o in parse["offline"]}
    e2e_rows = [_e2e_row(mode, entry, floor) for mode, entries in parse["e2e"].items() for entry in entries]
    e2e_fits = {mode: fit([e2e_point(e) for e in entries]) for mode, entries in parse["e2e"].items()}
    out += "\n\nEnd to end against the fake (CPU of the process running the handler):\n\n" + table(
        E2E_HEADER, e2e_rows
    )
    lines = _fit_lines(parse["offline"], e2e_fits)
    return out + "\n\nStraight-line fit CPU = fixed + slope × bytes:\n\n" + "\n".join(lines)


def _offline_row(o: dict[str, Any]) -> list[str]:
    s, mb = o["seconds"], o["bytes"] / 1e6
    return [
        f"{o['chars'] // 1000} KB",
        f(mb, 1),
        f(s["json_loads"] * 1000, 1),
        f(s["orjson_loads"] * 1000, 1),
        f(s["parse_event"] * 1000, 1),
        f(s["core"] * 1000, 1),
        fx(s["core"] / s["json_loads"]),
        f(s["core"] * 1e9 / o["bytes"], 2),
        f(s["json_loads"] * 1e9 / o["bytes"], 2),
    ]


def _e2e_row(mode: str, entry: dict[str, Any], floor: dict[int, float]) -> list[str]:
    cpus = [r["cpu"] for r in entry["runs"]]
    checked = [r["ok"] for r in entry["runs"] if r["ok"] is not None]
    nbytes, cpu = e2e_point(entry)
    fl = floor.get(entry["chars"])
    return [
        mode,
        f"{entry['chars'] // 1000} KB",
        str(len(cpus)),
        f(nbytes / 1e6, 1),
        f(cpu * 1000, 0),
        f(fl * 1000, 0) if fl else "–",
        fx(median(cpus) / fl) if fl else "–",
        ("yes" if all(checked) else "NO") if checked else "–",
    ]


def _fit_lines(offline: list[dict[str, Any]], e2e_fits: dict[str, tuple[float, float]]) -> list[str]:
    fl_fit = offline_fit(offline, "json_loads")
    core_fit = offline_fit(offline, "core")
    lines = [
        f"- json.loads floor: {f(fl_fit[1] * 1e9, 2)} ns/byte",
        f"- core (parse_event + Assembler.feed): {f(core_fit[1] * 1e9, 2)} ns/byte "
        f"({fx(core_fit[1] / fl_fit[1])} the floor's slope) + {f(core_fit[0] * 1000, 1)} ms "
        "per 1,000 events",
    ]
    for mode, (a, b) in e2e_fits.items():
        lines.append(
            f"- {mode}: {f(b * 1e9, 2)} ns/byte marginal ({fx(b / fl_fit[1]) if fl_fit[1] else '–'} the "
            f"floor's slope) + {f(a * 1000, 0)} ms fixed per 1,000-event answer"
        )
    return lines
