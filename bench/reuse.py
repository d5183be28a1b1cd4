"""Session reuse on vs off: a 20-turn Claude-Code-shaped agent task against the fake conol.

    python -m bench.reuse            # prints the table
    python -m bench.reuse --write    # and appends it to bench/RESULTS.md

The conversation is what Claude Code sends for a task of 19 tool calls and an answer: a long
system prompt (16 KB), 12 tool definitions, and a 2 KB tool result after each call; each turn is one
``litellm.acompletion`` (in process, against ``FakeConol`` on 127.0.0.1, scenario ``agent_loop``).
Measured per turn: bytes POSTed to conol (the JSON bodies of create, turn and ``/model`` calls, as
compact JSON), sessions created so far, and the turn's wall time; reuse on (default) and off
(``session_reuse: off``), the same conversation otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

import litellm_conol
from litellm_conol.client._bindings import clear_stores
from litellm_conol.fake import FakeConol

TURNS = 20
REPEATS = 3
RESULTS = Path(__file__).with_name("RESULTS.md")
SYSTEM = ("You are Claude Code, Anthropic's official CLI for Claude. " * 280)[:16_000]


def tools() -> list[dict[str, Any]]:
    names = [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
        "LS",
        "TodoWrite",
        "WebFetch",
        "Task",
        "NotebookEdit",
    ]
    specs = [
        {
            "type": "function",
            "function": {
                "name": "run_step",
                "description": "Run one step of the task.",
                "parameters": {
                    "type": "object",
                    "properties": {"step": {"type": "integer"}},
                    "required": ["step"],
                },
            },
        }
    ]
    for name in names:
        properties = {
            f"arg{i}": {"type": "string", "description": f"{name} argument {i}. " * 6} for i in range(5)
        }
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"The {name} tool. " * 30,
                    "parameters": {"type": "object", "properties": properties},
                },
            }
        )
    return specs


def tool_output(step: int) -> str:
    line = f"step {step:02d}: drwxr-xr-x  5 user staff  160 Dec  4 10:00 src/module_{step:02d}\n"
    return (line * (2048 // len(line) + 1))[:2048]


def body_bytes(record: Any) -> int:
    return len(json.dumps(record.body, separators=(",", ":"), ensure_ascii=False).encode())


async def conversation(fake: FakeConol, reuse: str) -> list[dict[str, float]]:
    fake.reset()
    clear_stores()
    kw = {"api_base": fake.base_url, "api_key": fake.token, "model": "conol/claude-haiku-4-5"}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"[[fake:agent_loop calls={TURNS - 1}]] Refactor the project."},
    ]
    rows = []
    for turn in range(1, TURNS + 1):
        seen = len(fake.requests)
        started = time.perf_counter()
        response = await litellm.acompletion(
            **kw, messages=messages, tools=tools(), extra_body={"session_reuse": reuse}
        )
        elapsed = time.perf_counter() - started
        message = response.choices[0].message
        posted = [r for r in fake.requests[seen:] if r.method == "POST"]
        rows.append(
            {
                "turn": turn,
                "bytes": sum(body_bytes(r) for r in posted),
                "sessions": len(fake.sessions),
                "seconds": elapsed,
                "reused": bool((message.provider_specific_fields or {}).get("session_reused")),
            }
        )
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or ():
            messages.append({"role": "tool", "tool_call_id": call.id, "content": tool_output(turn)})
        if not message.tool_calls:
            assert message.content == f"Finished after {TURNS - 1} tool call(s).", message.content
    return rows


def table(on: list[dict[str, float]], off: list[dict[str, float]]) -> str:
    lines = [
        "| turn | bytes POSTed, reuse on | reuse off | sessions so far, on | off | turn time on, median of "
        f"{REPEATS} (ms) | off (ms) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for a, b in zip(on, off, strict=True):
        lines.append(
            f"| {a['turn']:.0f} | {a['bytes']:,.0f} | {b['bytes']:,.0f} "
            f"| {a['sessions']:.0f} | {b['sessions']:.0f} "
            f"| {a['seconds'] * 1000:.0f} | {b['seconds'] * 1000:.0f} |"
        )
    total_on, total_off = sum(r["bytes"] for r in on), sum(r["bytes"] for r in off)
    lines.append(
        f"| **total** | **{total_on:,.0f}** | **{total_off:,.0f}** | **{on[-1]['sessions']:.0f}** "
        f"| **{off[-1]['sessions']:.0f}** | {sum(r['seconds'] for r in on) * 1000:.0f} "
        f"| {sum(r['seconds'] for r in off) * 1000:.0f} |"
    )
    added = [(a["seconds"] - b["seconds"]) * 1000 for a, b in zip(on[1:], off[1:], strict=True)]
    lines += [
        "",
        f"Bytes at turn {TURNS}: {total_on:,.0f} vs {total_off:,.0f} in total "
        f"({total_off / total_on:.1f}x fewer); "
        f"sessions {on[-1]['sessions']:.0f} vs {off[-1]['sessions']:.0f}; reused turns "
        f"{sum(1 for r in on if r['reused'])} of {TURNS}. Added time per turn (on - off, turns 2-{TURNS}): "
        f"median {statistics.median(added):+.0f} ms, min {min(added):+.0f}, max {max(added):+.0f}.",
    ]
    return "\n".join(lines)


async def amain() -> str:
    litellm.suppress_debug_info = True
    litellm_conol.register()
    runs: dict[str, list[list[dict[str, float]]]] = {"auto": [], "off": []}
    async with FakeConol() as fake:
        await conversation(fake, "auto")  # warm-up: imports, tokenizer, pool
        for _ in range(REPEATS):  # interleaved, so load on the machine hits both alike
            for mode in ("auto", "off"):
                runs[mode].append(await conversation(fake, mode))
    return table(per_turn_median(runs["auto"]), per_turn_median(runs["off"]))


def per_turn_median(runs: list[list[dict[str, float]]]) -> list[dict[str, float]]:
    """Bytes and sessions are the same in every run; the time is each turn's median over the runs."""
    rows = []
    for turn_rows in zip(*runs, strict=True):
        row = dict(turn_rows[0])
        row["seconds"] = statistics.median(r["seconds"] for r in turn_rows)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reuse")
    parser.add_argument("--write", action="store_true", help="append the table to bench/RESULTS.md")
    args = parser.parse_args()
    result = asyncio.run(amain())
    print(result)
    if args.write:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        section = (
            f"\n\n## Session reuse, {stamp}\n\n"
            f"`python -m bench.reuse --write` (`make bench-reuse`) on {platform.machine()} / Python "
            f"{platform.python_version()}: a {TURNS}-turn Claude-Code-shaped task (16 KB system prompt, "
            "12 tools, 2 KB tool results) through `litellm.acompletion` against the fake conol, "
            "reuse on vs off.\n\n"
            f"{result}\n"
        )
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write(section)


if __name__ == "__main__":
    main()
