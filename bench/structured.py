"""Structured output against the fake: repair turns per scenario, and the latency a validated
answer adds. ``python -m bench.structured [--runs N]`` (not part of ``make bench``; ~1 min).

* per scenario: how many turns (sessions) the answer took, and whether it failed, over N runs;
* added latency: the same ``json_valid`` answer, non-streamed, with ``response_format`` (instruction
  in the prompt, extraction and jsonschema validation) and without it, in pairs (which goes first
  alternates); the median of each and the median of the paired differences.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import pydantic

import litellm_conol
from litellm_conol.fake import FakeConol

MODEL = "conol/claude-haiku-4-5"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
SCENARIOS: list[tuple[str, dict[str, Any]]] = [
    ("json_valid", {}),
    ("json_fenced", {}),
    ("json_repair", {}),
    ("json_schema_repair", {}),
    ("json_never_valid", {}),
    ("tool_args_invalid", {"tools": [WEATHER]}),
]


class Person(pydantic.BaseModel):
    name: str
    age: int


async def _once(fake: FakeConol, scenario: str, **extra: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    try:
        response = await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": f"Who? [[fake:{scenario}]]"}],
            api_base=fake.base_url,
            api_key=fake.token,
            **extra,
        )
    except litellm.BadGatewayError as exc:
        return time.perf_counter() - start, exc
    return time.perf_counter() - start, response


async def repair_statistics(fake: FakeConol, runs: int) -> None:
    print(f"{'scenario':20} {'turns per run':>14} {'failures':>9}")
    for scenario, extra in SCENARIOS:
        turns, failures = [], 0
        for _ in range(runs):
            fake.reset()
            format_args = {} if "tools" in extra else {"response_format": Person}
            _, result = await _once(fake, scenario, **format_args, **extra)
            turns.append(len(fake.sessions))
            failures += isinstance(result, Exception)
        print(f"{scenario:20} {statistics.median(turns):>14g} {failures:>6}/{runs}")


async def added_latency(fake: FakeConol, runs: int) -> None:
    with_format, without, differences = [], [], []
    for i in range(runs):
        fake.reset()
        kinds = [{}, {"response_format": Person}]
        timings: list[float] = []
        for extra in kinds if i % 2 == 0 else kinds[::-1]:  # alternate which goes first
            seconds, response = await _once(fake, "json_valid", **extra)
            assert response.choices[0].message.content == '{"name": "Ada Lovelace", "age": 36}'
            timings.append(seconds)
        plain, validated = timings if i % 2 == 0 else timings[::-1]
        without.append(plain)
        with_format.append(validated)
        differences.append(validated - plain)
    ms = 1000
    print(
        f"json_valid, non-streamed, {runs} pairs: median {statistics.median(without) * ms:.1f} ms without "
        f"response_format, {statistics.median(with_format) * ms:.1f} ms with it; median added "
        f"{statistics.median(differences) * ms:.1f} ms"
    )


async def main(runs: int) -> None:
    litellm.suppress_debug_info = True
    litellm_conol.register()
    with FakeConol() as fake:
        await _once(fake, "json_valid")  # warm up imports and the connection pool
        await repair_statistics(fake, max(1, runs // 4))
        await added_latency(fake, runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))
