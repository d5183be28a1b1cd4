"""The issue's targets, checked against one run: a verdict table and the verdicts the history row quotes."""

from __future__ import annotations

import math
from typing import Any

from .numbers import (
    PROVIDERS,
    e2e_fit,
    floor_for,
    level_keys,
    marginals,
    offline_fit,
    phase_numbers,
    polls_median,
)
from .sections_agent import agent_targets
from .stats import median, p99, ratio
from .tables import f, fx, table

OURS = "ours (litellm_conol)"  # bench/alloc_trace.py's owner of our package's allocations
OWN_SHARE_KB = 5.0
Verdict = tuple[str, bool | None, str]  # (target, met / not met / not applicable, what was measured)


class TargetChecks:
    """Checks every target the run has data for, in a fixed order; each check adds one verdict."""

    def __init__(
        self, sdk: dict[str, Any], proxy: dict[str, Any], settle: float, agent: dict[str, Any] | None = None
    ) -> None:
        self.sdk, self.proxy, self.settle, self.agent = sdk, proxy, settle, agent or {}
        self.conol: dict[str, Any] | None = sdk.get("conol")
        self.verdicts: list[Verdict] = []
        self.rows: list[list[str]] = []

    def add(self, name: str, ok: bool | None, detail: str) -> None:
        self.verdicts.append((name, ok, detail))
        self.rows.append([name, "met" if ok else ("n/a" if ok is None else "**NOT met**"), detail])

    def table(self) -> str:
        """Run every check; the verdict table."""
        proxies_both = bool(self.proxy.get("conol") and self.proxy.get("openai"))
        if self.conol and self.sdk.get("openai"):
            o = phase_numbers(self.conol["phases"]["seq"])
            self.add(
                "added TTFT ≤ 5 ms median (SDK)", median(o["ttft"]) <= 5, f"{f(median(o['ttft']), 2)} ms"
            )
        if proxies_both:
            self.proxy_ttft()
        if self.conol:
            self.sdk_ends(self.conol)
        if proxies_both:
            self.proxy_cpu()
            self.proxy_truncations()
            self.proxy_c200()
        parse = (self.conol or {}).get("parse")
        if parse:
            self.parse_cost(parse["offline"])
            self.parse_end_to_end(parse)
        self.memory()
        self.descriptors()
        self.proxy_descriptors()
        agent_targets(self.agent, self.add)
        return table(["target", "verdict", "measured"], self.rows)

    def _proxy_levels(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(level key, conol's numbers, openai's numbers) of every proxy level both providers ran."""
        phases = (self.proxy.get("conol") or {}).get("phases", {})
        theirs = self.proxy["openai"]["phases"]
        return [
            (key, phase_numbers(phases[key]), phase_numbers(theirs[key]))
            for key in level_keys(phases)
            if key in theirs
        ]

    def proxy_ttft(self) -> None:
        for key, o, t in self._proxy_levels():
            r = ratio(median(o["ttft"]), median(t["ttft"]))
            self.add(
                f"added TTFT within 1.2× of openai's (proxy, c={key[1:]}, conol)",
                r <= 1.2,
                f"{f(median(o['ttft']), 1)} vs {f(median(t['ttft']), 1)} ms = {fx(r)}",
            )

    def sdk_ends(self, conol: dict[str, Any]) -> None:
        o = phase_numbers(conol["phases"]["seq"])
        self.add(
            "finish ≤ 0.6 s median after a definitive end signal",
            median(o["finish"]) <= 600,
            f"{f(median(o['finish']), 0)} ms (p99 {f(p99(o['finish']), 0)})",
        )
        st = conol["phases"].get("end_status")
        if st:
            n = phase_numbers(st, "terminal_at")
            limit = (self.settle + 0.25) * 1000
            self.add(
                f"finish ≤ settle + 0.25 s = {limit:.0f} ms after a terminal status alone",
                median(n["finish"]) <= limit,
                f"median {f(median(n['finish']), 0)} ms, p99 {f(p99(n['finish']), 0)} ms; "
                f"polls/request median {median(n['polls']):.0f}",
            )
        early = conol["phases"].get("end_early")
        if early:
            n = phase_numbers(early, "terminal_at")
            self.add(
                "zero truncated answers, status terminal before the last snapshot",
                n["truncated"] == 0,
                f"{n['truncated']} of {n['n']} truncated",
            )
        trunc = sum(phase_numbers(p)["truncated"] for p in conol["phases"].values())
        self.add("zero truncated answers in every SDK phase", trunc == 0, f"{trunc} truncated")

    def proxy_cpu(self) -> None:
        for key, o, t in self._proxy_levels():
            r = ratio(o["cpu_ms"], t["cpu_ms"])
            self.add(
                f"proxy CPU per streamed request ≤ 1.2× openai's ({key})",
                r <= 1.2,
                f"{f(o['cpu_ms'])} vs {f(t['cpu_ms'])} ms = {fx(r)}",
            )

    def proxy_truncations(self) -> None:
        bad_all = {k: phase_numbers(v) for k, v in self.proxy["conol"]["phases"].items()}
        self.add(
            "zero truncated answers through the proxy (conol, every concurrency)",
            all(n["truncated"] + n["errors"] == 0 for n in bad_all.values()),
            ", ".join(
                f"c={k[1:]}: {n['truncated']} truncated, {n['errors']} errors of {n['n']}"
                for k, n in sorted(bad_all.items(), key=lambda kv: int(kv[0][1:]))
            ),
        )

    def proxy_c200(self) -> None:
        for p in PROVIDERS:
            ph = (self.proxy.get(p) or {}).get("phases", {}).get("c200")
            if ph:
                n = phase_numbers(ph)
                bad = n["errors"] + n["truncated"]
                self.add(
                    f"200 concurrent streams, no errors ({p})",
                    bad == 0 if p != "openai" else None,  # openai's numbers are the reference, not a target
                    f"{n['errors']} errors, {n['truncated']} truncated of {n['n']}; "
                    f"p99 latency {f(p99(n['latency']), 2)} s",
                )

    def parse_cost(self, off: list[dict[str, Any]]) -> None:
        worst = max(o["seconds"]["core"] / o["seconds"]["json_loads"] for o in off)
        each = ", ".join(
            f"{o['chars'] // 1000} KB: {fx(o['seconds']['core'] / o['seconds']['json_loads'])}" for o in off
        )
        self.add(
            "parse cost ≤ 1.5× the json.loads floor (core: parse_event + Assembler.feed)",
            worst <= 1.5,
            "worst " + fx(worst) + " (" + each + ")",
        )
        marg = marginals([(o["bytes"], o["seconds"]["core"]) for o in off])
        if marg:
            growth = max(marg) / min(marg) if min(marg) > 0 else math.inf
            self.add(
                "parse cost linear in bytes (marginal ns/byte does not grow with size)",
                marg[-1] <= 1.5 * marg[0],
                "marginal " + " → ".join(f"{m * 1e9:.2f}" for m in marg) + f" ns/byte (spread {growth:.2f}×)",
            )

    def parse_end_to_end(self, parse: dict[str, Any]) -> None:
        off = parse["offline"]
        fl = offline_fit(off, "json_loads")
        received = parse["e2e"].get("receive")
        receive_slope = e2e_fit(received)[1] if received else None
        for mode, entries in parse["e2e"].items():
            if mode in ("sdk", "receive") or not fl[1]:
                continue
            h = e2e_fit(entries)
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
            self.add(
                f"end to end, {mode}: CPU ≤ 1.5× json.loads (per byte; whole answer)",
                h[1] / fl[1] <= 1.5 if mode == "handler" else None,
                f"marginal {f(h[1] * 1e9, 2)} vs {f(fl[1] * 1e9, 2)} ns/byte = {fx(h[1] / fl[1])}; whole "
                f"{big['chars'] // 1000} KB answer {fx(total)} the floor{split}",
            )

    def memory(self) -> None:
        for mode, data in (("SDK", self.sdk), ("proxy", self.proxy)):
            mem = (data.get("conol") or {}).get("memory")  # openai's memory is the reference, not a target
            if mem:
                self.add(f"≤ 50 KB RSS per open stream ({mode}, conol)", *_memory_verdict(mem, data))
            theirs = (data.get("openai") or {}).get("memory")
            if mem and theirs:
                ours_kb, openai_kb = mem["per_stream_kb"], theirs["per_stream_kb"]
                self.add(
                    f"RSS per open stream ≤ openai's ({mode}, conol)",
                    mem["all_open"] and theirs["all_open"] and ours_kb <= openai_kb,
                    f"{f(ours_kb)} vs {f(openai_kb)} KB = {fx(ratio(ours_kb, openai_kb))}",
                )
        trace = (self.conol or {}).get("memory_trace")
        if trace and trace.get("by_package_kb"):
            share = trace["by_package_kb"].get(OURS, 0.0)
            self.add(
                f"our own share of the memory per open stream ≤ {OWN_SHARE_KB:g} KB (SDK, tracemalloc)",
                share <= OWN_SHARE_KB,
                f"{f(share)} KB per stream of {f(sum(trace['by_package_kb'].values()))} KB traced",
            )
        hm = (self.conol or {}).get("memory_handler_conol")
        if hm:
            self.add(
                "≤ 50 KB RSS per open stream (handler only, no LiteLLM wrapper: conol)",
                hm["all_open"] and hm["per_stream_kb"] <= 50,
                f"{f(hm['per_stream_kb'])} KB with {hm['opened']} of {hm['k']} streams open at once, "
                f"status polls per stream {polls_median(hm)}",
            )

    def descriptors(self) -> None:
        for key in ("descriptors_handler", "descriptors"):
            d = (self.conol or {}).get(key)
            if d:
                self.add(*_descriptor_verdict(key, d))

    def proxy_descriptors(self) -> None:
        pr = self.proxy.get("conol")
        if not pr or "fds_before" not in pr:
            return
        grow = pr["fds_after"]["fds"] - pr["fds_before"]["fds"]
        t = self.proxy.get("openai") or {}
        tg = t["fds_after"]["fds"] - t["fds_before"]["fds"] if "fds_before" in t else None
        self.add(
            "no descriptor growth in the proxy (conol)",
            grow <= max(2, tg or 0),
            f"fds {pr['fds_before']['fds']} → {pr['fds_after']['fds']} (openai's proxy: {tg:+d})"
            if tg is not None
            else f"fds {pr['fds_before']['fds']} → {pr['fds_after']['fds']}",
        )


def _memory_verdict(mem: dict[str, Any], data: dict[str, Any]) -> tuple[bool, str]:
    """Met when every stream was open at once and each added ≤ 50 KB; what was measured."""
    if mem["all_open"]:
        ok = mem["per_stream_kb"] <= 50
        return ok, f"{f(mem['per_stream_kb'])} KB with {mem['k']} streams open at once" + _openai_mem(data)
    return False, (
        f"only {mem['opened']} of {mem['k']} streams had received their first piece after "
        f"the {mem.get('hold', '?')} s hold ({mem['errors']} errors, "
        f"{mem['k'] - mem['ok'] - mem['errors']} truncated); "
        f"growth {f(mem['per_stream_kb'])} KB/stream" + _openai_mem(data)
    )


def _openai_mem(data: dict[str, Any]) -> str:
    mem = (data.get("openai") or {}).get("memory")
    return f" (openai: {f(mem['per_stream_kb'])} KB)" if mem else ""


def _unpooled(counts: dict[str, Any]) -> int:
    return int(counts["fds"]) - int(counts.get("pool") or 0)


def _descriptor_verdict(key: str, d: dict[str, Any]) -> Verdict:
    series = d.get("series") or []
    where = "handler" if key.endswith("handler") else "SDK"
    before, after = d["before"], d["after"]
    detail = f"fds {before['fds']} → {after['fds']}, pool {before.get('pool')} → {after.get('pool')}"
    # Idle keep-alive connections are bounded by the pool; a leak is a descriptor the pool
    # does not account for, and it grows batch after batch.
    leak = _unpooled(after) - _unpooled(before)
    trend = ""
    if len(series) >= 2:
        trend = (
            f"; after each batch: {series[0]['fds']} … {series[-1]['fds']} fds "
            f"({series[-1]['fds'] - series[0]['fds']:+d} after the first batch)"
        )
    return (
        f"no descriptor growth over {d['n']:,} requests ({where}; descriptors not held by the pool)",
        leak <= 2,
        f"{detail}; unpooled {_unpooled(before)} → {_unpooled(after)}{trend}",
    )
