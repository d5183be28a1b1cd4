"""``python -m bench [--quick] [--no-write] [--only sdk,proxy]``: run every benchmark.

The orchestrator (this process) never imports litellm: the fakes, the SDK workers and the proxies
are child processes, each in its own process group, all killed on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from . import agent as agent_mod
from . import procs
from . import proxy as proxy_mod
from .report import RESULTS, Report, write_results
from .workload import Workload

OUT = Path(__file__).resolve().parent / "out"
PROVIDERS = ("conol", "openai")

# The standard streaming workload: both fakes send this text in these pieces at this pace.
WORKLOAD = Workload(chars=1000, n=20, delay=0.025, lead=0.05, end="done")

SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "sdk": {
            "warmup": 5,
            "seq": 25,
            "ends": 12,
            "ends_concurrency": 12,
            "memory": 150,
            "hold": 7.0,
            "memory_trace": 50,
            "fd_requests": 200,
            "fd_concurrency": 50,
            "fd_handler_requests": 10_000,
            "fd_handler_concurrency": 10,
            "parse_offline": [10_000, 100_000, 1_000_000],
            "parse_e2e": [10_000, 100_000, 1_000_000],
            "parse_repeat": 2,
        },
        "proxy": {
            "warmup": 5,
            "warmup_c": 20,
            "levels": [(1, 15), (50, 100), (200, 200)],
            "memory": 150,
            "hold": 6.0,
        },
        "workers": {"counts": [1, 2], "warmup": 40, "level": (200, 200)},
        "shared_proxy": False,
    },
    "quick": {
        "sdk": {
            "warmup": 1,
            "seq": 5,
            "ends": 3,
            "ends_concurrency": 3,
            "end_kinds": ["early"],
            "memory": 20,
            "hold": 1.0,
            "fd_requests": 0,
            "fd_handler_requests": 100,
            "fd_concurrency": 20,
            "parse_offline": [10_000, 100_000],
            "parse_e2e": [10_000, 100_000],
            "parse_repeat": 1,
            "parse_modes": ["handler", "receive"],
        },
        "proxy": {"warmup": 1, "warmup_c": 0, "levels": [(1, 3), (10, 10)], "memory": 0, "hold": 0},
        "workers": {"counts": [1, 2], "warmup": 4, "level": (20, 20)},
        "shared_proxy": True,
    },
}


def meta(args: argparse.Namespace) -> dict[str, Any]:
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "–"

    cpu_model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    mem_kb = int(
        next(
            ln for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal")
        ).split()[1]
    )
    try:
        git = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=procs.ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=procs.ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        git += " + uncommitted changes" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        git = "?"
    from litellm_conol.core.protocol.end_policy import Timing

    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "mode": "quick" if args.quick else "full",
        "command": "python -m bench " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "python -m bench",
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        **{
            k: version(k) for k in ("litellm", "httpx", "httpcore", "aiohttp", "openai", "pydantic", "orjson")
        },
        "git": git,
        "settle_window": Timing().settle_window,
        "workload": WORKLOAD.__dict__,
    }


def launch_sdk_worker(spec: dict[str, Any], name: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start a worker: it imports litellm at once, then waits for ``go`` on stdin before measuring."""
    log_path = OUT / f"sdk_{name}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.sdk", json.dumps({**spec, "wait_for_go": True})],
            cwd=procs.ROOT,
            env=procs.child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            start_new_session=True,
        )
    return process, log_path


