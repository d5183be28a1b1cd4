"""Raw results → numbers → markdown tables, target verdicts and ``bench/RESULTS.md``.

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
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .stats import median, p99, ratio

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
PROVIDERS = ("conol", "openai")
HISTORY_START, HISTORY_END, RUNS = "<!-- history:start -->", "<!-- history:end -->", "<!-- runs -->"


# --- per-phase numbers ------------------------------------------------------------------------------


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


# --- formatting -------------------------------------------------------------------------------------


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
    return f(median(values), digits), f(p99(values), digits)


# --- the report -------------------------------------------------------------------------------------


class Report:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.sdk: dict[str, Any] = raw.get("sdk", {})
        self.proxy: dict[str, Any] = raw.get("proxy", {})
        self.workers: dict[str, Any] = raw.get("workers", {})
        self.settle = float(raw["meta"]["settle_window"])
        self.verdicts: list[tuple[str, bool | None, str]] = []

    # -- sections --

    def sdk_section(self) -> str:
        conol, openai = self.sdk.get("conol"), self.sdk.get("openai")
        if not conol or not openai:
            return "_SDK mode not run._"
        ours, theirs = phase_numbers(conol["phases"]["seq"]), phase_numbers(openai["phases"]["seq"])
        rows = []
        for label, key, digits in (
            ("added TTFT (ms)", "ttft", 2),
            ("finish delay after the last event (ms)", "finish", 1),
            ("request latency (s)", "latency", 3),
        ):
            o, t = ours[key], theirs[key]
            rows.append([label, *mp(o, digits), *mp(t, digits), fx(ratio(median(o), median(t)))])
        rows.append(
            [
                "CPU per request, handler process (ms)",
                f(ours["cpu_ms"]),
                "",
                f(theirs["cpu_ms"]),
                "",
                fx(ratio(ours["cpu_ms"], theirs["cpu_ms"])),
            ]
        )
        rows.append(
            [
                "errors / truncated",
                f"{ours['errors']} / {ours['truncated']}",
                "",
                f"{theirs['errors']} / {theirs['truncated']}",
                "",
                "",
            ]
        )
        w = conol["phases"]["seq"]["workload"]
        intro = (
            f"{ours['n']} sequential streaming requests each; workload: {w['chars']} chars in {w['n']} "
            "pieces "
            f"{w['delay'] * 1000:g} ms apart, first after {w['lead'] * 1000:g} ms; conol ends with status "
            "completed + a `done` event, OpenAI with finish chunk + `[DONE]`."
        )
        return (
            intro
            + "\n\n"
            + table(
                [
                    "SDK (`litellm.acompletion(stream=True)`)",
                    "conol median",
                    "conol p99",
                    "openai median",
                    "openai p99",
                    "ratio ours/openai (median)",
                ],
                rows,
            )
        )

    def ends_section(self) -> str:
        conol = self.sdk.get("conol")
        if not conol:
            return ""
        rows = []
        labels = {
            "seq": ("`done` event (definitive)", "done_at"),
            "end_commit": ("committed message, then status terminal", "terminal_at"),
            "end_status": ("status terminal alone (stream stays open)", "terminal_at"),
            "end_early": ("status terminal 0.6 s BEFORE the last snapshot", "terminal_at"),
            "end_late": ("status terminal 3 s after the last snapshot", "terminal_at"),
        }
        for key, (label, ref) in labels.items():
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
            f"SDK, conol only. Settle window {self.settle:g} s (default). Finish delay is measured from the "
            "`done` event, else from the moment the session's status turned terminal.\n\n"
            + table(
                [
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
                ],
                rows,
            )
        )

    def proxy_section(self) -> str:
        if not self.proxy:
            return "_Proxy mode not run._"
        rows = []
        providers = [p for p in PROVIDERS if p in self.proxy]
        levels = sorted({int(k[1:]) for p in providers for k in self.proxy[p]["phases"]})
        for level in levels:
            for p in providers:
                phase = self.proxy[p]["phases"].get(f"c{level}")
                if not phase:
                    continue
                nums = phase_numbers(phase)
                fake = nums["fake_cpu_total"]
                rows.append(
                    [
                        str(level),
                        _label(p),
                        str(nums["n"]),
                        f"{nums['errors']} / {nums['truncated']}",
                        f(nums["throughput"], 1),
                        *mp(nums["latency"], 3),
                        *mp(nums["ttft"], 1),
                        *mp(nums["finish"], 1),
                        f(nums["cpu_ms"], 1),
                        f(fake, 0) if fake is not None else "–",
                    ]
                )
        w = next(iter(self.proxy.values()))["phases"]
        work = next(iter(w.values()))["workload"]
        intro = (
            f"A real `litellm.proxy.proxy_cli` per provider; aiohttp client; workload as in SDK mode "
            f"({work['chars']} chars, {work['n']} pieces, {work['delay'] * 1000:g} ms apart)."
        )
        return (
            intro
            + "\n\n"
            + table(
                [
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
                ],
                rows,
            )
        )

    def workers_section(self) -> str:
        if not self.workers:
            return ""
        rows = []
        base: float | None = None
        for count in sorted(self.workers, key=int):
            nums = phase_numbers(self.workers[count])
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
        intro = (
            "`conol/…` through one proxy started with `--num_workers N` (uvicorn; each worker its own "
            "process and event loop), same workload, one proxy at a time. On 2 cores shared with the "
            "fake and the load generator, a second worker can only use what they leave."
        )
        header = [
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
        return intro + "\n\n" + table(header, rows)

    def ratio_section(self) -> str:
        if not self.proxy or "conol" not in self.proxy or "openai" not in self.proxy:
            return ""
        rows = []
        for key in sorted(self.proxy["conol"]["phases"], key=lambda k: int(k[1:])):
            if key not in self.proxy["openai"]["phases"]:
                continue
            o = phase_numbers(self.proxy["conol"]["phases"][key])
            t = phase_numbers(self.proxy["openai"]["phases"][key])
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
        return table(
            ["concurrency", "added TTFT", "latency p50", "latency p99", "throughput", "proxy CPU/request"],
            rows,
        )

    def memory_section(self) -> str:
        rows = []
        entries: list[tuple[str, str, dict[str, Any]]] = []
        for mode, data in (("SDK", self.sdk), ("proxy", self.proxy)):
            for p in PROVIDERS:
                mem = (data.get(p) or {}).get("memory")
                if mem:
                    entries.append((mode, _label(p), mem))
                if mode == "SDK" and p == "conol":
                    for handler in ("conol",):
                        hm = (data.get(p) or {}).get(f"memory_handler_{handler}")
                        if hm:
                            entries.append(("handler only", _label(handler), hm))
        for mode, label, mem in entries:
            if mem:
                rows.append(
                    [
                        mode,
                        label,
                        str(mem["k"]),
                        "yes" if mem["all_open"] else f"no ({mem['opened']})",
                        f(mem["rss_base_kb"] / 1024),
                        f(mem["rss_open_kb"] / 1024),
                        f(mem["per_stream_kb"]),
                        f"{mem['fds_base']['sockets']} → {mem['fds_open']['sockets']}",
                        f"{mem['errors']} / {mem['k'] - mem['ok'] - mem['errors']}",
                        _polls(mem),
                    ]
                )
        return (
            table(
                [
                    "mode",
                    "provider",
                    "open streams",
                    "all open at once",
                    "RSS before (MB)",
                    "RSS open (MB)",
                    "RSS growth per open stream (KB)",
                    "sockets before → open",
                    "errors / truncated",
                    "status polls per stream (median)",
                ],
                rows,
            )
            + self._trace_table()
        )

    def _trace_table(self) -> str:
        traces = {p: (self.sdk.get(p) or {}).get("memory_trace") for p in ("conol", "openai")}
        traces = {p: t for p, t in traces.items() if t and t.get("by_package_kb")}
        if not traces:
            return ""
        owners = sorted(
            {o for t in traces.values() for o in t["by_package_kb"]},
            key=lambda o: -max(t["by_package_kb"].get(o, 0.0) for t in traces.values()),
        )
        rows = [[o, *(f(t["by_package_kb"].get(o, 0.0)) for t in traces.values())] for o in owners]
        rows.append(["total", *(f(sum(t["by_package_kb"].values())) for t in traces.values())])
        ks = ", ".join(f"{_label(p)}: {t['opened']} of {t['k']} open" for p, t in traces.items())
        return (
            "\n\nWhere the per-stream memory goes (SDK worker, tracemalloc: Python allocations live "
            "while the streams are open, KB per stream, by the innermost frame of a known package; "
            f"{ks}):\n\n" + table(["owner", *(_label(p) for p in traces)], rows)
        )

    def descriptor_section(self) -> str:
        rows = []
        for p in PROVIDERS:
            for key, label in (
                ("descriptors_handler", "handler (`conol_llm.astreaming`)"),
                ("descriptors", "SDK"),
            ):
                d = (self.sdk.get(p) or {}).get(key)
                if not d:
                    continue
                b, a = d["before"], d["after"]
                rows.append(
                    [
                        _label(p),
                        label,
                        f"{d['n']:,}",
                        str(d["concurrency"]),
                        f"{b['fds']} → {a['fds']}",
                        f"{b['sockets']} → {a['sockets']}",
                        f"{b.get('pool')} → {a.get('pool')}",
                        str(d["errors"]),
                        f(d["cpu"] / d["n"] * 1000, 2),
                    ]
                )
        for p in PROVIDERS:
            pr = self.proxy.get(p)
            if pr and "fds_before" in pr:
                total = sum(ph["n"] for ph in pr["phases"].values()) + (pr.get("memory") or {}).get("k", 0)
                rows.append(
                    [
                        _label(p),
                        "proxy process",
                        f"{total:,}",
                        "1…200",
                        f"{pr['fds_before']['fds']} → {pr['fds_after']['fds']}",
                        f"{pr['fds_before']['sockets']} → {pr['fds_after']['sockets']}",
                        "–",
                        "–",
                        "–",
                    ]
                )
        return (
            table(
                [
                    "provider",
                    "where",
                    "requests",
                    "concurrency",
                    "fds before → after",
                    "sockets before → after",
                    "pool connections before → after",
                    "errors/truncated",
                    "CPU/request (ms)",
                ],
                rows,
            )
            + self._series()
        )

    def _series(self) -> str:
        d = (self.sdk.get("conol") or {}).get("descriptors_handler")
        if not d or not d.get("series"):
            return ""
        points = ", ".join(f"{p['done']:,}: {p['fds']} fds / {p['pool']} pooled" for p in d["series"])
        examples = "; ".join(dict.fromkeys(d.get("examples") or []))
        return f"\n\nconol handler, after each 1,000 requests: {points}." + (
            f" Failures seen: {examples}." if examples else ""
        )

    def parse_section(self) -> str:
        parse = (self.sdk.get("conol") or {}).get("parse")
        if not parse:
            return "_Parse benchmark not run._"
        rows = []
        for o in parse["offline"]:
            s, mb = o["seconds"], o["bytes"] / 1e6
            rows.append(
                [
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
            )
        out = (
            "Offline, the exact lines the fake sends (1,000 cumulative snapshots per answer), "
            "call by call:\n\n"
            + table(
                [
                    "answer",
                    "JSON received (MB)",
                    "json.loads (ms)",
                    "orjson.loads (ms)",
                    "parse_event (ms)",
                    "core = parse_event + Assembler.feed (ms)",
                    "core / json.loads",
                    "core ns/byte",
                    "json.loads ns/byte",
                ],
                rows,
            )
        )
        e2e_rows, fit = [], {}
        floor = {o["chars"]: o["seconds"]["json_loads"] for o in parse["offline"]}
        for mode, entries in parse["e2e"].items():
            points = []
            for entry in entries:
                cpus = [r["cpu"] for r in entry["runs"]]
                checked = [r["ok"] for r in entry["runs"] if r["ok"] is not None]
                nbytes = entry["runs"][0]["bytes"] or 0
                points.append((nbytes, median(cpus)))
                fl = floor.get(entry["chars"])
                e2e_rows.append(
                    [
                        mode,
                        f"{entry['chars'] // 1000} KB",
                        str(len(cpus)),
                        f(nbytes / 1e6, 1),
                        f(median(cpus) * 1000, 0),
                        f(fl * 1000, 0) if fl else "–",
                        fx(median(cpus) / fl) if fl else "–",
                        ("yes" if all(checked) else "NO") if checked else "–",
                    ]
                )
            fit[mode] = _fit(points)
        out += "\n\nEnd to end against the fake (CPU of the process running the handler):\n\n" + table(
            [
                "path",
                "answer",
                "runs",
                "JSON received (MB)",
                "CPU median (ms)",
                "json.loads floor (ms)",
                "CPU / floor",
                "text exact",
            ],
            e2e_rows,
        )
        fl_fit = _fit([(o["bytes"], o["seconds"]["json_loads"]) for o in parse["offline"]])
        core_fit = _fit([(o["bytes"], o["seconds"]["core"]) for o in parse["offline"]])
        lines = [
            f"- json.loads floor: {f(fl_fit[1] * 1e9, 2)} ns/byte",
            f"- core (parse_event + Assembler.feed): {f(core_fit[1] * 1e9, 2)} ns/byte "
            f"({fx(core_fit[1] / fl_fit[1])} the floor's slope) + {f(core_fit[0] * 1000, 1)} ms "
            "per 1,000 events",
        ]
        for mode, (a, b) in fit.items():
            lines.append(
                f"- {mode}: {f(b * 1e9, 2)} ns/byte marginal ({fx(b / fl_fit[1]) if fl_fit[1] else '–'} the "
                f"floor's slope) + {f(a * 1000, 0)} ms fixed per 1,000-event answer"
            )
        return out + "\n\nStraight-line fit CPU = fixed + slope × bytes:\n\n" + "\n".join(lines)

    # -- targets --

    def targets(self) -> str:
        v: list[list[str]] = []

        def add(name: str, ok: bool | None, detail: str) -> None:
            self.verdicts.append((name, ok, detail))
            v.append([name, "met" if ok else ("n/a" if ok is None else "**NOT met**"), detail])

        conol, openai = self.sdk.get("conol"), self.sdk.get("openai")
        if conol and openai:
            o = phase_numbers(conol["phases"]["seq"])
            add("added TTFT ≤ 5 ms median (SDK)", median(o["ttft"]) <= 5, f"{f(median(o['ttft']), 2)} ms")
        if self.proxy.get("conol") and self.proxy.get("openai"):
            for provider in ("conol",):
                phases = (self.proxy.get(provider) or {}).get("phases", {})
                for key in sorted(phases, key=lambda k: int(k[1:])):
                    if key not in self.proxy["openai"]["phases"]:
                        continue
                    o = phase_numbers(phases[key])
                    t = phase_numbers(self.proxy["openai"]["phases"][key])
                    r = ratio(median(o["ttft"]), median(t["ttft"]))
                    add(
                        f"added TTFT within 1.2× of openai's (proxy, c={key[1:]}, {_label(provider)})",
                        r <= 1.2,
                        f"{f(median(o['ttft']), 1)} vs {f(median(t['ttft']), 1)} ms = {fx(r)}",
                    )
        if conol:
            o = phase_numbers(conol["phases"]["seq"])
            add(
                "finish ≤ 0.6 s median after a definitive end signal",
                median(o["finish"]) <= 600,
                f"{f(median(o['finish']), 0)} ms (p99 {f(p99(o['finish']), 0)})",
            )
            st = conol["phases"].get("end_status")
            if st:
                n = phase_numbers(st, "terminal_at")
                limit = (self.settle + 0.25) * 1000
                add(
                    f"finish ≤ settle + 0.25 s = {limit:.0f} ms after a terminal status alone",
                    median(n["finish"]) <= limit,
                    f"median {f(median(n['finish']), 0)} ms, p99 {f(p99(n['finish']), 0)} ms; "
                    f"polls/request median {median(n['polls']):.0f}",
                )
            early = conol["phases"].get("end_early")
            if early:
                n = phase_numbers(early, "terminal_at")
                add(
                    "zero truncated answers, status terminal before the last snapshot",
                    n["truncated"] == 0,
                    f"{n['truncated']} of {n['n']} truncated",
                )
            trunc = sum(phase_numbers(p)["truncated"] for p in conol["phases"].values())
            add("zero truncated answers in every SDK phase", trunc == 0, f"{trunc} truncated")
        if self.proxy.get("conol") and self.proxy.get("openai"):
            for provider in ("conol",):
                phases = (self.proxy.get(provider) or {}).get("phases", {})
                for key in sorted(phases, key=lambda k: int(k[1:])):
                    if key not in self.proxy["openai"]["phases"]:
                        continue
                    o = phase_numbers(phases[key])
                    t = phase_numbers(self.proxy["openai"]["phases"][key])
                    r = ratio(o["cpu_ms"], t["cpu_ms"])
                    suffix = "" if provider == "conol" else f", {_label(provider)}"
                    add(
                        f"proxy CPU per streamed request ≤ 1.2× openai's ({key}{suffix})",
                        r <= 1.2,
                        f"{f(o['cpu_ms'])} vs {f(t['cpu_ms'])} ms = {fx(r)}",
                    )
            bad_all = {k: phase_numbers(v) for k, v in self.proxy["conol"]["phases"].items()}
            add(
                "zero truncated answers through the proxy (conol, every concurrency)",
                all(n["truncated"] + n["errors"] == 0 for n in bad_all.values()),
                ", ".join(
                    f"c={k[1:]}: {n['truncated']} truncated, {n['errors']} errors of {n['n']}"
                    for k, n in sorted(bad_all.items(), key=lambda kv: int(kv[0][1:]))
                ),
            )
            for p in PROVIDERS:
                ph = (self.proxy.get(p) or {}).get("phases", {}).get("c200")
                if ph:
                    n = phase_numbers(ph)
                    bad = n["errors"] + n["truncated"]
                    add(
                        f"200 concurrent streams, no errors ({_label(p)})",
                        bad == 0 if p != "openai" else None,
                        f"{n['errors']} errors, {n['truncated']} truncated of {n['n']}; "
                        f"p99 latency {f(p99(n['latency']), 2)} s",
                    )
        parse = (conol or {}).get("parse")
        if parse:
            off = parse["offline"]
            worst = max(o["seconds"]["core"] / o["seconds"]["json_loads"] for o in off)
            add(
                "parse cost ≤ 1.5× the json.loads floor (core: parse_event + Assembler.feed)",
                worst <= 1.5,
                "worst "
                + fx(worst)
                + " ("
                + ", ".join(
                    f"{o['chars'] // 1000} KB: {fx(o['seconds']['core'] / o['seconds']['json_loads'])}"
                    for o in off
                )
                + ")",
            )
            marg = _marginals([(o["bytes"], o["seconds"]["core"]) for o in off])
            if marg:
                growth = max(marg) / min(marg) if min(marg) > 0 else math.inf
                add(
                    "parse cost linear in bytes (marginal ns/byte does not grow with size)",
                    marg[-1] <= 1.5 * marg[0],
                    "marginal "
                    + " → ".join(f"{m * 1e9:.2f}" for m in marg)
                    + f" ns/byte (spread {growth:.2f}×)",
                )
            fl = _fit([(o["bytes"], o["seconds"]["json_loads"]) for o in off])
            received = parse["e2e"].get("receive")
            receive_slope = _e2e_fit(received)[1] if received else None
            for mode, entries in parse["e2e"].items():
                if mode in ("sdk", "receive") or not fl[1]:
                    continue
                h = _e2e_fit(entries)
                big = max(entries, key=lambda e: e["chars"])
                total = median([r["cpu"] for r in big["runs"]]) / floor_for(off, big["chars"])
                split = ""
                if receive_slope is not None:
                    rest = h[1] - receive_slope
                    split = (
                        f"; of the slope, receiving the bytes (socket, HTTP) is {f(receive_slope * 1e9, 2)} "
                        f"ns/byte, the rest (SSE split, parse, diff, chunks) {f(rest * 1e9, 2)} "
                        f"= {fx(rest / fl[1])} the floor"
                    )
                add(
                    f"end to end, {mode}: CPU ≤ 1.5× json.loads (per byte; whole answer)",
                    h[1] / fl[1] <= 1.5 if mode == "handler" else None,
                    f"marginal {f(h[1] * 1e9, 2)} vs {f(fl[1] * 1e9, 2)} ns/byte = {fx(h[1] / fl[1])}; whole "
                    f"{big['chars'] // 1000} KB answer {fx(total)} the floor{split}",
                )
        for mode, data in (("SDK", self.sdk), ("proxy", self.proxy)):
            for p in PROVIDERS:
                mem = (data.get(p) or {}).get("memory")
                if not mem or p == "openai":
                    continue
                if mem["all_open"]:
                    add(
                        f"≤ 50 KB RSS per open stream ({mode}, {_label(p)})",
                        mem["per_stream_kb"] <= 50,
                        f"{f(mem['per_stream_kb'])} KB with {mem['k']} streams open at once"
                        + _openai_mem(data),
                    )
                else:
                    add(
                        f"≤ 50 KB RSS per open stream ({mode}, {_label(p)})",
                        False,
                        f"only {mem['opened']} of {mem['k']} streams had received their first piece after "
                        f"the {mem.get('hold', '?')} s hold ({mem['errors']} errors, "
                        f"{mem['k'] - mem['ok'] - mem['errors']} truncated); "
                        f"growth {f(mem['per_stream_kb'])} KB/stream" + _openai_mem(data),
                    )
        for handler in ("conol",):
            hm = (conol or {}).get(f"memory_handler_{handler}")
            if hm:
                add(
                    f"≤ 50 KB RSS per open stream (handler only, no LiteLLM wrapper: {_label(handler)})",
                    hm["all_open"] and hm["per_stream_kb"] <= 50,
                    f"{f(hm['per_stream_kb'])} KB with {hm['opened']} of {hm['k']} streams open at once, "
                    f"status polls per stream {_polls(hm)}",
                )
        for key in ("descriptors_handler", "descriptors"):
            d = (conol or {}).get(key)
            if not d:
                continue
            series = d.get("series") or []
            where = "handler" if key.endswith("handler") else "SDK"
            detail = (
                f"fds {d['before']['fds']} → {d['after']['fds']}, pool {d['before'].get('pool')} → "
                f"{d['after'].get('pool')}"
            )

            def unpooled(x: dict[str, Any]) -> int:
                return int(x["fds"]) - int(x.get("pool") or 0)

            # Idle keep-alive connections are bounded by the pool; a leak is a descriptor the pool
            # does not account for, and it grows batch after batch.
            leak = unpooled(d["after"]) - unpooled(d["before"])
            trend = ""
            if len(series) >= 2:
                trend = (
                    f"; after each batch: {series[0]['fds']} … {series[-1]['fds']} fds "
                    f"({series[-1]['fds'] - series[0]['fds']:+d} after the first batch)"
                )
            add(
                f"no descriptor growth over {d['n']:,} requests ({where}; descriptors not held by the pool)",
                leak <= 2,
                f"{detail}; unpooled {unpooled(d['before'])} → {unpooled(d['after'])}{trend}",
            )
        pr = self.proxy.get("conol")
        if pr and "fds_before" in pr:
            grow = pr["fds_after"]["fds"] - pr["fds_before"]["fds"]
            t = self.proxy.get("openai") or {}
            tg = t["fds_after"]["fds"] - t["fds_before"]["fds"] if "fds_before" in t else None
            add(
                "no descriptor growth in the proxy (conol)",
                grow <= max(2, tg or 0),
                f"fds {pr['fds_before']['fds']} → {pr['fds_after']['fds']} (openai's proxy: {tg:+d})"
                if tg is not None
                else f"fds {pr['fds_before']['fds']} → {pr['fds_after']['fds']}",
            )
        return table(["target", "verdict", "measured"], v)

    # -- the whole run --

    def markdown(self) -> str:
        meta = self.raw["meta"]
        head = [
            f"## Run {meta['date']} — {meta['mode']}",
            "",
            f"- command: `{meta['command']}` (wall time {meta.get('wall', 0):.0f} s)",
            f"- machine: {meta['nproc']} cores ({meta['cpu_model']}), memory {meta['memory']}, "
            "load average at start "
            f"{meta['loadavg']}",
            f"- versions: Python {meta['python']}, litellm {meta['litellm']}, httpx {meta['httpx']}, "
            f"httpcore {meta['httpcore']}, aiohttp {meta['aiohttp']}, openai {meta['openai']}, "
            f"pydantic {meta['pydantic']}, "
            f"orjson {meta['orjson']}; git {meta['git']}",
        ]
        sections = [
            ("Targets", self.targets()),
            ("1–3. SDK mode: added TTFT, finish delay, CPU per request", self.sdk_section()),
            ("2. How the answer ends (conol)", self.ends_section()),
            (
                "1, 3, 4. Proxy mode: throughput, tail latency, TTFT, CPU at 1 / 50 / 200 concurrent streams",
                self.proxy_section(),
            ),
            ("Proxy ratios ours/openai", self.ratio_section()),
            ("4b. Proxy workers: throughput with 1 and 2 workers", self.workers_section()),
            ("5. Resident memory per concurrently open stream", self.memory_section()),
            ("6. Parse cost on long answers", self.parse_section()),
            ("7. File descriptors and pool connections", self.descriptor_section()),
        ]
        body = (
            "\n".join(head)
            + "\n\n"
            + "\n\n".join(f"### {title}\n\n{text}" for title, text in sections if text)
        )
        notes = self.raw.get("notes")
        if notes:
            body += "\n\n### Notes\n\n" + notes
        return body

    def history_row(self) -> str:
        meta = self.raw["meta"]
        cells = [meta["date"], meta["mode"], meta["git"]]

        def get(name: str) -> str:
            for n, ok, detail in self.verdicts:
                if n.startswith(name):
                    return ("✅ " if ok else "❌ " if ok is False else "") + detail.split(";")[0]
            return "–"

        cells += [
            get("added TTFT ≤ 5"),
            get("added TTFT within 1.2× of openai's (proxy, c=1, conol)"),
            get("finish ≤ 0.6"),
            get("finish ≤ settle"),
            get("zero truncated answers, status"),
            get("proxy CPU per streamed request ≤ 1.2× openai's (c1)"),
            get("200 concurrent streams, no errors (conol)"),
            get("parse cost ≤"),
            get("≤ 50 KB RSS per open stream (SDK, conol)"),
            get("≤ 50 KB RSS per open stream (proxy, conol)"),
            get("no descriptor growth over"),
        ]
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"


HISTORY_HEADER = (
    "| date | mode | git | SDK added TTFT | proxy TTFT vs openai | finish after `done` | finish after status "
    "| early-terminal truncations | proxy CPU/request vs openai (c=1) | c=200 conol "
    "| parse core vs json.loads "
    "| RSS/stream SDK | RSS/stream proxy | descriptors |\n|" + "---|" * 14
)


def _label(provider: str) -> str:
    return {
        "conol": "conol",
        "openai": "openai",
    }.get(provider, provider)


def _openai_mem(data: dict[str, Any]) -> str:
    mem = (data.get("openai") or {}).get("memory")
    return f" (openai: {f(mem['per_stream_kb'])} KB)" if mem else ""


def _polls(mem: dict[str, Any]) -> str:
    polls = [r["polls"] for r in mem.get("records", {}).values() if "polls" in r]
    return f"{median(polls):.0f}" if polls else "–"


def _marginals(points: Sequence[tuple[float, float]]) -> list[float]:
    """Cost per extra byte between consecutive sizes (grows with size if the cost is superlinear)."""
    pts = sorted(points)
    return [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in itertools.pairwise(pts) if x2 > x1]


def _e2e_fit(entries: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """(fixed, slope) of one end-to-end mode's median CPU against the bytes received."""
    return _fit([((e["runs"][0]["bytes"] or 0), median([r["cpu"] for r in e["runs"]])) for e in entries])


