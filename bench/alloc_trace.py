"""Who owns the memory a set of open streams holds: tracemalloc differences attributed to packages."""

from __future__ import annotations

import tracemalloc

_OWNERS = (  # (package, path fragment): the first match from the allocating frame outwards owns it
    ("ours (litellm_conol)", "/litellm_conol/"),
    ("benchmark client", "/bench/"),
    ("httpx stack", "/httpx/"),
    ("httpx stack", "/httpcore/"),
    ("httpx stack", "/h11/"),
    ("httpx stack", "/httpx_sse/"),
    ("httpx stack", "/anyio/"),
    ("openai SDK", "/openai/"),
    ("openai SDK", "/httpx2/"),
    ("openai SDK", "/httpcore2/"),
    ("aiohttp", "/aiohttp/"),
    ("litellm", "/litellm/"),
)


def attribute(diffs: list[tracemalloc.StatisticDiff], k: int) -> dict[str, float]:
    """KB per stream of the allocations that appeared, by the innermost frame with a known owner
    (pydantic, asyncio and the stdlib are attributed to whoever called them)."""
    out: dict[str, float] = {}
    for diff in diffs:
        if diff.size_diff <= 0:
            continue
        owner = "other (stdlib, pydantic, asyncio with no owner above)"
        for frame in reversed(diff.traceback):  # the allocating frame first (tracebacks are oldest-first)
            hit = next((name for name, part in _OWNERS if part in frame.filename), None)
            if hit:
                owner = hit
                break
        out[owner] = out.get(owner, 0.0) + diff.size_diff / 1024 / k
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))