def finish_sdk_worker(process: subprocess.Popen[bytes], log_path: Path, timeout: float) -> dict[str, Any]:
    try:
        stdout, _ = process.communicate(b"go\n", timeout=timeout)
    finally:
        procs.stop_group(process)
    lines = [ln for ln in stdout.decode(errors="replace").splitlines() if ln.startswith("RESULT ")]
    if process.returncode not in (0, None) or not lines:
        raise RuntimeError(f"SDK worker failed ({process.returncode}): {log_path.read_text()[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return result


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run (< 1 min): small sizes")
    parser.add_argument("--no-write", action="store_true", help="do not touch bench/RESULTS.md")
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS.md even for --quick")
    parser.add_argument(
        "--only",
        default="sdk,proxy,agent,workers",
        help="comma-separated: sdk, proxy, agent, workers (default all)",
    )
    return parser.parse_args()


@dataclass
class Children:
    """Every child process still running; ``stop`` ends them all (what has been measured is removed)."""

    conol: procs.Child | None = None
    openai: procs.Child | None = None
    anthropic: procs.Child | None = None
    proxies: dict[str, proxy_mod.Proxy] = field(default_factory=dict)  # one proxy may serve several
    agent_proxies: dict[str, proxy_mod.Proxy] = field(default_factory=dict)  # the agent-shaped rows'
    workers: dict[str, tuple[subprocess.Popen[bytes], Path]] = field(default_factory=dict)

    def stop(self) -> None:
        for proxy in {id(p): p for p in [*self.proxies.values(), *self.agent_proxies.values()]}.values():
            proxy.stop()
        for process, _ in self.workers.values():
            procs.stop_group(process)
        for child in (self.conol, self.openai, self.anthropic):
            if child is not None:
                child.stop()


def start_fakes(children: Children, *, chat: bool = True, agent: bool = True) -> dict[str, dict[str, str]]:
    """The fakes the run needs, ready; per provider the api_base, api_key and control URL a client
    needs (the conol fake serves both the chat and the agent-shaped workloads)."""
    children.conol = procs.start_ready("conol_fake", "bench.conol_fake", [], OUT)
    conol_port, conol_ctl, token = children.conol.ready_line
    targets = {
        "conol": {
            "api_base": f"http://127.0.0.1:{conol_port}",
            "api_key": token,
            "control": f"http://127.0.0.1:{conol_ctl}",
        }
    }
    if chat:
        children.openai = procs.start_ready("openai_fake", "bench.openai_fake", [], OUT)
        openai_url = f"http://127.0.0.1:{children.openai.ready_line[0]}"
        targets["openai"] = {
            "api_base": openai_url + "/v1",
            "api_key": "sk-bench-fake",
            "control": openai_url,
        }
    if agent:
        children.anthropic, targets["anthropic"] = agent_mod.start_anthropic_fake(OUT)
        targets["floor"] = dict(agent_mod.FLOOR)
    return targets


def launch_proxies(children: Children, targets: dict[str, dict[str, str]], sizes: dict[str, Any]) -> None:
    if sizes["shared_proxy"]:  # quick: one proxy boot for every provider (CPU is per phase anyway)
        # (the agent-shaped rows' providers too, when they run)
        shared = proxy_mod.launch_proxy(
            "shared", {p: (t["api_base"], t["api_key"]) for p, t in targets.items()}, OUT
        )
        children.proxies = dict.fromkeys(PROVIDERS, shared)
        if "anthropic" in targets:
            children.agent_proxies = dict.fromkeys(agent_mod.PROVIDERS, shared)
    else:
        for provider in PROVIDERS:
            t = targets[provider]
            children.proxies[provider] = proxy_mod.launch_proxy(
                provider, {provider: (t["api_base"], t["api_key"])}, OUT
            )


def launch_sdk_workers(children: Children, targets: dict[str, dict[str, str]], sizes: dict[str, Any]) -> None:
    specs = [
        {
            "provider": p,
            **targets[p],
            "sizes": sizes["sdk"],
            "workload": WORKLOAD.__dict__,
            "parse": p == "conol",
        }
        for p in PROVIDERS
    ]
    if sizes["shared_proxy"]:  # quick: one SDK process too (one litellm import)
        children.workers["conol+openai"] = launch_sdk_worker({"each": specs}, "both")
    else:
        for spec in specs:
            children.workers[spec["provider"]] = launch_sdk_worker(spec, spec["provider"])


def measure(
    children: Children,
    targets: dict[str, dict[str, str]],
    sizes: dict[str, Any],
    only: set[str],
    raw: dict[str, Any],
    started: float,
) -> None:
    """One measurement at a time: the SDK workers, then each proxy, then the worker proxies."""
    for provider, (process, log_path) in list(children.workers.items()):
        print(f"bench: {time.monotonic() - started:4.0f} s  SDK mode, {provider} …", flush=True)
        result = finish_sdk_worker(process, log_path, timeout=400)
        raw["sdk"].update(result.get("each", {provider: result}))
        del children.workers[provider]
    proxies = children.proxies
    for provider, proxy in list(proxies.items()):
        print(f"bench: {time.monotonic() - started:4.0f} s  proxy mode, {provider} …", flush=True)
        psizes = sizes["proxy"]
        last = sum(1 for p in [*proxies.values(), *children.agent_proxies.values()] if p is proxy) == 1
        raw["proxy"][provider] = asyncio.run(
            proxy_mod.run_provider(proxy, provider, targets[provider]["control"], psizes, WORKLOAD, stop=last)
        )
        del proxies[provider]
    if children.agent_proxies:
        agent_sizes = agent_mod.SIZES["quick" if sizes["shared_proxy"] else "full"]
        raw["agent"] = agent_mod.measure(children.agent_proxies, targets, agent_sizes, started)
        children.agent_proxies = {}
    if "workers" in only:
        print(f"bench: {time.monotonic() - started:4.0f} s  proxy workers, 1 vs 2 …", flush=True)
        raw["workers"] = proxy_mod.run_workers(targets["conol"], sizes["workers"], WORKLOAD, OUT)


def save_and_report(raw: dict[str, Any], args: argparse.Namespace, started: float) -> None:
    """The raw results to ``bench/out/run-<id>.json``, the report to stdout and (full runs) RESULTS.md."""
    raw["meta"]["wall"] = time.monotonic() - started
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    raw["meta"]["run_id"] = stamp
    (OUT / f"run-{stamp}.json").write_text(json.dumps(raw))
    report = Report(raw)
    text = report.markdown()
    print("\n" + text + "\n", flush=True)
    if (not args.quick or args.write) and not args.no_write:
        write_results(report, RESULTS)
        print(f"bench: results written to {RESULTS}", flush=True)
    print(
        f"bench: done in {raw['meta']['wall']:.0f} s (raw results: {OUT / f'run-{stamp}.json'})", flush=True
    )


def main() -> int:
    args = parse_args()
    only = set(args.only.split(","))
    sizes = SIZES["quick" if args.quick else "full"]
    OUT.mkdir(exist_ok=True)
    started = time.monotonic()
    raw: dict[str, Any] = {"meta": meta(args), "sdk": {}, "proxy": {}, "agent": {}, "workers": {}}
    print(f"bench: {raw['meta']['mode']} run, logs and raw results in {OUT}", flush=True)
    children = Children()
    try:
        targets = start_fakes(children, chat=bool({"sdk", "proxy"} & only), agent="agent" in only)
        # Everything that only imports (proxies, SDK workers) boots at once; measuring is sequential.
        if "proxy" in only:
            launch_proxies(children, targets, sizes)
        if "agent" in only and not children.agent_proxies:
            agent_sizes = agent_mod.SIZES["quick" if args.quick else "full"]
            children.agent_proxies = agent_mod.launch_proxies(targets, agent_sizes, OUT)
        if "sdk" in only:
            launch_sdk_workers(children, targets, sizes)
        for proxy in {
            id(p): p for p in [*children.proxies.values(), *children.agent_proxies.values()]
        }.values():
            proxy_mod.wait_listening(proxy)
        print(f"bench: everything booted after {time.monotonic() - started:.0f} s", flush=True)
        measure(children, targets, sizes, only, raw, started)
    finally:
        children.stop()
    save_and_report(raw, args, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