def floor_for(offline: Sequence[dict[str, Any]], chars: int) -> float:
    for o in offline:
        if o["chars"] == chars:
            return float(o["seconds"]["json_loads"])
    return math.nan


def _fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
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


PREAMBLE = """# Benchmark results: `conol/…` vs LiteLLM's own `openai/…` provider

Produced by `python -m bench` (`make bench`); see `bench/README.md` for what is measured and how.
The history table keeps one row per full run (newest last) so progress stays visible; each run's full
tables follow, newest first. Medians and ratios inside one run section all come from that one run.

## History
"""


RUN_MARK = "<!-- run:{} -->"


def write_results(report: Report, path: Path = RESULTS, analysis: str = "") -> None:
    """Add this run's history row and section; a run already in the file (same id) is replaced."""
    run_id = report.raw["meta"].get("run_id") or report.raw["meta"]["date"]
    mark = RUN_MARK.format(run_id)
    section = mark + "\n" + report.markdown() + ("\n\n" + analysis.strip() if analysis.strip() else "")
    row = report.history_row()
    rows: list[str] = []
    sections: list[str] = []
    if path.exists():
        text = path.read_text()
        m = re.search(re.escape(HISTORY_START) + r"\n(.*?)" + re.escape(HISTORY_END), text, re.S)
        rows = [ln for ln in (m.group(1).splitlines() if m else []) if ln.startswith("| 20")]
        runs = text.split(RUNS, 1)[1] if RUNS in text else ""
        sections = [p.strip() for p in re.split(r"(?=<!-- run:)", runs) if p.strip()]
    date = report.raw["meta"]["date"]
    rows = [r for r in rows if r.split("|")[1].strip() != date] + [row]
    sections = [sec for sec in sections if not sec.startswith(mark)] + [section]
    rows.sort(key=lambda r: r.split("|")[1].strip())  # oldest first
    sections.sort(key=_section_date, reverse=True)  # newest first
    text = (
        f"{PREAMBLE}\n{HISTORY_START}\n{HISTORY_HEADER}\n"
        + "\n".join(rows)
        + f"\n{HISTORY_END}\n\n{RUNS}\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    path.write_text(text)


def _section_date(section: str) -> str:
    m = re.search(r"^## Run (.+?) — ", section, re.M)
    return m.group(1) if m else ""


def main() -> None:
    """``python -m bench.report RAW.json [--analysis FILE]``: (re)write RESULTS.md from a saved run."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.report")
    parser.add_argument("raw", type=Path)
    parser.add_argument("--analysis", type=Path, default=Path(__file__).resolve().parent / "ANALYSIS.md")
    parser.add_argument("--print", action="store_true", help="print the section instead of writing")
    args = parser.parse_args()
    report = Report(json.loads(args.raw.read_text()))
    if args.print:
        print(report.markdown())
        return
    analysis = args.analysis.read_text() if args.analysis.exists() else ""
    write_results(report, RESULTS, analysis)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
