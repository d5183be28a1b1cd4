"""Where the client's CPU goes in a follow-up turn whose stream replays the session's earlier turns.

Two views of one 20-turn run with ``followup_replay`` on (the fake's default):

* **cProfile** (CPU time, the event loop's thread) of this process during the follow-up turns (2 to
  20), per follow-up turn: the time inside the entry points of the turn (request options, digests,
  usage, the event stream's SSE split, parse, turn boundary and assembler) and each function's own
  time by owner. A profiler slows Python calls more than C, so the shares, not the absolute times,
  are what to read.
* **Offline, without a profiler**, on the exact bytes each follow-up turn read (kept by the meter):
  the payloads split into *replayed* (the same bytes arrived in an earlier turn's stream: the fake
  replays events byte for byte) and *new*, and the CPU of SSE-splitting the stream and of
  ``parse_event`` on each group, the best of several passes.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from litellm_conol.core.answer.structured import check_tool_schema
from litellm_conol.core.protocol.sse import SSEDecoder
from litellm_conol.core.protocol.stage_marks import SessionHistory
from litellm_conol.core.protocol.turn_boundary import TurnBoundary
from litellm_conol.core.protocol.wire import ToolSpec, parse_event
from litellm_conol.core.request.render import convert_tools

from .reuse_meter import StreamMeter, metered

Conversation = Callable[[StreamMeter, cProfile.Profile], Awaitable[list[dict[str, Any]]]]
PASSES = 20  # offline passes over each turn's bytes; the fastest counts

# (label, file fragment, function name): where a follow-up turn's CPU goes, outermost first
ENTRY_POINTS = (
    ("LiteLLM's `acompletion`: the whole turn", "/litellm/main.py", "acompletion"),
    ("- our handler (`provider/handler.py` `acompletion`)", "/provider/handler.py", "acompletion"),
    ("-- request options (`build_request`)", "/core/config/options.py", "build_request"),
    (
        "--- tools' JSON Schemas checked (`check_tool_schema`: jsonschema)",
        "/core/answer/structured.py",
        "check_tool_schema",
    ),
    ("-- history digests (`history_digest`)", "/reuse/fingerprint.py", "history_digest"),
    ("-- the new turn rendered (`render_turn`)", "/reuse/turns.py", "render_turn"),
    (
        "-- usage estimated (`turn_usage_of`: LiteLLM's token_counter)",
        "/provider/usage.py",
        "turn_usage_of",
    ),
    ("-- every event of the stream handled (`SessionRun._handle`)", "/client/driver.py", "_handle"),
    ("--- SSE split (`SSEDecoder.feed`)", "/core/protocol/sse.py", "feed"),
    ("--- event parse (`parse_event`: pydantic validate_json)", "/core/protocol/wire.py", "parse_event"),
    ("--- turn boundary (`SessionRun._this_turn`)", "/client/driver.py", "_this_turn"),
    ("--- assembler (`Assembler.feed`)", "/core/answer/assembler.py", "feed"),
)
OWNERS = (
    ("ours: SSE split (core/protocol/sse.py)", ("/litellm_conol/core/protocol/sse.py",)),
    (
        "ours: event parse (core/protocol/wire.py, JSON parser included)",
        ("/litellm_conol/core/protocol/wire.py",),
    ),
    (
        "ours: turn boundary (core/protocol/turn_boundary.py, stage_marks.py, turn_status.py)",
        (
            "/litellm_conol/core/protocol/turn_boundary.py",
            "/litellm_conol/core/protocol/stage_marks.py",
            "/litellm_conol/core/protocol/turn_status.py",
        ),
    ),
    (
        "ours: driver (client/driver.py, inbox.py)",
        ("/litellm_conol/client/driver.py", "/client/inbox.py"),
    ),
    ("ours: everything else", ("/litellm_conol/",)),
    ("jsonschema (with referencing, attrs)", ("/jsonschema/", "/referencing/", "/attr/", "/rpds/")),
    ("HTTP (httpx, httpcore, aiohttp, anyio)", ("/httpx/", "/httpcore/", "/aiohttp/", "/anyio/", "/h11/")),
    ("pydantic (Python side)", ("/pydantic/",)),
    ("tiktoken", ("/tiktoken/",)),
    ("litellm", ("/litellm/",)),
    ("asyncio", ("/asyncio/",)),
)
OTHER = "other (the profiler's bench code, stdlib with no owner above)"


async def profile_replay(run: Conversation, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The profile of one replaying run (``run``), and the offline costs; ``tools``: the
    request's tools, whose schema check is timed alone too."""
    profiler = cProfile.Profile(time.process_time)  # CPU, not the wall time spent waiting in epoll
    with metered(StreamMeter(keep=True)) as meter:
        rows = await run(meter, profiler)
    follow_ups = len(rows) - 1
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())
    return {
        "follow_up_turns": follow_ups,
        "profiled_ms_per_turn": total * 1000 / follow_ups,
        "entry_points": _entry_points(stats, follow_ups),
        "owners": _owners(stats, follow_ups),
        "offline": offline_costs([row["streams"] for row in rows]),
        "schema_check_ms": _best(partial(_check_schemas, convert_tools(tools))),
        "tool_count": len(tools),
    }


