"""A 200-turn session with reuse on (``bench/reuse.py``'s long run): does a turn cost more the longer
the session is?

The same Claude-Code-shaped task as the 20-turn run (16 KB system prompt, 12 tools, a 2 KB tool
result after each call), 199 tool calls and an answer, once with follow-up streams replaying the
session's earlier turns (``followup_replay`` on) and once without. Per turn: the bytes sent and
received (``bench/reuse_meter.py``), the client's CPU, and the share of it that session reuse itself
spends where the session's length could show: the turn boundary (``TurnBoundary.filter``, every event
of the follow-up's stream) and the history's fingerprint (the request's canonical form and its
digests), each measured with ``time.process_time`` around the call; and the size of the binding
stored for the next turn. At turns 10 and 200 the same request is also sent with reuse off (a new
session with the whole transcript) for comparison.

What grows with the session regardless of reuse: the request itself (LiteLLM reads and counts a
transcript that grows by 2 KB a turn) and, where conol replays, the stream the client must read.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from litellm_conol.core.protocol.turn_boundary import TurnBoundary
from litellm_conol.reuse import session_reuse, store

from .reuse_meter import FakeProcess, StreamMeter, body_bytes, metered

LONG_TURNS = 200
CHECKPOINTS = (10, LONG_TURNS)


class Spent:
    """CPU seconds spent inside the wrapped calls since the last ``take``, and the last binding size."""

    def __init__(self) -> None:
        self.boundary = 0.0
        self.fingerprint = 0.0
        self.binding_bytes = 0

    def take(self) -> dict[str, float]:
        taken = {"boundary": self.boundary, "fingerprint": self.fingerprint, "binding": self.binding_bytes}
        self.boundary = self.fingerprint = 0.0
        return taken


@contextmanager
def instrumented(spent: Spent) -> Iterator[Spent]:
    """Time the boundary and the fingerprint, and note each binding's size, while the run lasts."""
    original_filter = TurnBoundary.filter
    original_fingerprint = session_reuse.Reuse._fingerprint
    original_put = store.StateBindings.put

    @functools.wraps(original_filter)
    def timed_filter(self: TurnBoundary, event: Any) -> Any:
        started = time.process_time()
        try:
            return original_filter(self, event)
        finally:
            spent.boundary += time.process_time() - started

    @functools.wraps(original_fingerprint)
    async def timed_fingerprint(self: Any, new: Any) -> None:
        started = time.process_time()  # no await inside but an off-loop hash of huge content
        try:
            await original_fingerprint(self, new)
        finally:
            spent.fingerprint += time.process_time() - started

    @functools.wraps(original_put)
    async def noted_put(self: Any, key: str, binding: Any, ttl: float) -> None:
        spent.binding_bytes = len(binding.to_json())
        await original_put(self, key, binding, ttl)

    TurnBoundary.filter = timed_filter  # type: ignore[method-assign]
    session_reuse.Reuse._fingerprint = timed_fingerprint  # type: ignore[method-assign]
    store.StateBindings.put = noted_put  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        TurnBoundary.filter = original_filter  # type: ignore[method-assign]
        session_reuse.Reuse._fingerprint = original_fingerprint  # type: ignore[method-assign]
        store.StateBindings.put = original_put  # type: ignore[method-assign]


Turn = Callable[..., Any]  # bench.reuse.turn


async def long_session(
    fake: FakeProcess,
    replay: bool,
    turn: Turn,
    modes: tuple[Any, Any],
    messages: list[dict[str, Any]],
    answer: Callable[[Any, list[dict[str, Any]], int], None],
) -> list[dict[str, Any]]:
    """Every turn of the long task with reuse on (``modes``: on, off); at the checkpoints, the same
    request with reuse off too. ``answer`` appends a turn's answer (and tool result) to ``messages``."""
    from litellm_conol.reuse.store import clear_stores

    on, off = modes
    fake.reset(followup_replay=replay)
    clear_stores()
    rows: list[dict[str, Any]] = []
    sent_before = 0
    with metered(StreamMeter()) as meter, instrumented(Spent()) as spent:
        meter.take()
        for number in range(1, LONG_TURNS + 1):
            if number in CHECKPOINTS:
                rows.append(await _measured(fake, turn, off, messages, number, meter, spent, reused=False))
                sent_before = len(fake.requests())
            response, costs = await turn(fake, on, messages, None)
            received, _, _ = meter.take()
            requests = fake.requests()
            sent = sum(body_bytes(r) for r in requests[sent_before:] if r["method"] == "POST")
            sent_before = len(requests)
            fields = response.choices[0].message.provider_specific_fields or {}
            rows.append(
                {"turn": number, "mode": "on", "sent": sent, "received": received, **costs, **spent.take()}
                | {"reused": bool(fields.get("session_reused"))}
            )
            answer(response, messages, number)
    return rows


async def _measured(
    fake: FakeProcess,
    turn: Turn,
    mode: Any,
    messages: list[dict[str, Any]],
    number: int,
    meter: StreamMeter,
    spent: Spent,
    *,
    reused: bool,
) -> dict[str, Any]:
    before = len(fake.requests())
    meter.take()
    spent.take()
    _, costs = await turn(fake, mode, messages, None)
    received, _, _ = meter.take()
    sent = sum(body_bytes(r) for r in fake.requests()[before:] if r["method"] == "POST")
    return {"turn": number, "mode": "off", "sent": sent, "received": received, **costs, **spent.take()}


def long_table(runs: dict[str, list[dict[str, Any]]]) -> str:
    """Turns 10 and 200 of each long run, and reuse off's answer to the same requests."""
    lines = [
        f"A {LONG_TURNS}-turn session (the same task, {LONG_TURNS - 1} tool calls): turns 10 and "
        f"{LONG_TURNS}. CPU in ms; boundary and fingerprint are the parts of the client's CPU that "
        "session reuse spends where the session's length could show; binding: the bytes stored for "
        "the next turn.",
        "",
        "| run | turn | bytes sent | bytes received | client CPU | boundary | fingerprint | binding (bytes) "
        "| turn time (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in runs.items():
        for row in rows:
            if row["turn"] not in CHECKPOINTS:
                continue
            label = name if row["mode"] == "on" else "reuse off (a new session, same request)"
            binding = f"{row['binding']:,}" if row["mode"] == "on" else "-"
            lines.append(
                f"| {label} | {row['turn']} | {row['sent']:,} | {row['received']:,.0f} "
                f"| {row['cpu'] * 1000:.1f} | {row['boundary'] * 1000:.2f} "
                f"| {row['fingerprint'] * 1000:.2f} | {binding} | {row['seconds'] * 1000:.0f} |"
            )
    return "\n".join(lines)
