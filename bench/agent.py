"""The agent-shaped benchmark: Claude Code's requests through the proxy's ``/v1/messages``,
``conol/…`` against LiteLLM's own ``anthropic/…`` provider on a fake Anthropic server that streams
the same answer at the same pace (``bench/anthropic_fake.py``).

``make bench`` runs it as part of the whole suite (the "Agent-shaped" sections of the report);
alone, for a quicker look (it prints, and never writes ``bench/RESULTS.md``)::

    python -m bench.agent            # ~2.5 min: c = 1, 10, 50, memory, 20-turn conversations
    python -m bench.agent --quick    # < 1.5 min: c = 1, 10 and the conversations, one shared proxy
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import time
from typing import Any

from . import procs
from . import proxy as proxy_mod
from .agent_load import AgentLoad
from .workload import Workload

# floor/…: a custom provider that does no work (bench/floor_llm.py): what LiteLLM itself spends on
# any custom provider's /v1/messages traffic, the part of conol/…'s cost that is not ours.
PROVIDERS = ("conol", "anthropic", "floor")
FLOOR = {"api_base": "", "api_key": "", "control": ""}
# The standard workload's answer (bench/__main__.py), ended as an agent's turn: a tool call.
AGENT_WORK = Workload(chars=1000, n=20, delay=0.025, lead=0.05, end="call")

SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "warmup": 3,
        "warmup_c": 10,
        "levels": [(1, 10), (10, 30), (50, 100)],
        "memory": 50,
        "hold": 5.0,
        "conversations": 10,
        "shared_proxy": False,
    },
    "quick": {
        "warmup": 1,
        "warmup_c": 0,
        "levels": [(1, 3), (10, 10)],
        "memory": 0,
        "hold": 0,
        "conversations": 2,
        "shared_proxy": True,
    },
}


def start_anthropic_fake(out_dir: Any) -> tuple[procs.Child, dict[str, str]]:
    """The fake Anthropic server, ready; what a client needs of it."""
    child = procs.start_ready("anthropic_fake", "bench.anthropic_fake", [], out_dir)
    url = f"http://127.0.0.1:{child.ready_line[0]}"
    return child, {"api_base": url, "api_key": "sk-ant-bench-fake", "control": url}


def launch_proxies(
    targets: dict[str, dict[str, str]], sizes: dict[str, Any], out_dir: Any
) -> dict[str, proxy_mod.Proxy]:
    """One proxy per provider (``shared_proxy``: one for both); returns at once, before listening."""
    deployments = {p: (targets[p]["api_base"], targets[p]["api_key"]) for p in PROVIDERS}
    if sizes["shared_proxy"]:
        shared = proxy_mod.launch_proxy("agent_shared", deployments, out_dir)
        return dict.fromkeys(PROVIDERS, shared)
    return {p: proxy_mod.launch_proxy(f"agent_{p}", {p: deployments[p]}, out_dir) for p in PROVIDERS}


async def run_provider(
    proxy: proxy_mod.Proxy, provider: str, control: str, sizes: dict[str, Any]
) -> dict[str, Any]:
    """Every agent phase for ``provider`` against an already listening proxy: warm-up, the memory of
    open streams (before the loaded rows, whose allocations would hide the growth), each
    concurrency, then the conversations."""
    result: dict[str, Any] = {"provider": provider, "proxy": proxy.name, "phases": {}}
    async with AgentLoad(proxy, provider, control, AGENT_WORK) as load:
        await load.phase("warmup", sizes["warmup"], 1)
        if sizes["warmup_c"]:
            await load.phase("warmup_c", sizes["warmup_c"], sizes["warmup_c"])
        if sizes["memory"]:
            result["memory"] = await load.memory(sizes["memory"], sizes["hold"])
        for concurrency, n in sizes["levels"]:
            result["phases"][f"c{concurrency}"] = await load.phase(f"c{concurrency}", n, concurrency)
        await asyncio.sleep(1.0)  # what the loaded rows left running is not turn 1's
        result["turns"] = await load.turns(sizes["conversations"])
    return result


def measure(
    proxies: dict[str, proxy_mod.Proxy],
    targets: dict[str, dict[str, str]],
    sizes: dict[str, Any],
    started: float,
) -> dict[str, Any]:
    """Each provider in turn (its proxy stopped after, unless shared with the next)."""
    out: dict[str, Any] = {}
    for index, provider in enumerate(PROVIDERS):
        print(f"bench: {time.monotonic() - started:4.0f} s  agent-shaped, {provider} …", flush=True)
        proxy = proxies[provider]
        try:
            out[provider] = asyncio.run(run_provider(proxy, provider, targets[provider]["control"], sizes))
        finally:
            if proxy not in [proxies[p] for p in PROVIDERS[index + 1 :]]:
                proxy.stop()
    return out


def main() -> int:
    from .__main__ import OUT, Children, meta, start_fakes
    from .report import Report

    parser = argparse.ArgumentParser(prog="python -m bench.agent", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run: c = 1 and 10, one shared proxy")
    args = parser.parse_args()
    sizes = SIZES["quick" if args.quick else "full"]
    OUT.mkdir(exist_ok=True)
    started = time.monotonic()
    children = Children()
    raw: dict[str, Any] = {"meta": meta(args), "sdk": {}, "proxy": {}, "workers": {}}
    raw["meta"]["mode"] = "agent" + (" quick" if args.quick else "")
    try:
        targets = start_fakes(children, chat=False)
        proxies = launch_proxies(targets, sizes, OUT)
        children.proxies = {f"agent_{p}": proxy for p, proxy in proxies.items()}
        for proxy in {id(p): p for p in proxies.values()}.values():
            proxy_mod.wait_listening(proxy)
        raw["agent"] = measure(proxies, targets, sizes, started)
    finally:
        children.stop()
    raw["meta"]["wall"] = time.monotonic() - started
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (OUT / f"agent-{stamp}.json").write_text(json.dumps(raw))
    print("\n" + Report(raw).markdown() + "\n", flush=True)
    print(
        f"bench: done in {raw['meta']['wall']:.0f} s (raw results: {OUT / f'agent-{stamp}.json'})", flush=True
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
