"""Report sections on time: SDK latency, how answers end, proxy concurrency levels, proxy workers."""

from __future__ import annotations

from typing import Any

from .numbers import PROVIDERS, level_keys, phase_numbers
from .stats import median, p99, ratio
from .tables import f, fx, mp, table

SDK_HEADER = [
    "SDK (`litellm.acompletion(stream=True)`)",
    "conol median",
    "conol p99",
    "openai median",
    "openai p99",
    "ratio ours/openai (median)",
]
SDK_LATENCY_ROWS = (  # (label, phase_numbers key, digits)
    ("added TTFT (ms)", "ttft", 2),
    ("finish delay after the last event (ms)", "finish", 1),
    ("request latency (s)", "latency", 3),
)

# SDK phase → (how the answer ends, the fake's record the finish delay is measured from)
END_KINDS = {
    "seq": ("`done` event (definitive)", "done_at"),
    "end_commit": ("committed message, then status terminal", "terminal_at"),
    "end_status": ("status terminal alone (stream stays open)", "terminal_at"),
    "end_early": ("status terminal 0.6 s BEFORE the last snapshot", "terminal_at"),
    "end_late": ("status terminal 3 s after the last snapshot", "terminal_at"),
}
ENDS_HEADER = [
    "how the answer ends",
    "n",
    "finish median (ms)",
    "finish p99 (ms)",
    "end − last snapshot median (ms)",
    "p99 (ms)",
    "status polls/request median / max",
    "polls after terminal (total)",
    "truncated",
    "errors",
]
PROXY_HEADER = [
    "concurrency",
    "provider",
    "requests",
    "errors / truncated",
    "throughput (req/s)",
    "latency p50 (s)",
    "latency p99 (s)",
    "added TTFT median (ms)",
    "TTFT p99 (ms)",
    "finish median (ms)",
    "finish p99 (ms)",
    "proxy CPU per request (ms)",
    "fake CPU total (s)",
]
RATIO_HEADER = ["concurrency", "added TTFT", "latency p50", "latency p99", "throughput", "proxy CPU/request"]
WORKERS_HEADER = [
    "workers",
    "concurrency / requests",
    "errors / truncated",
    "throughput (req/s)",
    "vs 1 worker",
    "latency p50 (s)",
    "latency p99 (s)",
    "added TTFT median (ms)",
    "TTFT p99 (ms)",
    "proxy CPU per request (ms, all workers)",
]
WORKERS_INTRO = (
    "`conol/…` through one proxy started with `--num_workers N` (uvicorn; each worker its own "
    "process and event loop), same workload, one proxy at a time. On 2 cores shared with the "
    "fake and the load generator, a second worker can only use what they leave."
)


def sdk_section(sdk: dict[str, Any]) -> str:
    conol, openai = sdk.get("conol"), sdk.get("openai")
    if not conol or not openai:
        return "_SDK mode not run._"
    ours, theirs = phase_numbers(conol["phases"]["seq"]), phase_numbers(openai["phases"]["seq"])
    rows = []
    for label, key, digits in SDK_LATENCY_ROWS:
        o, t = ours[key], theirs[key]
        rows.append([label, *mp(o, digits), *mp(t, digits), fx(ratio(median(o), median(t)))])
    cpu_ratio = fx(ratio(ours["cpu_ms"], theirs["cpu_ms"]))
    rows.append(
        ["CPU per request, handler process (ms)", f(ours["cpu_ms"]), "", f(theirs["cpu_ms"]), "", cpu_ratio]
    )
    ours_bad, theirs_bad = (
        f"{ours['errors']} / {ours['truncated']}",
        f"{theirs['errors']} / {theirs['truncated']}",
    )
    rows.append(["errors / truncated", ours_bad, "", theirs_bad, "", ""])
    w = conol["phases"]["seq"]["workload"]
    intro = (
        f"{ours['n']} sequential streaming requests each; workload: {w['chars']} chars in {w['n']} "
        "pieces "
        f"{w['delay'] * 1000:g} ms apart, first after {w['lead'] * 1000:g} ms; conol ends with status "
        "completed + a `done` event, OpenAI with finish chunk + `[DONE]`."
    )
    return intro + "\n\n" + table(SDK_HEADER, rows)


