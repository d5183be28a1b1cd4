"""Session reuse on vs off: a 20-turn Claude-Code-shaped agent task against the fake conol.

    python -m bench.reuse                 # prints the tables
    python -m bench.reuse --write         # and writes them to bench/RESULTS.md (its section)
    python -m bench.reuse --no-profile    # without the profile of a replaying run
    python -m bench.reuse --no-long       # without the 200-turn session

The conversation is what Claude Code sends for a task of 19 tool calls and an answer: a long
system prompt (16 KB), 12 tool definitions, and a 2 KB tool result after each call; each turn is one
``litellm.acompletion`` in this process, against the fake conol in its own process (scenario
``agent_loop``). Three runs of the same conversation: reuse on with the follow-up stream replaying
the session's earlier turns (``followup_replay`` on, the fake's default), reuse on with a follow-up
stream that starts at the new turn (``followup_replay`` off), and reuse off (``session_reuse: off``:
every turn a new session, no follow-up, so the replay reading does not apply). Per turn: bytes sent,
bytes received, the client's CPU, the fake's CPU, sessions so far and the turn's wall time; how each
is measured: ``bench/reuse_meter.py``. Then a profile of the client over a replaying run: where the
CPU of a follow-up turn goes (``bench/reuse_profile.py``). Last, a 200-turn session with reuse on,
replaying and not: whether a turn costs more the longer the session is (``bench/reuse_long.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

import litellm_conol
from litellm_conol.reuse.store import clear_stores

from .report import write_section
from .reuse_meter import FakeProcess, StreamMeter, body_bytes, metered
from .reuse_tables import report

TURNS = 20
REPEATS = 3
RESULTS = Path(__file__).with_name("RESULTS.md")
OUT = Path(__file__).with_name("out")
SYSTEM = ("You are Claude Code, Anthropic's official CLI for Claude. " * 280)[:16_000]


@dataclass(frozen=True)
class Mode:
    name: str
    reuse: str  # session_reuse of the requests
    replay: bool  # the fake's followup_replay


MODES = (Mode("on, replay", "auto", True), Mode("on, no replay", "auto", False), Mode("off", "off", True))


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


def first_messages(turns: int = TURNS) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"[[fake:agent_loop calls={turns - 1}]] Refactor the project."},
    ]


def answered(response: Any, messages: list[dict[str, Any]], number: int) -> None:
    """The turn's answer, and a tool result for each of its calls, appended to ``messages``."""
    message = response.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or ():
        messages.append({"role": "tool", "tool_call_id": call.id, "content": tool_output(number)})


async def turn(
    fake: FakeProcess, mode: Mode, messages: list[dict[str, Any]], profiler: cProfile.Profile | None
) -> tuple[Any, dict[str, float]]:
    """One ``litellm.acompletion``: its response and what it cost (the meter must be installed);
    ``profiler`` runs during the call."""
    kw = {"api_base": fake.base_url, "api_key": fake.token, "model": "conol/claude-haiku-4-5"}
    fake_cpu, cpu, started = fake.cpu, time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    try:
        response = await litellm.acompletion(
            **kw, messages=messages, tools=tools(), extra_body={"session_reuse": mode.reuse}
        )
    finally:
        if profiler is not None:
            profiler.disable()
    elapsed, cpu, fake_cpu = time.perf_counter() - started, time.process_time() - cpu, fake.cpu - fake_cpu
    return response, {"seconds": elapsed, "cpu": cpu, "fake_cpu": fake_cpu}


async def conversation(
    fake: FakeProcess, mode: Mode, meter: StreamMeter, profiler: cProfile.Profile | None = None
) -> list[dict[str, Any]]:
    """The task's turns; ``profiler`` runs during the follow-up turns (2 to the last)."""
    fake.reset(followup_replay=mode.replay)
    clear_stores()
    meter.take()
    messages = first_messages()
    rows: list[dict[str, Any]] = []
    sent_before = 0
    for number in range(1, TURNS + 1):
        response, costs = await turn(fake, mode, messages, profiler if number > 1 else None)
        received, connections, streams = meter.take()
        requests = fake.requests()
        posted = [r for r in requests[sent_before:] if r["method"] == "POST"]
        sent_before = len(requests)
        message = response.choices[0].message
        fields = message.provider_specific_fields or {}
        rows.append(
            {
                "turn": number,
                "sent": sum(body_bytes(r) for r in posted),
                "received": received,
                "connections": connections,
                "sessions": fake.session_count(),
                "reused": bool(fields.get("session_reused")),
                "streams": streams,
                **costs,
            }
        )
        answered(response, messages, number)
        if not message.tool_calls:
            assert message.content == f"Finished after {TURNS - 1} tool call(s).", message.content
    return rows


