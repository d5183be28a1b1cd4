"""SDK mode: ``litellm.acompletion(..., stream=True)`` in THIS process against a fake in another one.

``python -m bench.sdk '<json spec>'`` runs the phases for one provider and prints ``RESULT <json>``
as its last line. One process per provider, so each one's CPU, RSS and descriptors are its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import sys
import time
import tracemalloc
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import litellm.utils

import litellm_conol

from . import procs
from .alloc_trace import attribute
from .client import Sample, records, run_many
from .workload import Workload, new_tag

MODELS = {"openai": "openai/bench-model"}


_ready = False


def setup() -> None:
    global _ready
    if _ready:
        return
    _ready = True
    litellm.suppress_debug_info = True
    litellm_conol.register()
    litellm.utils.custom_llm_setup()


class Sdk:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.provider: str = spec["provider"]
        self.model = MODELS.get(self.provider) or f"{self.provider}/claude-haiku-4-5"
        self.kw = {"api_base": spec["api_base"], "api_key": spec["api_key"]}
        self.control: str = spec["control"]

    async def one(self, work: Workload, tag: str) -> Sample:
        sample = Sample(tag, time.time())
        parts: list[str] = []
        stream = await litellm.acompletion(
            model=self.model,
            messages=[{"role": "user", "content": work.prompt(tag)}],
            stream=True,
            **self.kw,
        )
        async for chunk in stream:
            sample.chunks += 1
            content = chunk.choices[0].delta.content if chunk.choices else None
            if content:
                if sample.first is None:
                    sample.first = time.time()
                parts.append(content)
        sample.end = time.time()
        text = "".join(parts)
        sample.chars, sample.ok = len(text), text == work.text
        return sample

    async def phase(self, name: str, work: Workload, n: int, concurrency: int) -> dict[str, Any]:
        tags = [new_tag(f"{self.provider}-{name}-") for _ in range(n)]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        samples = await run_many(lambda tag: self.one(work, tag), tags, concurrency)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        await asyncio.sleep(0.3)  # background logging tasks of the last requests
        cpu2 = time.process_time()
        return {
            "name": name,
            "workload": work.__dict__,
            "n": n,
            "concurrency": concurrency,
            "cpu": cpu2 - cpu0,
            "cpu_in_requests": cpu1 - cpu0,
            "wall": wall1 - wall0,
            "samples": [s.to_json() for s in samples],
            "records": records(self.control),
        }

    async def memory(self, work: Workload, k: int, handler: str = "", trace: bool = False) -> dict[str, Any]:
        """RSS growth while ``k`` streams are open at once (all have received their first piece).

        ``handler``: call that conol handler's ``astreaming`` directly (no LiteLLM wrapper), to
        separate our own per-stream memory from LiteLLM's. ``trace``: also attribute the Python
        allocations live while the streams are open to packages (tracemalloc; slows the run, so its
        RSS numbers are not the headline ones).
        """
        gc.collect()
        await asyncio.sleep(0.5)
        snap0 = None
        if trace:
            tracemalloc.start(8)
            snap0 = tracemalloc.take_snapshot()
        base = procs.rss_kb(os.getpid())
        fds0 = procs.fd_counts(os.getpid())
        counter = _OpenStreams(k)
        tags = [new_tag(f"{self.provider}-mem-") for _ in range(k)]
        task = asyncio.ensure_future(run_many(lambda tag: self._held(work, tag, handler, counter), tags, k))
        try:
            await asyncio.wait_for(counter.all_open.wait(), timeout=work.hold)
            all_open_at = time.time()
        except TimeoutError:
            all_open_at = None
        await asyncio.sleep(0.2)
        peak = procs.rss_kb(os.getpid())
        fds_open = procs.fd_counts(os.getpid())
        open_at_sample = counter.opened
        samples, by_package = await _end_streams(task, snap0, k)
        gc.collect()
        await asyncio.sleep(0.5)
        after = procs.rss_kb(os.getpid())
        return {
            "k": k,
            "hold": work.hold,
            "opened": open_at_sample,
            "all_open": open_at_sample == k,
            "all_open_within_hold": all_open_at is not None,
            "rss_base_kb": base,
            "rss_open_kb": peak,
            "rss_after_kb": after,
            "per_stream_kb": (peak - base) / k,
            "fds_base": fds0,
            "fds_open": fds_open,
            "errors": sum(1 for s in samples if s.error),
            "ok": sum(1 for s in samples if s.ok),
            "records": records(self.control),
            "by_package_kb": by_package,
        }

    async def _held(self, work: Workload, tag: str, handler: str, counter: _OpenStreams) -> Sample:
        """One stream of the memory benchmark (``work.hold`` keeps it open after its first piece)."""
        sample = Sample(tag, time.time())
        messages = [{"role": "user", "content": work.prompt(tag)}]
        if handler:
            stream: Any = litellm_conol.conol_llm.astreaming(
                "claude-haiku-4-5",
                messages,
                self.kw["api_base"],
                api_key=self.kw["api_key"],
                optional_params={},
                timeout=600.0,
            )
        else:
            stream = await litellm.acompletion(model=self.model, messages=messages, stream=True, **self.kw)
        parts: list[str] = []
        async for chunk in stream:
            content = chunk.choices[0].delta.content if chunk.choices else None
            if content:
                if sample.first is None:
                    sample.first = time.time()
                    counter.first_piece()
                parts.append(content)
        sample.end = time.time()
        sample.ok = "".join(parts) == work.text
        return sample

    async def one_handler(self, work: Workload, tag: str) -> Sample:
        """The handler alone (``astreaming`` as LiteLLM calls it), without LiteLLM's wrapper."""
        handler = litellm_conol.conol_llm
        sample = Sample(tag, time.time())
        parts: list[str] = []
        stream = handler.astreaming(
            "claude-haiku-4-5",
            [{"role": "user", "content": work.prompt(tag)}],
            self.kw["api_base"],
            api_key=self.kw["api_key"],
            optional_params={},
            timeout=600.0,
        )
        async for chunk in stream:
            content = chunk.choices[0].delta.content if chunk.choices else None
            if content:
                if sample.first is None:
                    sample.first = time.time()
                parts.append(content)
        sample.end = time.time()
        text = "".join(parts)
        sample.chars, sample.ok = len(text), text == work.text
        return sample

    async def descriptors(
        self, work: Workload, n: int, concurrency: int, *, direct: bool = False
    ) -> dict[str, Any]:
        pid = os.getpid()
        before = {**procs.fd_counts(pid), "pool": self._pool()}
        done = 0
        errors = 0
        examples: list[str] = []
        series: list[dict[str, Any]] = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        batch = min(1000, max(1, n // 3))  # at least three points: a leak grows batch after batch
        one = self.one_handler if direct else self.one
        while done < n:
            size = min(batch, n - done)
            tags = [new_tag(f"{self.provider}-fd-") for _ in range(size)]
            samples = await run_many(lambda tag: one(work, tag), tags, concurrency)
            bad = [s for s in samples if s.error or not s.ok]
            errors += len(bad)
            examples += [s.error or f"truncated: {s.chars} of {work.chars} chars" for s in bad][
                : 5 - len(examples)
            ]
            done += size
            records(self.control)  # clear the fake as we go
            series.append({"done": done, **procs.fd_counts(pid), "pool": self._pool()})
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        await asyncio.sleep(0.5)
        gc.collect()
        after = {**procs.fd_counts(pid), "pool": self._pool()}
        return {
            "n": n,
            "concurrency": concurrency,
            "before": before,
            "after": after,
            "errors": errors,
            "examples": examples,
            "series": series,
            "cpu": cpu,
            "wall": wall,
        }

    def _pool(self) -> int | None:
        """Connections in our shared client's pool (openai's pool is LiteLLM's, not counted)."""
        if self.provider == "openai":
            return None
        from litellm_conol.client.aiohttp_stream import pooled_connections
        from litellm_conol.client.pool import shared_client

        return pooled_connections(shared_client())


class _OpenStreams:
    """How many of ``k`` streams have received their first piece; ``all_open`` is set once all have."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.opened = 0
        self.all_open = asyncio.Event()

    def first_piece(self) -> None:
        self.opened += 1
        if self.opened == self.k:
            self.all_open.set()


async def _end_streams(
    task: asyncio.Future[list[Sample]], snap0: tracemalloc.Snapshot | None, k: int
) -> tuple[list[Sample], dict[str, float]]:
    """Returns (samples, KB per stream by package). Traced (``snap0`` given): attribute what is live
    now, then drop the streams, whose samples are not needed. Otherwise: let the streams finish."""
    if snap0 is None:
        return await task, {}
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    by_package = attribute(snap1.compare_to(snap0, "traceback"), k)
    task.cancel()  # the streams have been seen open: drop them (the clients disconnect)
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.5)
    return [], by_package


def _log(what: str, t0: list[float]) -> None:
    now = time.monotonic()
    print(f"sdk: {now - t0[0]:5.1f} s  {what}", file=sys.stderr, flush=True)


def _subset(spec: dict[str, Any], sizes: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``spec["only"]`` (for development, e.g. ``{"only": ["parse"]}``): the spec and sizes that run
    just those parts (seq, ends, memory, fd, parse)."""
    only = set(spec.get("only") or ())
    if not only:
        return spec, sizes
    sizes = {
        **sizes,
        "seq": sizes["seq"] if "seq" in only else 0,
        "memory": sizes["memory"] if "memory" in only else 0,
        "fd_requests": sizes["fd_requests"] if "fd" in only else 0,
        "fd_handler_requests": sizes.get("fd_handler_requests", 0) if "fd" in only else 0,
    }
    return {**spec, "ends": "ends" in only, "parse": "parse" in only}, sizes


async def _latency_phases(
    sdk: Sdk, spec: dict[str, Any], sizes: dict[str, Any], base: Workload
) -> dict[str, Any]:
    """Warm-up, the sequential phase (profiled when ``spec["profile"]`` names a file), conol's end phases."""
    phases: dict[str, Any] = {}
    await sdk.phase("warmup", base, sizes["warmup"], 1)
    profiler = None
    if spec.get("profile"):
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    if sizes["seq"]:
        phases["seq"] = await sdk.phase("seq", base, sizes["seq"], 1)
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(spec["profile"])
    if sdk.provider.startswith("conol") and spec.get("ends", True):
        extras: dict[str, dict[str, Any]] = {"late": {"tail": 3.0}}
        for end in sizes.get("end_kinds", ("status", "commit", "early", "late")):
            work = base.with_(end="status" if end == "late" else end, **extras.get(end, {}))
            phases[f"end_{end}"] = await sdk.phase(
                f"end_{end}", work, sizes["ends"], sizes["ends_concurrency"]
            )
    return phases


async def amain(spec: dict[str, Any]) -> dict[str, Any]:
    setup()
    t0 = [time.monotonic()]
    sdk = Sdk(spec)
    spec, sizes = _subset(spec, spec["sizes"])
    base = Workload(**spec["workload"])
    out: dict[str, Any] = {"provider": sdk.provider, "pid": os.getpid()}
    out["phases"] = await _latency_phases(sdk, spec, sizes, base)
    _log("latency and end phases", t0)
    if sizes.get("memory"):
        out["memory"] = await sdk.memory(base.with_(hold=sizes["hold"]), sizes["memory"])
        if sizes.get("memory_trace"):
            out["memory_trace"] = await sdk.memory(
                base.with_(hold=30.0),
                sizes["memory_trace"],
                trace=True,  # sampled once all are open
            )
    _log("memory", t0)
    fast = Workload(chars=200, n=2, delay=0.0, lead=0.0, end="done")
    if sizes.get("fd_handler_requests") and sdk.provider.startswith("conol"):
        out["descriptors_handler"] = await sdk.descriptors(
            fast,
            sizes["fd_handler_requests"],
            sizes.get("fd_handler_concurrency", sizes["fd_concurrency"]),
            direct=True,
        )
    if sizes.get("fd_requests"):
        out["descriptors"] = await sdk.descriptors(fast, sizes["fd_requests"], sizes["fd_concurrency"])
    _log("descriptors", t0)
    if spec.get("parse") and sdk.provider.startswith("conol"):
        from . import parse

        out["parse"] = await parse.end_to_end(spec, sizes)
        _log("parse", t0)
    return out


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("wait_for_go"):
        setup()  # everything imported and registered; measuring starts on "go"
        sys.stdin.readline()
    if "each" in spec:  # several providers, one after the other, in this one process (quick runs)
        result: dict[str, Any] = {"each": {}}
        for one in spec["each"]:
            result["each"][one["provider"]] = asyncio.run(amain({**spec, **one}))
    else:
        result = asyncio.run(amain(spec))
    sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)  # skip LiteLLM's atexit work (seconds); the fakes and pools need no goodbye


if __name__ == "__main__":
    main()