def ends_section(sdk: dict[str, Any], settle: float) -> str:
    conol = sdk.get("conol")
    if not conol:
        return ""
    rows = []
    for key, (label, ref) in END_KINDS.items():
        phase = conol["phases"].get(key)
        if not phase:
            continue
        nums = phase_numbers(phase, ref)
        rows.append(
            [
                label,
                str(nums["n"]),
                *mp(nums["finish"], 0),
                *mp(nums["finish_after_last"], 0),
                f"{median(nums['polls']):.0f} / {max(nums['polls'], default=0)}",
                str(sum(nums["polls_after_terminal"])),
                str(nums["truncated"]),
                str(nums["errors"]),
            ]
        )
    return (
        f"SDK, conol only. Settle window {settle:g} s (default). Finish delay is measured from the "
        "`done` event, else from the moment the session's status turned terminal.\n\n"
        + table(ENDS_HEADER, rows)
    )


def proxy_section(proxy: dict[str, Any]) -> str:
    if not proxy:
        return "_Proxy mode not run._"
    rows = []
    providers = [p for p in PROVIDERS if p in proxy]
    levels = sorted({int(k[1:]) for p in providers for k in proxy[p]["phases"]})
    for level in levels:
        for p in providers:
            phase = proxy[p]["phases"].get(f"c{level}")
            if phase:
                rows.append(_proxy_row(level, p, phase_numbers(phase)))
    w = next(iter(proxy.values()))["phases"]
    work = next(iter(w.values()))["workload"]
    intro = (
        f"A real `litellm.proxy.proxy_cli` per provider; aiohttp client; workload as in SDK mode "
        f"({work['chars']} chars, {work['n']} pieces, {work['delay'] * 1000:g} ms apart)."
    )
    return intro + "\n\n" + table(PROXY_HEADER, rows)


def _proxy_row(level: int, provider: str, nums: dict[str, Any]) -> list[str]:
    fake = nums["fake_cpu_total"]
    return [
        str(level),
        provider,
        str(nums["n"]),
        f"{nums['errors']} / {nums['truncated']}",
        f(nums["throughput"], 1),
        *mp(nums["latency"], 3),
        *mp(nums["ttft"], 1),
        *mp(nums["finish"], 1),
        f(nums["cpu_ms"], 1),
        f(fake, 0) if fake is not None else "–",
    ]


def ratio_section(proxy: dict[str, Any]) -> str:
    if not proxy or "conol" not in proxy or "openai" not in proxy:
        return ""
    rows = []
    for key in level_keys(proxy["conol"]["phases"]):
        if key not in proxy["openai"]["phases"]:
            continue
        o = phase_numbers(proxy["conol"]["phases"][key])
        t = phase_numbers(proxy["openai"]["phases"][key])
        rows.append(
            [
                key[1:],
                fx(ratio(median(o["ttft"]), median(t["ttft"]))),
                fx(ratio(median(o["latency"]), median(t["latency"]))),
                fx(ratio(p99(o["latency"]), p99(t["latency"]))),
                fx(ratio(o["throughput"], t["throughput"])),
                fx(ratio(o["cpu_ms"], t["cpu_ms"])),
            ]
        )
    return table(RATIO_HEADER, rows)


def workers_section(workers: dict[str, Any]) -> str:
    if not workers:
        return ""
    rows = []
    base: float | None = None
    for count in sorted(workers, key=int):
        nums = phase_numbers(workers[count])
        base = nums["throughput"] if base is None else base
        rows.append(
            [
                count,
                f"{nums['concurrency']} / {nums['n']}",
                f"{nums['errors']} / {nums['truncated']}",
                f(nums["throughput"], 1),
                fx(ratio(nums["throughput"], base)),
                *mp(nums["latency"], 3),
                *mp(nums["ttft"], 1),
                f(nums["cpu_ms"], 1),
            ]
        )
    return WORKERS_INTRO + "\n\n" + table(WORKERS_HEADER, rows)
