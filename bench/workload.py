"""One workload, two wire formats: the conol scenario and the OpenAI chunk plan send the same text,
in the same number of pieces, at the same pace.

A request selects its workload with a marker in its user message, read by both fakes::

    [[fake:bench tag=T chars=1000 n=20 delay=0.025 lead=0.05 end=done hold=0 tail=0.3 early=0.6]]

``end`` (conol only; the OpenAI fake always ends with a finish chunk and ``data: [DONE]``):

* ``done``: status completed and a ``done`` event right after the last snapshot (definitive);
* ``status``: ``tail`` s after the last snapshot the status turns completed; no done, stream open;
* ``commit``: the committed message 20 ms after the last snapshot, status completed ``tail`` s later;
* ``early``: the status turns completed ``early`` s BEFORE the last snapshot; no done, stream open;
* ``call``: right after the last snapshot, a call of the client tool ``Bash`` with ``AGENT_CALL``
  (an agent's turn: the stream stays open, the agent waits for the tool's result). The Anthropic
  fake (``bench/anthropic_fake.py``) ends the same way, with a ``tool_use`` block.

``hold``: seconds of silence after the first piece (keeps streams open for the memory benchmark).
This module imports neither litellm nor aiohttp.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Literal

from litellm_conol.fake import (
    CommitMessage,
    Done,
    Preview,
    Scenario,
    ScenarioContext,
    SetStatus,
    Sleep,
    Step,
    ToolCall,
    long_text,
    snapshots,
)

SCENARIO = "bench"
End = Literal["done", "status", "commit", "early", "call"]
# The tool call that ends an agent turn (``end=call``), the same from both fakes.
AGENT_TOOL = "Bash"
AGENT_CALL = {"command": "ls -la src", "description": "List the source folder"}
_tags = itertools.count()


@dataclass(frozen=True)
class Workload:
    chars: int = 1000
    n: int = 20
    delay: float = 0.025
    lead: float = 0.05
    end: End = "done"
    hold: float = 0.0
    tail: float = 0.3
    early: float = 0.6

    def marker(self, tag: str) -> str:
        params = " ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))
        return f"[[fake:{SCENARIO} tag={tag} {params}]]"

    def prompt(self, tag: str) -> str:
        return f"Benchmark request. {self.marker(tag)}"

    @property
    def text(self) -> str:
        return long_text(self.chars)

    def pieces(self) -> list[str]:
        """The text as the suffixes each snapshot adds: exactly what a client must stream."""
        previews = [s for s in snapshots(self.text, self.n, 0.0) if isinstance(s, Preview)]
        out, done = [], 0
        for preview in previews:
            assert isinstance(preview.text, str)
            out.append(preview.text[done:])
            done = len(preview.text)
        return out

    @property
    def json_bytes_estimate(self) -> int:
        """Bytes of snapshot text conol sends: the sum of every cumulative snapshot."""
        total, done = 0, 0
        for piece in self.pieces():
            done += len(piece)
            total += done
        return total

    def with_(self, **changes: object) -> Workload:
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Workload:
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, object] = {}
        for name, raw in params.items():
            kind = kinds.get(name)
            if kind is None:
                continue  # tag and unknown keys
            values[name] = int(raw) if kind == "int" else float(raw) if kind == "float" else raw
        return cls(**values)  # type: ignore[arg-type]


def new_tag(prefix: str) -> str:
    return f"{prefix}{next(_tags)}"


# --- conol ----------------------------------------------------------------------------------------


def conol_steps(w: Workload) -> list[Step]:
    text = w.text
    steps: list[Step] = [Sleep(w.lead)] if w.lead > 0 else []
    snaps = snapshots(text, w.n, w.delay)
    if w.hold > 0:
        snaps = [snaps[0], Sleep(w.hold), *snaps[1:]]
    if w.end == "early":
        *head, last = snaps
        if head and isinstance(head[-1], Sleep):
            head = head[:-1]  # the early status replaces the regular gap before the last snapshot
        return [*steps, *head, Sleep(w.delay), SetStatus("completed"), Sleep(w.early), last]
    steps += snaps
    if w.end == "call":
        return [*steps, ToolCall(AGENT_TOOL, AGENT_CALL)]
    if w.end == "done":
        return [*steps, SetStatus("completed"), Done()]
    if w.end == "commit":
        return [
            *steps,
            Sleep(0.02),
            CommitMessage(text),
            Sleep(max(0.0, w.tail - 0.02)),
            SetStatus("completed"),
        ]
    return [*steps, Sleep(w.tail), SetStatus("completed")]


def _build(ctx: ScenarioContext) -> list[Step]:
    return conol_steps(Workload.from_params(ctx.params))


BENCH_SCENARIO = Scenario(
    SCENARIO,
    _build,
    description="benchmark workload (bench/workload.py): text as n cumulative snapshots, then an end signal",
    preview_mode="changed",
)
