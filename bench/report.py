"""Raw results → markdown tables, target verdicts and ``bench/RESULTS.md``.

The numbers come from ``numbers.py`` (where added TTFT, finish delay and truncated are defined), the
sections from ``sections_*.py``, the verdicts from ``targets.py``; this module puts one run together
and writes it to ``RESULTS.md``, which holds the current numbers only (git keeps the history): the
latest full run of ``python -m bench``, and the latest ``python -m bench.reuse --write``, each in its
own section, replaced by the next such run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .sections_agent import levels_section as agent_levels
from .sections_agent import memory_section as agent_memory
from .sections_agent import ratio_section as agent_ratios
from .sections_agent import turns_section as agent_turns
from .sections_latency import ends_section, proxy_section, ratio_section, sdk_section, workers_section
from .sections_parse import parse_section
from .sections_resources import descriptor_section, memory_section
from .targets import TargetChecks, Verdict

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
PREAMBLE = """# Benchmark results

The latest run of each benchmark and its command (git keeps the earlier ones): `python -m bench`
(`make bench`; what is measured and how: `bench/README.md`) and `python -m bench.reuse --write`
(`make bench-reuse ARGS=--write`). Medians and ratios inside one section all come from that one run.
"""
SECTIONS = ("bench", "bench-reuse")  # in the file's order


class Report:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.sdk: dict[str, Any] = raw.get("sdk", {})
        self.proxy: dict[str, Any] = raw.get("proxy", {})
        self.workers: dict[str, Any] = raw.get("workers", {})
        self.agent: dict[str, Any] = raw.get("agent", {})
        self.settle = float(raw["meta"]["settle_window"])
        self.verdicts: list[Verdict] = []  # filled by targets()

    def targets(self) -> str:
        checks = TargetChecks(self.sdk, self.proxy, self.settle, self.agent)
        text = checks.table()
        self.verdicts += checks.verdicts
        return text

    def markdown(self) -> str:
        sections = [
            ("Targets", self.targets()),
            ("1–3. SDK mode: added TTFT, finish delay, CPU per request", sdk_section(self.sdk)),
            ("2. How the answer ends (conol)", ends_section(self.sdk, self.settle)),
            (
                "1, 3, 4. Proxy mode: throughput, tail latency, TTFT, CPU at 1 / 50 / 200 concurrent streams",
                proxy_section(self.proxy),
            ),
            ("Proxy ratios ours/openai", ratio_section(self.proxy)),
            ("4b. Proxy workers: throughput with 1 and 2 workers", workers_section(self.workers)),
            (
                "A1. Agent-shaped through the proxy: Claude Code's `/v1/messages`, 1 / 10 / 50 turns at once",
                agent_levels(self.agent),
            ),
            ("A2. Agent-shaped ratios ours/anthropic", agent_ratios(self.agent)),
            ("A3. Agent-shaped: proxy CPU per turn along 20-turn conversations", agent_turns(self.agent)),
            ("A4. Agent-shaped: resident memory per open stream (proxy)", agent_memory(self.agent)),
            ("5. Resident memory per concurrently open stream", memory_section(self.sdk, self.proxy)),
            ("6. Parse cost on long answers", parse_section(self.sdk)),
            ("7. File descriptors and pool connections", descriptor_section(self.sdk, self.proxy)),
        ]
        body = (
            "\n".join(self._head())
            + "\n\n"
            + "\n\n".join(f"### {title}\n\n{text}" for title, text in sections if text)
        )
        notes = self.raw.get("notes")
        if notes:
            body += "\n\n### Notes\n\n" + notes
        return body

    def _head(self) -> list[str]:
        meta = self.raw["meta"]
        return [
            f"## Run {meta['date']} — {meta['mode']}",
            "",
            f"- command: `{meta['command']}` (wall time {meta.get('wall', 0):.0f} s)",
            f"- machine: {meta['nproc']} cores ({meta['cpu_model']}), memory {meta['memory']}, "
            "load average at start "
            f"{meta['loadavg']}",
            f"- versions: Python {meta['python']}, litellm {meta['litellm']}, httpx {meta['httpx']}, "
            f"httpcore {meta['httpcore']}, aiohttp {meta['aiohttp']}, openai {meta['openai']}, "
            f"pydantic {meta['pydantic']}, "
            f"orjson {meta['orjson']}; git {meta['git']}",
        ]


def write_results(report: Report, path: Path = RESULTS, analysis: str = "") -> None:
    """This run becomes the file's ``python -m bench`` section (the one before is replaced)."""
    text = report.markdown() + ("\n\n" + analysis.strip() if analysis.strip() else "")
    write_section(path, "bench", text)


def write_section(path: Path, name: str, text: str) -> None:
    """``text`` becomes the section ``name`` of ``path`` (one of ``SECTIONS``); the others stay."""
    sections = dict.fromkeys(SECTIONS, "")
    if path.exists():
        old = path.read_text(encoding="utf-8")
        for key in SECTIONS:
            m = re.search(f"<!-- {key}:start -->\n(.*?)\n<!-- {key}:end -->", old, re.S)
            sections[key] = m.group(1) if m else ""
    sections[name] = text.strip()
    body = "\n\n".join(f"<!-- {k}:start -->\n{v}\n<!-- {k}:end -->" for k, v in sections.items() if v)
    path.write_text(f"{PREAMBLE}\n{body}\n", encoding="utf-8")


def main() -> None:
    """``python -m bench.report RAW.json [--analysis FILE]``: (re)write RESULTS.md from a saved run."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.report")
    parser.add_argument("raw", type=Path)
    parser.add_argument("--analysis", type=Path, default=Path(__file__).resolve().parent / "ANALYSIS.md")
    parser.add_argument("--print", action="store_true", help="print the section instead of writing")
    args = parser.parse_args()
    report = Report(json.loads(args.raw.read_text()))
    if args.print:
        print(report.markdown())
        return
    analysis = args.analysis.read_text() if args.analysis.exists() else ""
    write_results(report, RESULTS, analysis)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