def _check_schemas(specs: list[ToolSpec]) -> None:
    for spec in specs:
        check_tool_schema(spec.name, spec.input_schema)


def _entry_points(stats: dict[Any, Any], turns: int) -> list[dict[str, Any]]:
    out = []
    for label, fragment, name in ENTRY_POINTS:
        calls, cumulative = 0, 0.0
        for (filename, _line, function), (_cc, nc, _tt, ct, _callers) in stats.items():
            if function == name and filename.endswith(fragment):
                calls, cumulative = calls + nc, cumulative + ct
        out.append({"what": label, "ms": cumulative * 1000 / turns, "calls": calls / turns})
    return out


def _owner(filename: str) -> str | None:
    for label, fragments in OWNERS:
        if any(fragment in filename for fragment in fragments):
            return label
    return None


def _owners(stats: dict[Any, Any], turns: int) -> dict[str, float]:
    """Own time (ms per turn) by owner. A function of no known owner (C functions, the JSON parser
    among them, and the standard library) counts for its callers' owners, in proportion to the time
    spent in it from each (``urljoin`` called by jsonschema's reference resolution is jsonschema's)."""
    shares: dict[Any, dict[str, float]] = {}

    def owner_shares(func: Any, visiting: frozenset[Any]) -> dict[str, float]:
        if func in shares:
            return shares[func]
        owner = _owner(func[0])
        callers = stats[func][4] if func in stats else {}
        if owner is not None or not callers or func in visiting:
            return {owner or OTHER: 1.0}
        weights = {caller: edge[2] or edge[1] for caller, edge in callers.items()}
        total = sum(weights.values()) or 1.0
        out: dict[str, float] = {}
        for caller, weight in weights.items():
            for name, share in owner_shares(caller, visiting | {func}).items():
                out[name] = out.get(name, 0.0) + share * weight / total
        shares[func] = out
        return out

    owned: dict[str, float] = {}
    for func, entry in stats.items():
        for name, share in owner_shares(func, frozenset()).items():
            owned[name] = owned.get(name, 0.0) + entry[2] * share
    return {k: v * 1000 / turns for k, v in sorted(owned.items(), key=lambda kv: -kv[1])}


def _payloads(stream: list[bytes]) -> list[bytes]:
    decoder = SSEDecoder()
    return [bytes(payload) for chunk in stream for payload in decoder.feed(chunk)]


def _best(work: Callable[[], object]) -> float:
    """The fastest of ``PASSES`` runs of ``work``, in ms of CPU."""
    best = float("inf")
    for _ in range(PASSES):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best * 1000


def _split_all(streams: list[list[bytes]]) -> None:
    for stream in streams:
        _payloads(stream)


def _parse_all(parse: Callable[[bytes], object], payloads: list[bytes]) -> None:
    for payload in payloads:
        parse(payload)


def offline_costs(turn_streams: list[list[list[bytes]]]) -> list[dict[str, Any]]:
    """Per follow-up turn: replayed and new payloads (count, bytes) and the CPU (ms) to split the
    stream, to parse each group, ``json.loads`` of the replayed (the floor of any parse), and the
    turn boundary's look at the replayed events (with the earlier turns' stages known, as a
    follow-up knows them, and a new turn's text that no replayed log holds)."""
    seen: set[bytes] = set()
    recorder = TurnBoundary()  # the session's stage logs, as each turn's binding records them
    out = []
    for number, streams in enumerate(turn_streams, start=1):
        payloads = [payload for stream in streams for payload in _payloads(stream)]
        replayed = [p for p in payloads if p in seen]
        new = [p for p in payloads if p not in seen]
        known = recorder.history()
        seen.update(payloads)
        _record(recorder, streams)
        if number == 1:
            continue
        events = [event for event in map(parse_event, replayed) if event is not None]
        out.append(
            {
                "turn": number,
                "received": sum(len(chunk) for stream in streams for chunk in stream),
                "replayed": len(replayed),
                "replayed_bytes": sum(map(len, replayed)),
                "new": len(new),
                "new_bytes": sum(map(len, new)),
                "split_ms": _best(partial(_split_all, streams)),
                "parse_replayed_ms": _best(partial(_parse_all, parse_event, replayed)),
                "loads_replayed_ms": _best(partial(_parse_all, json.loads, replayed)),
                "boundary_replayed_ms": _best(partial(_boundary, known, events)),
                "parse_new_ms": _best(partial(_parse_all, parse_event, new)),
            }
        )
    return out


def _record(recorder: TurnBoundary, streams: list[list[bytes]]) -> None:
    for stream in streams:
        recorder.reconnected()  # each connection replays from the start
        for event in map(parse_event, _payloads(stream)):
            if event is not None:
                recorder.filter(event)


def _boundary(known: SessionHistory, events: list[Any]) -> None:
    boundary = TurnBoundary(known)
    for event in events:
        if boundary.filter(event) is not None:
            raise AssertionError("a replayed event passed the turn boundary")
