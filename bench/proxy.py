"""Proxy mode: a real ``litellm.proxy.proxy_cli`` subprocess, one per provider (so CPU, RSS and
descriptors are that provider's alone), loaded by a lean aiohttp client in the orchestrator.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from . import procs
from .client import Sample, records, run_many
from .workload import Workload, new_tag

MASTER_KEY = "sk-bench-master"
FIRST_PARTY = ("openai", "anthropic")  # LiteLLM's own providers
# the custom handlers: ours, and the benchmark's provider that does no work of its own
HANDLERS = {"conol": "litellm_conol.conol_llm", "floor": "bench.floor_llm.floor_llm"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def model_name(provider: str) -> str:
    return f"bench-{provider}"


def config_yaml(deployments: dict[str, tuple[str, str]]) -> str:
    """A proxy config with a deployment ``bench-<provider>`` for each ``{provider: (api_base, api_key)}``
    (an empty api_base: none, as for ``floor/…``)."""
    models, custom = [], []
    for provider, (api_base, api_key) in deployments.items():
        model = "openai/bench-model" if provider == "openai" else f"{provider}/claude-haiku-4-5"
        params = f"      model: {model}\n"
        if api_base:
            params += f'      api_base: "{api_base}"\n      api_key: "{api_key}"\n'
        if provider == "floor":
            params += (
                "      drop_params: true\n"  # LiteLLM refuses `thinking` for a provider it does not know
            )
        models.append(f"  - model_name: {model_name(provider)}\n    litellm_params:\n{params}")
        if provider not in FIRST_PARTY:
            custom.append(f"    - provider: {provider}\n      custom_handler: {HANDLERS[provider]}\n")
    providers = "  custom_provider_map:\n" + "".join(custom) if custom else ""
    return (
        "model_list:\n" + "".join(models) + f"litellm_settings:\n{providers}  telemetry: false\n"
        "  suppress_debug_info: true\ngeneral_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n"
    )


@dataclass
class Proxy:
    name: str
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu(self) -> float:
        return procs.group_cpu_seconds(self.pid)

    def rss_kb(self) -> int:
        return procs.group_rss_kb(self.pid)

    def fds(self) -> dict[str, int]:
        return procs.group_fd_counts(self.pid)

    def stop(self) -> None:
        procs.stop_group(self.process)


def launch_proxy(
    name: str, deployments: dict[str, tuple[str, str]], out_dir: Path, workers: int = 1
) -> Proxy:
    """Start a proxy serving ``deployments`` (returns at once: ``wait_listening`` before use)."""
    config = out_dir / f"proxy_{name}.yaml"
    config.write_text(config_yaml(deployments))
    port = free_port()
    log_path = out_dir / f"proxy_{name}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - handed to the child
    command = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    if workers > 1:
        # uvicorn kills a worker that does not answer its ping within 5 s, and a worker importing
        # LiteLLM cannot answer: on a loaded machine the second worker was restarted in a loop.
        command += ["--num_workers", str(workers), "--timeout_worker_healthcheck", "60"]
        # each worker's startup line (wait_workers), and still no line per request
        command += ["--log_config", str(_startup_log_config(out_dir))]
    process = subprocess.Popen(
        command,
        cwd=procs.ROOT,
        env=procs.child_env(LITELLM_MASTER_KEY=MASTER_KEY, LITELLM_LOG="ERROR"),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    return Proxy(name, process, f"http://127.0.0.1:{port}", log_path)


def wait_listening(proxy: Proxy, timeout: float = 180.0) -> None:
    port = int(proxy.base_url.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proxy.process.poll() is not None:
            raise RuntimeError(
                f"proxy exited with {proxy.process.returncode}: {proxy.log_path.read_text()[-3000:]}"
            )
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.2)
    raise TimeoutError(f"proxy not listening after {timeout} s: {proxy.log_path.read_text()[-3000:]}")


def _startup_log_config(out_dir: Path) -> Path:
    """uvicorn logging: its lifecycle lines (INFO), no access log."""
    handler = {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"default": handler},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": ["default"], "level": "WARNING", "propagate": False},
        },
    }
    path = out_dir / "uvicorn_startup_log.json"
    path.write_bytes(orjson.dumps(config))
    return path


def wait_workers(proxy: Proxy, workers: int, timeout: float = 180.0) -> None:
    """Until ``workers`` uvicorn workers have started (each logs its startup line once)."""
    if workers <= 1:
        return  # listening is ready: a single process accepts only once started
    deadline = time.monotonic() + timeout
    while proxy.log_path.read_text(errors="replace").count("Application startup complete.") < workers:
        if proxy.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{workers} proxy workers did not start: {proxy.log_path.read_text()[-3000:]}")
        time.sleep(0.2)


def start_proxy(
    name: str,
    deployments: dict[str, tuple[str, str]],
    out_dir: Path,
    timeout: float = 180.0,
    workers: int = 1,
) -> Proxy:
    proxy = launch_proxy(name, deployments, out_dir, workers)
    try:
        wait_listening(proxy, timeout)
        wait_workers(proxy, workers, timeout)
    except BaseException:
        proxy.stop()
        raise
    return proxy


class Load:
    """Streaming chat completions against the proxy, one aiohttp session for the whole run."""

    def __init__(self, proxy: Proxy, provider: str, control: str) -> None:
        self.proxy = proxy
        self.provider = provider
        self.control = control
        self.url = proxy.base_url + "/v1/chat/completions"
        self.headers = {"Authorization": f"Bearer {MASTER_KEY}", "Content-Type": "application/json"}
        self.session: aiohttp.ClientSession | None = None
        self.opened = 0
        self.on_open: asyncio.Event | None = None
        self.open_target = 0

    async def __aenter__(self) -> Load:
        # a new connection per request: reusing idle keep-alive connections races with uvicorn closing
        # them (5 s keep-alive), which shows up as resets that are the load generator's, not the proxy's
        connector = aiohttp.TCPConnector(limit=0, force_close=True)
        self.session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.session is not None:
            await self.session.close()

    async def one(self, work: Workload, tag: str) -> Sample:
        assert self.session is not None
        sample = Sample(tag, time.time())
        body = {
            "model": model_name(self.provider),
            "stream": True,
            "messages": [{"role": "user", "content": work.prompt(tag)}],
        }
        parts: list[str] = []
        async with self.session.post(self.url, data=orjson.dumps(body), headers=self.headers) as response:
            if response.status != 200:
                sample.error = f"HTTP {response.status}: {(await response.text())[:300]}"
                return sample
            async for line in response.content:
                if not line.startswith(b"data: "):
                    continue
                payload = line[6:].strip()
                if payload == b"[DONE]":
                    continue
                chunk = orjson.loads(payload)
                if "error" in chunk:
                    sample.error = str(chunk["error"])[:300]
                    continue
                sample.chunks += 1
                choices = chunk.get("choices") or []
                content = (choices[0].get("delta") or {}).get("content") if choices else None
                if content:
                    if sample.first is None:
                        sample.first = time.time()
                        self._opened()
                    parts.append(content)
        sample.end = time.time()
        text = "".join(parts)
        sample.chars, sample.ok = len(text), text == work.text
        return sample

    def _opened(self) -> None:
        self.opened += 1
        if self.on_open is not None and self.opened >= self.open_target:
            self.on_open.set()

    async def phase(self, name: str, work: Workload, n: int, concurrency: int) -> dict[str, Any]:
        tags = [new_tag(f"proxy-{self.provider}-{name}-") for _ in range(n)]
        fake0 = records_cpu(self.control)
        cpu0, wall0 = self.proxy.cpu(), time.perf_counter()
        samples = await run_many(lambda tag: self.one(work, tag), tags, concurrency)
        wall = time.perf_counter() - wall0
        await asyncio.sleep(0.3)
        cpu = self.proxy.cpu() - cpu0
        fake_cpu = records_cpu(self.control) - fake0
        return {
            "name": name,
            "workload": work.__dict__,
            "n": n,
            "concurrency": concurrency,
            "cpu": cpu,
            "wall": wall,
            "fake_cpu_total": fake_cpu,
            "samples": [s.to_json() for s in samples],
            "records": records(self.control),
        }

    async def memory(self, work: Workload, k: int) -> dict[str, Any]:
        tags = [new_tag(f"proxy-{self.provider}-mem-") for _ in range(k)]
        result = await held_open(
            self, lambda: run_many(lambda tag: self.one(work, tag), tags, k), k, work.hold
        )
        return {**result, "records": records(self.control)}


async def held_open(
    load: Any, streams: Callable[[], Awaitable[list[Sample]]], k: int, hold: float
) -> dict[str, Any]:
    """RSS and descriptors of ``load.proxy`` before and while the ``k`` streams ``streams()`` opens are
    all open (each counts itself in ``load.opened`` at its first piece, then waits ``hold`` s)."""
    proxy: Proxy = load.proxy
    await asyncio.sleep(0.5)
    base, fds0 = proxy.rss_kb(), proxy.fds()
    load.opened, load.open_target, load.on_open = 0, k, asyncio.Event()
    task = asyncio.ensure_future(streams())
    try:
        await asyncio.wait_for(load.on_open.wait(), timeout=hold)
        all_open = True
    except TimeoutError:
        all_open = False
    await asyncio.sleep(0.2)
    peak, fds_open, opened = proxy.rss_kb(), proxy.fds(), load.opened
    samples = await task
    load.on_open = None
    await asyncio.sleep(0.5)
    return {
        "k": k,
        "hold": hold,
        "opened": opened,
        "all_open": opened == k,
        "all_open_within_hold": all_open,
        "rss_base_kb": base,
        "rss_open_kb": peak,
        "rss_after_kb": proxy.rss_kb(),
        "per_stream_kb": (peak - base) / k,
        "fds_base": fds0,
        "fds_open": fds_open,
        "errors": sum(1 for s in samples if s.error),
        "ok": sum(1 for s in samples if s.ok),
    }


def records_cpu(control: str) -> float:
    from .client import control as call

    return float(call(control, "/bench/cpu")["cpu"])


async def run_provider(
    proxy: Proxy, provider: str, control: str, sizes: dict[str, Any], base: Workload, *, stop: bool = True
) -> dict[str, Any]:
    """Every proxy phase for ``provider`` against an already listening ``proxy`` (then stopped)."""
    result: dict[str, Any] = {"provider": provider, "proxy": proxy.name, "phases": {}}
    try:
        async with Load(proxy, provider, control) as load:
            await load.phase("warmup", base, sizes["warmup"], 1)
            if sizes["warmup_c"]:
                await load.phase("warmup_c", base, sizes["warmup_c"], min(50, sizes["warmup_c"]))
            await asyncio.sleep(0.5)
            result["fds_before"] = proxy.fds()
            result["rss_before_kb"] = proxy.rss_kb()
            for concurrency, n in sizes["levels"]:
                if concurrency > 1 and sizes.get("memory") and "memory" not in result:
                    # before the high-concurrency rows: their allocations would hide the growth
                    result["memory"] = await load.memory(base.with_(hold=sizes["hold"]), sizes["memory"])
                result["phases"][f"c{concurrency}"] = await load.phase(
                    f"c{concurrency}", base, n, concurrency
                )
            if sizes.get("memory") and "memory" not in result:
                result["memory"] = await load.memory(base.with_(hold=sizes["hold"]), sizes["memory"])
            await asyncio.sleep(0.5)
            result["fds_after"] = proxy.fds()
            result["rss_after_kb"] = proxy.rss_kb()
    finally:
        if stop:
            proxy.stop()
    with contextlib.suppress(OSError):
        result["log_tail"] = proxy.log_path.read_text(errors="replace")[-1500:]
    return result


def run_workers(
    target: dict[str, str], sizes: dict[str, Any], base: Workload, out_dir: Path
) -> dict[str, Any]:
    """Throughput of ``conol/…`` through one proxy with 1, then 2 (…) uvicorn workers: the same
    streams at the same concurrency, one proxy at a time (they would compete for the cores)."""
    concurrency, n = sizes["level"]
    result: dict[str, Any] = {}
    for workers in sizes["counts"]:
        deployments = {"conol": (target["api_base"], target["api_key"])}
        proxy = start_proxy(f"conol_w{workers}", deployments, out_dir, workers=workers)
        result[str(workers)] = asyncio.run(
            _workers_phase(proxy, target["control"], sizes, base, n, concurrency)
        )
    return result


async def _workers_phase(
    proxy: Proxy, control: str, sizes: dict[str, Any], base: Workload, n: int, concurrency: int
) -> dict[str, Any]:
    try:
        async with Load(proxy, "conol", control) as load:
            # warm every worker: each imports and caches on its first requests
            await load.phase("warmup", base, sizes["warmup"], min(sizes["warmup"], 20))
            await asyncio.sleep(0.5)
            return await load.phase(f"c{concurrency}", base, n, concurrency)
    finally:
        proxy.stop()
