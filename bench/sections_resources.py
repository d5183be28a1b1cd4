"""Report sections on resources: resident memory per open stream, file descriptors and pool connections."""

from __future__ import annotations

from typing import Any

from .numbers import PROVIDERS, polls_median
from .tables import f, table

MEMORY_HEADER = [
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
]
DESCRIPTOR_HEADER = [
    "provider",
    "where",
    "requests",
    "concurrency",
    "fds before → after",
    "sockets before → after",
    "pool connections before → after",
    "errors/truncated",
    "CPU/request (ms)",
]
# SDK result key → where its descriptors were counted
DESCRIPTOR_RUNS = (
    ("descriptors_handler", "handler (`conol_llm.astreaming`)"),
    ("descriptors", "SDK"),
)


def memory_section(sdk: dict[str, Any], proxy: dict[str, Any]) -> str:
    rows = [_memory_row(mode, provider, mem) for mode, provider, mem in _memory_runs(sdk, proxy) if mem]
    return table(MEMORY_HEADER, rows) + _trace_table(sdk)


def _memory_runs(sdk: dict[str, Any], proxy: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(mode, provider, memory result) of every memory run, in report order."""
    entries: list[tuple[str, str, dict[str, Any]]] = []
    for mode, data in (("SDK", sdk), ("proxy", proxy)):
        for p in PROVIDERS:
            mem = (data.get(p) or {}).get("memory")
            if mem:
                entries.append((mode, p, mem))
            if mode == "SDK" and p == "conol":
                handler_mem = (data.get(p) or {}).get("memory_handler_conol")
                if handler_mem:
                    entries.append(("handler only", "conol", handler_mem))
    return entries


def _memory_row(mode: str, provider: str, mem: dict[str, Any]) -> list[str]:
    return [
        mode,
        provider,
        str(mem["k"]),
        "yes" if mem["all_open"] else f"no ({mem['opened']})",
        f(mem["rss_base_kb"] / 1024),
        f(mem["rss_open_kb"] / 1024),
        f(mem["per_stream_kb"]),
        f"{mem['fds_base']['sockets']} → {mem['fds_open']['sockets']}",
        f"{mem['errors']} / {mem['k'] - mem['ok'] - mem['errors']}",
        polls_median(mem),
    ]


def _trace_table(sdk: dict[str, Any]) -> str:
    found = {p: (sdk.get(p) or {}).get("memory_trace") for p in ("conol", "openai")}
    traces: dict[str, dict[str, Any]] = {p: t for p, t in found.items() if t and t.get("by_package_kb")}
    if not traces:
        return ""
    owners = sorted(
        {o for t in traces.values() for o in t["by_package_kb"]},
        key=lambda o: -max(t["by_package_kb"].get(o, 0.0) for t in traces.values()),
    )
    rows = [[o, *(f(t["by_package_kb"].get(o, 0.0)) for t in traces.values())] for o in owners]
    rows.append(["total", *(f(sum(t["by_package_kb"].values())) for t in traces.values())])
    ks = ", ".join(f"{p}: {t['opened']} of {t['k']} open" for p, t in traces.items())
    return (
        "\n\nWhere the per-stream memory goes (SDK worker, tracemalloc: Python allocations live "
        "while the streams are open, KB per stream, by the innermost frame of a known package; "
        f"{ks}):\n\n" + table(["owner", *traces], rows)
    )


def descriptor_section(sdk: dict[str, Any], proxy: dict[str, Any]) -> str:
    rows = []
    for p in PROVIDERS:
        for key, label in DESCRIPTOR_RUNS:
            d = (sdk.get(p) or {}).get(key)
            if d:
                rows.append(_client_descriptor_row(p, label, d))
    for p in PROVIDERS:
        pr = proxy.get(p)
        if pr and "fds_before" in pr:
            rows.append(_proxy_descriptor_row(p, pr))
    return table(DESCRIPTOR_HEADER, rows) + _handler_series(sdk)


def _client_descriptor_row(provider: str, where: str, d: dict[str, Any]) -> list[str]:
    b, a = d["before"], d["after"]
    return [
        provider,
        where,
        f"{d['n']:,}",
        str(d["concurrency"]),
        f"{b['fds']} → {a['fds']}",
        f"{b['sockets']} → {a['sockets']}",
        f"{b.get('pool')} → {a.get('pool')}",
        str(d["errors"]),
        f(d["cpu"] / d["n"] * 1000, 2),
    ]


def _proxy_descriptor_row(provider: str, pr: dict[str, Any]) -> list[str]:
    total = sum(ph["n"] for ph in pr["phases"].values()) + (pr.get("memory") or {}).get("k", 0)
    return [
        provider,
        "proxy process",
        f"{total:,}",
        "1…200",
        f"{pr['fds_before']['fds']} → {pr['fds_after']['fds']}",
        f"{pr['fds_before']['sockets']} → {pr['fds_after']['sockets']}",
        "–",
        "–",
        "–",
    ]


def _handler_series(sdk: dict[str, Any]) -> str:
    d = (sdk.get("conol") or {}).get("descriptors_handler")
    if not d or not d.get("series"):
        return ""
    points = ", ".join(f"{p['done']:,}: {p['fds']} fds / {p['pool']} pooled" for p in d["series"])
    examples = "; ".join(dict.fromkeys(d.get("examples") or []))
    return f"\n\nconol handler, after each 1,000 requests: {points}." + (
        f" Failures seen: {examples}." if examples else ""
    )
