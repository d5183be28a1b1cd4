"""Raw results → markdown tables, target verdicts and ``bench/RESULTS.md``.

The numbers come from ``numbers.py`` (where added TTFT, finish delay and truncated are defined), the
sections from ``sections_*.py``, the verdicts from ``targets.py``; this module puts one run together
and keeps ``RESULTS.md`` (history row + full section per run).
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
HISTORY_START, HISTORY_END, RUNS = "<!-- history:start -->", "<!-- history:end -->", "<!-- runs -->"

HISTORY_HEADER = (
    "| date | mode | git | SDK added TTFT | proxy TTFT vs openai | finish after `done` | finish after status "
    "| early-terminal truncations | proxy CPU/request vs openai (c=1) | c=200 conol "
    "| parse core vs json.loads "
    "| RSS/stream SDK | RSS/stream proxy | descriptors |\n|" + "---|" * 14
)
# The history row's verdict columns, after date, mode and git: the first target whose name starts so.
HISTORY_TARGETS = (
    "added TTFT ≤ 5",
    "added TTFT within 1.2× of openai's (proxy, c=1, conol)",
    "finish ≤ 0.6",
    "finish ≤ settle",
    "zero truncated answers, status",
    "proxy CPU per streamed request ≤ 1.2× openai's (c1)",
    "200 concurrent streams, no errors (conol)",
    "parse cost ≤",
    "≤ 50 KB RSS per open stream (SDK, conol)",
    "≤ 50 KB RSS per open stream (proxy, conol)",
    "no descriptor growth over",
)

PREAMBLE = """# Benchmark results: `conol/…` vs LiteLLM's own `openai/…` provider

Produced by `python -m bench` (`make bench`); see `bench/README.md` for what is measured and how.
The history table keeps one row per full run (newest last) so progress stays visible; each run's full
tables follow, newest first. Medians and ratios inside one run section all come from that one run.

## History
"""

RUN_MARK = "<!-- run:{} -->"


class Report:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.sdk: dict[str, Any] = raw.get("sdk", {})
        self.proxy: dict[str, Any] = raw.get("proxy", {})
        self.workers: dict[str, Any] = raw.get("workers", {})
        self.agent: dict[str, Any] = raw.get("agent", {})
        self.settle = float(raw["meta"]["settle_window"])
        self.verdicts: list[Verdict] = []  # filled by targets(), quoted by history_row()

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

    def history_row(self) -> str:
        meta = self.raw["meta"]
        cells = [meta["date"], meta["mode"], meta["git"]]
        cells += [self._verdict_cell(name) for name in HISTORY_TARGETS]
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"

    def _verdict_cell(self, name: str) -> str:
        for n, ok, detail in self.verdicts:
            if n.startswith(name):
                return ("✅ " if ok else "❌ " if ok is False else "") + detail.split(";")[0]
        return "–"


def write_results(report: Report, path: Path = RESULTS, analysis: str = "") -> None:
    """Add this run's history row and section; a run already in the file (same id) is replaced."""
    run_id = report.raw["meta"].get("run_id") or report.raw["meta"]["date"]
    mark = RUN_MARK.format(run_id)
    section = mark + "\n" + report.markdown() + ("\n\n" + analysis.strip() if analysis.strip() else "")
    row = report.history_row()
    rows: list[str] = []
    sections: list[str] = []
    if path.exists():
        text = path.read_text()
        m = re.search(re.escape(HISTORY_START) + r"\n(.*?)" + re.escape(HISTORY_END), text, re.S)
        rows = [ln for ln in (m.group(1).splitlines() if m else []) if ln.startswith("| 20")]
        runs = text.split(RUNS, 1)[1] if RUNS in text else ""
        sections = [p.strip() for p in re.split(r"(?=<!-- run:)", runs) if p.strip()]
    date = report.raw["meta"]["date"]
    rows = [r for r in rows if r.split("|")[1].strip() != date] + [row]
    sections = [sec for sec in sections if not sec.startswith(mark)] + [section]
    rows.sort(key=lambda r: r.split("|")[1].strip())  # oldest first
    sections.sort(key=_section_date, reverse=True)  # newest first
    text = (
        f"{PREAMBLE}\n{HISTORY_START}\n{HISTORY_HEADER}\n"
        + "\n".join(rows)
        + f"\n{HISTORY_END}\n\n{RUNS}\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    path.write_text(text)


def _section_date(section: str) -> str:
    m = re.search(r"^## Run (.+?) — ", section, re.M)
    return m.group(1) if m else ""


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
