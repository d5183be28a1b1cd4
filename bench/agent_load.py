"""Agent-shaped load through a proxy's ``/v1/messages``: Claude Code's requests (``agent_shape.py``),
the Anthropic event stream read back, for ``conol/…`` and LiteLLM's ``anthropic/…`` alike.

Three kinds of phase, one provider's proxy at a time:

* ``phase``: ``n`` requests at a fixed concurrency, each a conversation's turn 20 (a new
  conversation each, so ``conol/…`` starts a new session for every one: nothing to continue);
* ``memory``: ``k`` such streams open at once (each has received its first piece, then silence);
* ``turns``: ``conversations`` whole conversations in lockstep, turn 1 to ``TURNS`` (each turn's
  answer and tool result appended as Claude Code appends them, so ``conol/…`` continues its session
  from turn 2 on), the proxy's CPU taken per round: CPU per turn at each turn number.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from .agent_shape import TURNS, Conversation, at_turn
from .client import Sample, control, records, run_many
from .proxy import MASTER_KEY, Proxy, held_open, model_name, records_cpu
from .workload import AGENT_CALL, AGENT_TOOL, Workload, new_tag

SETTLE = 0.3  # after a phase or a round: LiteLLM's logging tasks of the last answers finish in it


@dataclass
class Answer:
    """One streamed answer as Claude Code assembles it: the content blocks, and when it came."""

    sample: Sample
    content: list[dict[str, Any]] = field(default_factory=list)
    partial: dict[int, list[str]] = field(default_factory=dict)  # tool_use input JSON by block index
    counted: bool = False  # as open (memory phase)

    def event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "content_block_start":
            self.content.append(dict(data["content_block"]))
        elif kind == "content_block_delta":
            self._delta(data["index"], data["delta"])
        elif kind == "content_block_stop":
            block = self.content[data["index"]] if data["index"] < len(self.content) else None
            if block is not None and block.get("type") == "tool_use":
                text = "".join(self.partial.pop(data["index"], []))
                block["input"] = orjson.loads(text) if text else block.get("input", {})
        elif kind == "error":
            self.sample.error = str(data.get("error"))[:300]

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        if delta.get("type") == "text_delta" and delta.get("text"):
            if self.sample.first is None:
                self.sample.first = time.time()
            block = self.content[index]
            block["text"] = block.get("text", "") + delta["text"]
        elif delta.get("type") == "input_json_delta":
            self.partial.setdefault(index, []).append(delta.get("partial_json", ""))

    def check(self, work: Workload) -> None:
        text = "".join(b.get("text", "") for b in self.content if b.get("type") == "text")
        calls = [(b.get("name"), b.get("input")) for b in self.content if b.get("type") == "tool_use"]
        self.sample.chars = len(text)
        self.sample.ok = text == work.text and calls == [(AGENT_TOOL, AGENT_CALL)]


class AgentLoad:
    """Claude-Code-shaped ``/v1/messages`` requests against one proxy, one aiohttp session."""

    def __init__(self, proxy: Proxy, provider: str, control_url: str, work: Workload) -> None:
        """``control_url``: the fake's control app; empty for ``floor/…``, which has no fake."""
        self.proxy, self.provider, self.control, self.work = proxy, provider, control_url, work
        self.url = proxy.base_url + "/v1/messages"
        self.headers = {
            "Authorization": f"Bearer {MASTER_KEY}",
            "Content-Type": "application/json",
            "anthropic-version": "2023-06-01",
        }
        self.session: aiohttp.ClientSession | None = None
        self.opened = 0
        self.on_open: asyncio.Event | None = None
        self.open_target = 0

    async def __aenter__(self) -> AgentLoad:
        connector = aiohttp.TCPConnector(limit=0, force_close=True)  # as bench/proxy.py's Load
        self.session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.session is not None:
            await self.session.close()

    async def send(self, body: bytes, tag: str, work: Workload) -> Answer:
        assert self.session is not None
        answer = Answer(Sample(tag, time.time()))
        async with self.session.post(self.url, data=body, headers=self.headers) as response:
            if response.status != 200:
                answer.sample.error = f"HTTP {response.status}: {(await response.text())[:300]}"
                return answer
            async for line in response.content:
                if not line.startswith(b"data: "):
                    continue
                answer.sample.chunks += 1
                answer.event(orjson.loads(line[6:]))
                if answer.sample.first is not None and not answer.counted:
                    answer.counted = True
                    self._opened()
        answer.sample.end = time.time()
        answer.check(work)
        return answer

    def _opened(self) -> None:
        self.opened += 1
        if self.on_open is not None and self.opened >= self.open_target:
            self.on_open.set()

    def bodies(self, name: str, n: int, work: Workload) -> dict[str, bytes]:
        """``n`` turn-20 requests, built before the clock starts (the load generator shares the cores)."""
        model = model_name(self.provider)
        tags = [new_tag(f"agent-{self.provider}-{name}-") for _ in range(n)]
        return {tag: orjson.dumps(at_turn(work.marker(tag), work).body(model)) for tag in tags}

    async def phase(self, name: str, n: int, concurrency: int) -> dict[str, Any]:
        bodies = self.bodies(name, n, self.work)
        fake0 = self._fake_cpu()
        cpu0, wall0 = self.proxy.cpu(), time.perf_counter()
        samples = await run_many_answers(self, bodies, self.work, concurrency)
        wall = time.perf_counter() - wall0
        await asyncio.sleep(SETTLE)
        cpu = self.proxy.cpu() - cpu0
        return {
            "name": name,
            "workload": self.work.__dict__,
            "n": n,
            "concurrency": concurrency,
            "request_bytes": len(next(iter(bodies.values()))),
            "cpu": cpu,
            "wall": wall,
            "fake_cpu_total": self._fake_cpu() - fake0,
            "samples": [s.to_json() for s in samples],
            "records": self._records(),
        }

    async def memory(self, k: int, hold: float) -> dict[str, Any]:
        work = self.work.with_(hold=hold)
        bodies = self.bodies("mem", k, work)
        result = await held_open(self, lambda: run_many_answers(self, bodies, work, k), k, hold)
        return {**result, "records": self._records()}

    async def turns(self, conversations: int, turns: int = TURNS) -> dict[str, Any]:
        """``conversations`` conversations in lockstep; the proxy's CPU per round (``/proc`` ticks of
        every process of its group, exited threads included: per-thread counters lose those)."""
        tags = [new_tag(f"agent-{self.provider}-turns-") for _ in range(conversations)]
        talks = {tag: Conversation(self.work.marker(tag)) for tag in tags}
        rounds: list[dict[str, Any]] = []
        for number in range(1, turns + 1):
            rounds.append(await self._round(talks, number))
            if rounds[-1]["errors"]:
                break  # a conversation that lost its answer cannot go on
        sessions = control(self.control, "/bench/records")["sessions"] if self.control else []
        self._records()  # cleared
        return {"conversations": conversations, "rounds": rounds, "sessions": len(sessions)}

    def _records(self) -> dict[str, dict[str, Any]]:
        return records(self.control) if self.control else {}

    def _fake_cpu(self) -> float:
        return records_cpu(self.control) if self.control else 0.0

    async def _round(self, talks: dict[str, Conversation], number: int) -> dict[str, Any]:
        """Turn ``number`` of every conversation at once; each answer appended as received (as Claude
        Code appends it, a truncated one too)."""
        model = model_name(self.provider)
        bodies = {tag: orjson.dumps(talk.body(model)) for tag, talk in talks.items()}
        cpu0, wall0 = self.proxy.cpu(), time.perf_counter()
        answers = await asyncio.gather(*(self.send(body, tag, self.work) for tag, body in bodies.items()))
        wall = time.perf_counter() - wall0
        await asyncio.sleep(SETTLE)
        cpu = self.proxy.cpu() - cpu0
        errors: list[str] = []
        for answer in answers:
            try:
                if answer.sample.error:
                    raise ValueError(answer.sample.error)
                talks[answer.sample.tag].answered(answer.content)
            except ValueError as exc:
                errors.append(str(exc))
        return {
            "turn": number,
            "cpu": cpu,
            "wall": wall,
            "request_bytes": len(next(iter(bodies.values()))),
            "errors": len(errors),
            "truncated": sum(1 for a in answers if not a.sample.error and not a.sample.ok),
            "first_error": errors[0] if errors else None,
        }


async def run_many_answers(
    load: AgentLoad, bodies: dict[str, bytes], work: Workload, concurrency: int
) -> list[Sample]:
    async def one(tag: str) -> Sample:
        return (await load.send(bodies[tag], tag, work)).sample

    return await run_many(one, list(bodies), concurrency)
