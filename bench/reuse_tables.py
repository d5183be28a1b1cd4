"""The session-reuse benchmark's tables (``bench/reuse.py``): bytes, CPU and time per turn for each
mode, the summary with the target, and the profile of a replaying run."""

from __future__ import annotations

import statistics
from typing import Any

ON, QUIET, OFF = "on, replay", "on, no replay", "off"
SENT_TARGET = 10.0  # reuse must send at least this many times fewer bytes over the task
CPU_TARGET_MS = 25.0  # client CPU per follow-up turn (median of turns 2 on, reuse on, replay)


def report(
    rows: dict[str, list[dict[str, Any]]], profiled: dict[str, Any] | None, turns: int, repeats: int
) -> str:
    parts = [bytes_table(rows), cpu_table(rows, repeats), summary(rows, turns)]
    if profiled is not None:
        parts.append(profile_tables(profiled))
    return "\n\n".join(parts)


def bytes_table(rows: dict[str, list[dict[str, Any]]]) -> str:
    on, quiet, off = rows[ON], rows[QUIET], rows[OFF]
    lines = [
        "| turn | bytes sent, reuse on | reuse off | bytes received, on, replay | on, no replay | off "
        "| stream connections, on, replay | sessions so far, on | off |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a, q, b in zip(on, quiet, off, strict=True):
        lines.append(
            f"| {a['turn']} | {a['sent']:,} | {b['sent']:,} | {a['received']:,.0f} | {q['received']:,.0f} "
            f"| {b['received']:,.0f} | {a['connections']:.0f} | {a['sessions']} | {b['sessions']} |"
        )
    lines.append(
        f"| **total** | **{_sum(on, 'sent'):,.0f}** | **{_sum(off, 'sent'):,.0f}** "
        f"| **{_sum(on, 'received'):,.0f}** | **{_sum(quiet, 'received'):,.0f}** "
        f"| **{_sum(off, 'received'):,.0f}** | {_sum(on, 'connections'):.0f} "
        f"| **{on[-1]['sessions']}** | **{off[-1]['sessions']}** |"
    )
    return "\n".join(lines)


def cpu_table(rows: dict[str, list[dict[str, Any]]], repeats: int) -> str:
    on, quiet, off = rows[ON], rows[QUIET], rows[OFF]
    lines = [
        f"CPU and time per turn, each the median of {repeats} runs (ms). Client: this process "
        "(LiteLLM and the provider); fake: the fake conol's process.",
        "",
        "| turn | client CPU, on, replay | on, no replay | off | fake CPU, on, replay | on, no replay "
        "| off | turn time, on, replay | on, no replay | off |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a, q, b in zip(on, quiet, off, strict=True):
        lines.append(
            f"| {a['turn']} | {_ms(a, 'cpu')} | {_ms(q, 'cpu')} | {_ms(b, 'cpu')} | {_ms(a, 'fake_cpu')} "
            f"| {_ms(q, 'fake_cpu')} | {_ms(b, 'fake_cpu')} | {_ms(a, 'seconds')} | {_ms(q, 'seconds')} "
            f"| {_ms(b, 'seconds')} |"
        )
    lines.append(
        "| **total** | "
        + " | ".join(
            f"{_sum(r, key) * 1000:,.0f}" for key in ("cpu", "fake_cpu", "seconds") for r in (on, quiet, off)
        )
        + " |"
    )
    return "\n".join(lines)


def summary(rows: dict[str, list[dict[str, Any]]], turns: int) -> str:
    on, quiet, off = rows[ON], rows[QUIET], rows[OFF]
    ratio = _sum(off, "sent") / _sum(on, "sent")
    verdict = "met" if ratio >= SENT_TARGET else "**NOT met**"
    later = f"turns 2-{turns}"
    lines = [
        f"- Bytes sent over {turns} turns: {_sum(on, 'sent'):,.0f} with reuse vs {_sum(off, 'sent'):,.0f} "
        f"without ({ratio:.1f}x fewer; target >= {SENT_TARGET:.0f}x: {verdict}); sessions "
        f"{on[-1]['sessions']} vs {off[-1]['sessions']}; reused turns {_reused(on)} of {turns} with "
        f"replay, {_reused(quiet)} without.",
        f"- Bytes received per turn, reuse on with replay: {on[1]['received']:,.0f} at turn 2, "
        f"{on[-1]['received']:,.0f} at turn {turns} ({_slope(on[1:], 'received'):+,.0f} per turn, least "
        f"squares over {later}): each follow-up reads the whole session again. Without replay: "
        f"{_median(quiet[1:], 'received'):,.0f} per follow-up turn (median). Reuse off: "
        f"{off[1]['received']:,.0f} at turn 2, {off[-1]['received']:,.0f} at turn {turns} "
        f"({_slope(off[1:], 'received'):+,.0f} per turn: each new session's stream echoes the transcript "
        f"it was sent). In total {_sum(on, 'received'):,.0f} / {_sum(quiet, 'received'):,.0f} / "
        f"{_sum(off, 'received'):,.0f} (on with replay / on without / off).",
        f"- Client CPU per follow-up turn, median of {later}: {_cpu(on)} with replay (target <= "
        f"{CPU_TARGET_MS:.0f} ms: {_cpu_verdict(on)}), {_cpu(quiet)} "
        f"without, {_cpu(off)} with reuse off. Growth per turn (least squares over {later}): "
        f"{_growth(on)} / {_growth(quiet)} / {_growth(off)}.",
        f"- Fake CPU in total: {_sum(on, 'fake_cpu') * 1000:,.0f} / {_sum(quiet, 'fake_cpu') * 1000:,.0f} / "
        f"{_sum(off, 'fake_cpu') * 1000:,.0f} ms.",
        "- Received bytes that differed between the runs of one mode (pings, a stream dropped mid-read): "
        f"at most {max(r['received_spread'] for mode in rows.values() for r in mode):,.0f} in a turn.",
    ]
    return "\n".join(lines)


def _reused(rows: list[dict[str, Any]]) -> int:
    return sum(1 for r in rows if r["reused"])


def _cpu(rows: list[dict[str, Any]]) -> str:
    return f"{_median(rows[1:], 'cpu') * 1000:.1f} ms"


def _cpu_verdict(rows: list[dict[str, Any]]) -> str:
    return "met" if _median(rows[1:], "cpu") * 1000 <= CPU_TARGET_MS else "**NOT met**"


def _growth(rows: list[dict[str, Any]]) -> str:
    return f"{_slope(rows[1:], 'cpu') * 1000:+.2f} ms"


def profile_tables(profiled: dict[str, Any]) -> str:
    turns = profiled["follow_up_turns"]
    lines = [
        f"Profile of the client during the {turns} follow-up turns of one replaying run (cProfile; "
        f"{profiled['profiled_ms_per_turn']:.1f} ms of profiled CPU per follow-up turn):",
        "",
        "| inside (cumulative) | ms per follow-up turn | calls per turn (a coroutine: its resumes) |",
        "|---|---:|---:|",
    ]
    for entry in profiled["entry_points"]:
        lines.append(f"| {entry['what']} | {entry['ms']:.2f} | {entry['calls']:.0f} |")
    lines += [
        "",
        f"Without the profiler, checking the {profiled['tool_count']} tools' JSON Schemas "
        f"(`check_tool_schema`, done on every request) takes {profiled['schema_check_ms']:.1f} ms.",
        "",
        "| own time by owner | ms per follow-up turn | share |",
        "|---|---:|---:|",
    ]
    total = sum(profiled["owners"].values())
    for owner, ms in profiled["owners"].items():
        lines.append(f"| {owner} | {ms:.2f} | {ms / total:.0%} |")
    lines += [
        "",
        "Offline, on the bytes each follow-up turn read (no profiler; best of the passes):",
        "",
        "| turn | bytes received | replayed events | their bytes | new events | their bytes "
        "| SSE split, whole stream (ms) | parse replayed (ms) | json.loads replayed (ms) "
        "| turn boundary on replayed (ms) | parse new (ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in profiled["offline"]:
        lines.append(
            f"| {row['turn']} | {row['received']:,} | {row['replayed']} | {row['replayed_bytes']:,} "
            f"| {row['new']} | {row['new_bytes']:,} | {row['split_ms']:.3f} | {row['parse_replayed_ms']:.3f} "
            f"| {row['loads_replayed_ms']:.3f} | {row['boundary_replayed_ms']:.3f} "
            f"| {row['parse_new_ms']:.3f} |"
        )
    return "\n".join([*lines, "", skip_cost(profiled["offline"])])


def skip_cost(offline: list[dict[str, Any]]) -> str:
    """What skipping a replayed byte costs, from the growth over the turns (least squares)."""
    last = offline[-1]
    per_byte = {
        key: statistics.linear_regression(
            [float(r["replayed_bytes"]) for r in offline], [float(r[key]) for r in offline]
        ).slope
        * 1e6  # ms per byte -> ns per byte
        for key in ("split_ms", "parse_replayed_ms", "loads_replayed_ms", "boundary_replayed_ms")
    }
    skip = per_byte["split_ms"] + per_byte["parse_replayed_ms"] + per_byte["boundary_replayed_ms"]
    at_last = last["split_ms"] + last["parse_replayed_ms"] + last["boundary_replayed_ms"]
    return (
        f"Skipping a replayed byte costs {skip:.1f} ns (SSE split {per_byte['split_ms']:.1f}, parse "
        f"{per_byte['parse_replayed_ms']:.1f} against a json.loads floor of "
        f"{per_byte['loads_replayed_ms']:.1f}, turn boundary {per_byte['boundary_replayed_ms']:.1f}); "
        f"at turn {last['turn']}, "
        f"{last['replayed']} replayed events, {last['replayed_bytes']:,} bytes: {at_last:.2f} ms."
    )


def _ms(row: dict[str, Any], key: str) -> str:
    return f"{row[key] * 1000:.1f}"


def _sum(rows: list[dict[str, Any]], key: str) -> float:
    return float(sum(r[key] for r in rows))


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def _slope(rows: list[dict[str, Any]], key: str) -> float:
    """Least-squares growth of ``key`` per turn."""
    xs = [float(r["turn"]) for r in rows]
    ys = [float(r[key]) for r in rows]
    return statistics.linear_regression(xs, ys).slope