def per_turn_median(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Bytes and sessions must be the same in every run (checked); times and CPU are each turn's
    median over the runs."""
    rows = []
    for turn_rows in zip(*runs, strict=True):
        row = {k: v for k, v in turn_rows[0].items() if k != "streams"}
        for key in ("sent", "sessions", "reused"):
            assert len({r[key] for r in turn_rows}) == 1, (key, [r[key] for r in turn_rows])
        for key in ("received", "connections", "seconds", "cpu", "fake_cpu"):
            row[key] = statistics.median(r[key] for r in turn_rows)
        row["received_spread"] = max(r["received"] for r in turn_rows) - min(r["received"] for r in turn_rows)
        rows.append(row)
    return rows


async def measure(fake: FakeProcess) -> dict[str, list[dict[str, Any]]]:
    runs: dict[str, list[list[dict[str, Any]]]] = {mode.name: [] for mode in MODES}
    with metered(StreamMeter()) as meter:
        await conversation(fake, MODES[0], meter)  # warm-up: imports, tokenizer, pool
        for _ in range(REPEATS):  # interleaved, so load on the machine hits every mode alike
            for mode in MODES:
                runs[mode.name].append(await conversation(fake, mode, meter))
    return {name: per_turn_median(mode_runs) for name, mode_runs in runs.items()}


async def amain(profile: bool, long: bool) -> tuple[str, dict[str, Any]]:
    litellm.suppress_debug_info = True
    litellm_conol.register()
    fake = FakeProcess.start()
    try:
        rows = await measure(fake)
        profiled = None
        if profile:
            from .reuse_profile import profile_replay

            profiled = await profile_replay(
                lambda meter, profiler: conversation(fake, MODES[0], meter, profiler), tools()
            )
        runs = await long_runs(fake) if long else {}
    finally:
        fake.stop()
    text = report(rows, profiled, TURNS, REPEATS)
    if runs:
        from .reuse_long import long_table

        text += "\n\n" + long_table(runs)
    return text, {"rows": rows, "profile": profiled, "long": runs}


async def long_runs(fake: FakeProcess) -> dict[str, list[dict[str, Any]]]:
    """The 200-turn session with reuse on, replaying and not (``bench/reuse_long.py``)."""
    from .reuse_long import LONG_TURNS, long_session

    runs = {}
    for mode in MODES[:2]:
        messages = first_messages(LONG_TURNS)
        runs[f"reuse {mode.name}"] = await long_session(
            fake, mode.replay, turn, (mode, MODES[2]), messages, answered
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reuse")
    parser.add_argument("--write", action="store_true", help="write the tables to bench/RESULTS.md")
    parser.add_argument("--no-profile", action="store_true", help="skip the profile of a replaying run")
    parser.add_argument("--no-long", action="store_true", help="skip the 200-turn session")
    args = parser.parse_args()
    result, raw = asyncio.run(amain(profile=not args.no_profile, long=not args.no_long))
    print(result)
    stamp = dt.datetime.now(dt.UTC)
    OUT.mkdir(exist_ok=True)
    (OUT / f"reuse-{stamp:%Y%m%d-%H%M%S}.json").write_text(json.dumps(raw, indent=1, default=str))
    if args.write:
        section = (
            f"## Session reuse, {stamp:%Y-%m-%d %H:%M} UTC\n\n"
            f"`python -m bench.reuse --write` (`make bench-reuse ARGS=--write`) on {platform.machine()}, "
            f"{os.cpu_count()} cores / Python {platform.python_version()} / litellm "
            f"{_version('litellm')}, git {_git()}: a {TURNS}-turn Claude-Code-shaped task (16 KB system "
            "prompt, 12 tools, 2 KB tool results) through `litellm.acompletion` against the fake conol in "
            "its own process; reuse on (follow-up streams replaying earlier turns, and not) vs off. How "
            "each number is measured: `bench/reuse_meter.py`; the 200-turn session: "
            "`bench/reuse_long.py`.\n\n"
            f"{result}\n"
        )
        write_section(RESULTS, "bench-reuse", section)


def _git() -> str:
    """The commit measured, and whether the tree differed from it."""
    try:
        run = partial(subprocess.run, cwd=RESULTS.parent.parent, capture_output=True, text=True, check=True)
        commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
        dirty = run(["git", "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return commit + (" + uncommitted changes" if dirty else "")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    main()
