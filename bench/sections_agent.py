"""Report sections and targets of the agent-shaped benchmark (``bench/agent.py``): Claude Code's
requests through the proxy's ``/v1/messages``, ``conol/…`` against LiteLLM's ``anthropic/…``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .numbers import level_keys, phase_numbers
from .sections_latency import PROXY_HEADER
from .sections_resources import MEMORY_HEADER as RESOURCE_MEMORY_HEADER
from .stats import median, ratio
from .tables import f, fx, mp, table

AGENT_PROVIDERS = ("conol", "anthropic", "floor")
END = "call_at"  # an agent turn ends with its tool call (conol: the tool-call event; anthropic: tool_use)
REPORTED_TURNS = (1, 2, 10, 20)  # 1: a new session; 2: the first follow-up
TURN_GROWTH_LIMIT = 1.10  # CPU per turn at turn 20 within 10% of turn 1
CPU_LIMIT = 0.8  # proxy CPU per turn, ours / anthropic's
TTFT_LIMIT = 1.0

LEVEL_HEADER = [*PROXY_HEADER[:-2], "proxy CPU per turn (ms)"]  # the chat rows' columns, per turn
RATIO_HEADER = [
    "concurrency",
    "added TTFT",
    "latency p50",
    "throughput",
    "proxy CPU/turn",
    "floor's proxy CPU/turn (LiteLLM's own)",
    "ours alone: conol − floor (ms)",
]
TURNS_HEADER = [
    "provider",
    "conversations",
    "sessions (conol: 1 per conversation = continued)",
    *(f"CPU/turn at turn {t} (ms)" for t in REPORTED_TURNS),
    "turn 20 / turn 1",
    "turn 20 / turn 2",
    "request at turn 1 / 20 (KB)",
    "errors / truncated",
]
MEMORY_HEADER = ["provider", *RESOURCE_MEMORY_HEADER[2:7], "errors / truncated"]


def _providers(agent: dict[str, Any]) -> list[str]:
    return [p for p in AGENT_PROVIDERS if p in agent]


def levels_section(agent: dict[str, Any]) -> str:
    if not agent:
        return ""
    rows = []
    keys = sorted({k for p in _providers(agent) for k in agent[p]["phases"]}, key=lambda k: int(k[1:]))
    for key in keys:
        for p in _providers(agent):
            phase = agent[p]["phases"].get(key)
            if phase:
                nums = phase_numbers(phase, END)
                rows.append(
                    [
                        key[1:],
                        p,
                        str(nums["n"]),
                        f"{nums['errors']} / {nums['truncated']}",
                        f(nums["throughput"], 1),
                        *mp(nums["latency"], 3),
                        *mp(nums["ttft"], 1),
                        *mp(nums["finish"], 1),
                        f(nums["cpu_ms"], 1),
                    ]
                )
    some = next(iter(agent[_providers(agent)[0]]["phases"].values()))
    intro = (
        "Claude Code's request (`bench/agent_shape.py`): a 16 KB system prompt, 12 tools with JSON "
        "Schemas and 19 earlier turns of text, tool call and a 2 KB tool result "
        f"({some['request_bytes'] / 1024:.0f} KB of JSON), streamed, each request a new conversation. "
        "The answer: the chat workload's text (1000 chars in 20 pieces, 25 ms apart) and a `Bash` tool "
        "call; finish is measured from the fake's tool call (conol's adds `tool_call_settle`, 0.3 s: "
        "conol sends no end after a client tool call). One proxy per provider; `anthropic/…` against "
        "`bench/anthropic_fake.py`."
    )
    return intro + "\n\n" + table(LEVEL_HEADER, rows)


def ratio_section(agent: dict[str, Any]) -> str:
    rows = []
    floor = (agent.get("floor") or {}).get("phases", {})
    for key, o, t in _levels(agent):
        fl = phase_numbers(floor[key], END) if key in floor else None
        rows.append(
            [
                key[1:],
                fx(ratio(median(o["ttft"]), median(t["ttft"]))),
                fx(ratio(median(o["latency"]), median(t["latency"]))),
                fx(ratio(o["throughput"], t["throughput"])),
                fx(ratio(o["cpu_ms"], t["cpu_ms"])),
                fx(ratio(fl["cpu_ms"], t["cpu_ms"])) if fl else "–",
                f(o["cpu_ms"] - fl["cpu_ms"]) if fl else "–",
            ]
        )
    if not rows:
        return ""
    return (
        "`floor/…` (`bench/floor_llm.py`) is a custom provider that does no work: it streams the same "
        "answer from memory at the same pace. Its CPU is what LiteLLM spends on any custom provider's "
        "`/v1/messages` traffic (the Anthropic adapter both ways, the stream wrapper, logging), which "
        "`anthropic/…` does not pay; conol − floor is our handler's own.\n\n" + table(RATIO_HEADER, rows)
    )


def _levels(agent: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    if "conol" not in agent or "anthropic" not in agent:
        return []
    ours, theirs = agent["conol"]["phases"], agent["anthropic"]["phases"]
    return [
        (k, phase_numbers(ours[k], END), phase_numbers(theirs[k], END))
        for k in level_keys(ours)
        if k in theirs
    ]


def turn_cpu(turns: dict[str, Any], number: int) -> float | None:
    """CPU per turn (ms) at turn ``number``: the proxy's CPU over that round / the conversations; past
    turn 2, the median of three rounds around it (the last three for the last turn): one round's ticks
    are coarse, and a stray background task lands in one round."""
    last = max((r["turn"] for r in turns["rounds"]), default=0)
    middle = min(number, last - 1)
    window = {number} if number <= 2 else {middle - 1, middle, middle + 1}
    rows = [r for r in turns["rounds"] if r["turn"] in window and not r["errors"]]
    if not rows:
        return None
    return median([float(r["cpu"]) * 1000 / turns["conversations"] for r in rows])


def turns_section(agent: dict[str, Any]) -> str:
    rows = []
    for p in _providers(agent):
        turns = agent[p].get("turns")
        if not turns:
            continue
        cpu = [turn_cpu(turns, t) for t in REPORTED_TURNS]
        rounds = turns["rounds"]
        growth = ratio(cpu[-1], cpu[0]) if cpu[0] and cpu[-1] else float("nan")
        later = ratio(cpu[-1], cpu[1]) if cpu[1] and cpu[-1] else float("nan")
        size = f"{rounds[0]['request_bytes'] / 1024:.0f} / {rounds[-1]['request_bytes'] / 1024:.0f}"
        errors = sum(r["errors"] for r in rounds)
        bad = f"{errors} / {sum(r.get('truncated', 0) for r in rounds)}"
        rows.append(
            [
                p,
                str(turns["conversations"]),
                str(turns["sessions"]) if p == "conol" else "–",
                *(f(c, 1) for c in cpu),
                fx(growth),
                fx(later),
                size,
                bad + (f" ({rounds[-1]['first_error']})" if errors else ""),
            ]
        )
    if not rows:
        return ""
    return (
        "Whole conversations in lockstep, turn 1 to 20, after a quiet second: each turn's answer and the "
        "tool's result appended as "
        "Claude Code appends them (`session_reuse` at its default, so `conol/…` continues one session per "
        "conversation). CPU per turn: the proxy's CPU (`/proc` utime + stime) over the round of that turn, "
        "divided by the conversations (turns 10 and 20: the median of three rounds around it). Turn 1 "
        "creates a session, later turns continue it.\n\n" + table(TURNS_HEADER, rows)
    )


def memory_section(agent: dict[str, Any]) -> str:
    rows = []
    for p in _providers(agent):
        mem = agent[p].get("memory")
        if mem:
            rows.append(
                [
                    p,
                    str(mem["k"]),
                    "yes" if mem["all_open"] else f"no ({mem['opened']})",
                    f(mem["rss_base_kb"] / 1024),
                    f(mem["rss_open_kb"] / 1024),
                    f(mem["per_stream_kb"]),
                    f"{mem['errors']} / {mem['k'] - mem['ok'] - mem['errors']}",
                ]
            )
    return table(MEMORY_HEADER, rows) if rows else ""


def agent_targets(agent: dict[str, Any], add: Callable[[str, bool | None, str], None]) -> None:
    """The agent-shaped targets, each one verdict through ``add``."""
    floor = (agent.get("floor") or {}).get("phases", {})
    for key, o, t in _levels(agent):
        r = ratio(o["cpu_ms"], t["cpu_ms"])
        fl = phase_numbers(floor[key], END)["cpu_ms"] if key in floor else None
        add(
            f"agent-shaped: proxy CPU per turn ≤ {CPU_LIMIT}× anthropic's ({key})",
            r <= CPU_LIMIT,
            f"{f(o['cpu_ms'])} vs {f(t['cpu_ms'])} ms = {fx(r)}"
            + (
                f"; LiteLLM's floor for a custom provider {f(fl)} ms = {fx(ratio(fl, t['cpu_ms']))}"
                if fl
                else ""
            ),
        )
    for key, o, t in _levels(agent):
        r = ratio(median(o["ttft"]), median(t["ttft"]))
        add(
            f"agent-shaped: added TTFT ≤ {TTFT_LIMIT}× anthropic's ({key})",
            r <= TTFT_LIMIT,
            f"{f(median(o['ttft']), 1)} vs {f(median(t['ttft']), 1)} ms = {fx(r)}",
        )
    turns = (agent.get("conol") or {}).get("turns")
    if turns:
        first, last = turn_cpu(turns, 1), turn_cpu(turns, 20)
        ref = ""
        for other in ("anthropic", "floor"):
            theirs = (agent.get(other) or {}).get("turns")
            if theirs and turn_cpu(theirs, 1) and turn_cpu(theirs, 20):
                ref += f"; {other}: {f(turn_cpu(theirs, 1))} → {f(turn_cpu(theirs, 20))} ms"
        add(
            "agent-shaped: CPU per turn at turn 20 within 10% of turn 1 (conol, reuse on)",
            bool(first and last and last <= TURN_GROWTH_LIMIT * first),
            f"{f(first)} → {f(last)} ms = {fx(ratio(last, first)) if first and last else '–'} (from the "
            f"first follow-up, turn 2: {f(turn_cpu(turns, 2))} ms); {turns['sessions']} session(s) for "
            f"{turns['conversations']} conversations{ref}",
        )
    counts = {k: phase_numbers(v, END) for k, v in ((agent.get("conol") or {}).get("phases") or {}).items()}
    if counts:
        add(
            "agent-shaped: every answer whole (conol: text and tool call, every phase)",
            all(n["errors"] + n["truncated"] == 0 for n in counts.values()),
            ", ".join(
                f"{k}: {n['errors']} errors, {n['truncated']} truncated of {n['n']}"
                for k, n in counts.items()
            ),
        )
