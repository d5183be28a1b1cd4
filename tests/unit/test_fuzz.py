"""Property tests of the protocol core: event JSON → ``parse_event`` → ``Assembler`` → chunks.

Arbitrary event sequences (random stage ids, cumulative and non-cumulative snapshots, thinking and
message interleaved, repeated tool calls, unknown event types, junk fields, junk lines) must never
raise anything but ``AgentFailed`` (from ``error`` events); the streamed deltas always concatenate to
what the assembler says it emitted (and to the final text unless a snapshot was rewritten); no
client tool call is emitted twice.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litellm_conol import AgentFailed
from litellm_conol.core.answer.assembler import (
    Assembler,
    BuiltinToolUse,
    ClientToolCall,
    ReasoningDelta,
    TextDelta,
)
from litellm_conol.core.protocol.wire import parse_event
from litellm_conol.provider.chunks import ChunkMaker

pytestmark = pytest.mark.timeout(120)

# CONOL_FUZZ_EXAMPLES raises the example count for a longer local run; no example database is kept.
EXAMPLES = int(os.environ.get("CONOL_FUZZ_EXAMPLES", "150"))

CLIENT_TOOLS = frozenset({"get_weather", "lookup"})
TOOL_NAMES = ["get_weather", "lookup", "WebSearch", "Fetch", "other_tool", ""]
KINDS = ["message", "thinking", "reasoning", "plan", "thought", None, "text", "weird"]
ROLES = ["assistant", "assistant", "assistant", None, "user", "system"]

# Small alphabets make prefixes, repeats and rewrites likely; a few odd characters keep it honest.
text = st.text(alphabet="ab c.\n😀é\u200d", max_size=12)
# Any character but lone surrogates (not JSON-encodable as UTF-8); spelled out, because the default
# alphabet makes hypothesis build a codec table first (seconds, on every fresh checkout).
any_char = st.characters(max_codepoint=0x2FFFF, exclude_categories=("Cs",))
junk_value = st.one_of(st.none(), st.booleans(), st.integers(), text, st.lists(st.integers(), max_size=2))
junk_fields = st.dictionaries(st.sampled_from(["x", "meta", "seq", "ts", "extra"]), junk_value, max_size=2)


@st.composite
def content(draw: st.DrawFn, body: str) -> Any:
    """A text as conol sends it: a string, or a list of text parts (possibly with junk parts)."""
    if draw(st.booleans()):
        return body
    cut = draw(st.integers(0, len(body)))
    parts: list[Any] = [{"type": "text", "text": body[:cut]}, {"type": "text", "text": body[cut:]}]
    if draw(st.integers(0, 5)) == 0:
        parts.append({"type": "image", "junk": 1})  # a part without text
    return parts


@st.composite
def snapshot_text(draw: st.DrawFn, state: dict[str, str], key: str) -> str:
    """Usually the previous snapshot of this entry extended (cumulative); sometimes anything."""
    previous = state.get(key, "")
    choice = draw(st.integers(0, 9))
    if choice < 6:
        value = previous + draw(text)  # extends (or repeats, when the suffix is empty)
    elif choice < 8:
        value = previous[: draw(st.integers(0, len(previous)))]  # stale / shorter
    else:
        value = draw(text)  # a rewrite
    state[key] = value
    return value


@st.composite
def tool_use(draw: st.DrawFn) -> dict[str, Any]:
    use: dict[str, Any] = {"name": draw(st.sampled_from(TOOL_NAMES)), "type": "tool_call"}
    # (no ``null`` input: it and ``{}`` both become arguments "{}", the known duplicate below)
    use["input"] = draw(
        st.one_of(
            st.dictionaries(st.sampled_from(["city", "q", "n"]), st.one_of(text, st.integers()), max_size=2),
            st.integers(),
        )
    )
    if draw(st.booleans()):
        use["result"] = draw(st.one_of(text, st.just([{"text": "found"}]), st.just([{"type": "text"}])))
    use.update(draw(junk_fields))
    return use


@st.composite
def log_entry(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return {
            "role": "user",
            "type": "message",
            "content": "<system-reminder>x</system-reminder>\n" + draw(text),
        }
    if kind == 1:
        return {"role": "assistant", "type": "tool_call", "content": draw(st.lists(tool_use(), max_size=3))}
    if kind == 2:
        return {
            "role": "assistant",
            "type": draw(st.sampled_from(KINDS)),
            "content": draw(content(draw(text))),
        }
    if kind == 3:
        return {
            "role": draw(st.sampled_from(ROLES)),
            "type": "message",
            "content": draw(text),
            **draw(junk_fields),
        }
    return draw(junk_fields)


@st.composite
def stage(draw: st.DrawFn, state: dict[str, str]) -> dict[str, Any]:
    stage_id = draw(st.sampled_from(["s1", "s2", "stg_9", None]))
    previews = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(KINDS))
        key = f"{stage_id}/{kind}"
        entry = {
            "role": draw(st.sampled_from(ROLES)),
            "type": kind,
            "content": draw(content(draw(snapshot_text(state, key)))),
        }
        entry.update(draw(junk_fields))
        previews.append(entry)
    result: dict[str, Any] = {
        "id": stage_id,
        "preview": previews,
        "logs": draw(st.lists(log_entry(), max_size=2)),
    }
    if draw(st.integers(0, 9)) == 0:
        del result["logs"]
    result.update(draw(junk_fields))
    return result


@st.composite
def event_line(draw: st.DrawFn, state: dict[str, str]) -> str:
    kind = draw(st.integers(0, 19))
    if kind < 14:
        event = {
            "type": "history_delta",
            "stages": draw(st.lists(stage(state), max_size=3)),
            **draw(junk_fields),
        }
        return json.dumps(event, ensure_ascii=draw(st.booleans()))
    if kind == 14:
        return json.dumps({"type": "session_title", "title": draw(text)})  # unknown type: ignored
    if kind == 15:
        return draw(
            st.sampled_from(["{not json", "", "[]", "null", '{"type": 3}', '{"stages": []}', ": ping"])
        )
    if kind == 16:
        return json.dumps({"type": "history_delta", "stages": draw(junk_value)})  # wrong shape
    if kind == 17:
        return json.dumps({"type": "done"}) if draw(st.booleans()) else "[DONE]"
    if kind == 18:
        return json.dumps({"type": "error", "message": draw(text), **draw(junk_fields)})
    return draw(st.text(any_char, max_size=20))  # any junk at all


@st.composite
def event_lines(draw: st.DrawFn) -> list[str]:
    state: dict[str, str] = {}
    return [draw(event_line(state)) for _ in range(draw(st.integers(0, 16)))]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=event_lines(), expose_builtins=st.booleans(), max_tool_calls=st.sampled_from([None, 1, 2]))
def test_any_event_sequence_streams_consistently(lines, expose_builtins, max_tool_calls):
    assembler = Assembler(
        client_tools=CLIENT_TOOLS, expose_builtins=expose_builtins, max_tool_calls=max_tool_calls
    )
    maker = ChunkMaker(model="fuzz")
    text_deltas, reasoning_deltas, calls = [], [], []
    builtin_results: dict[tuple[str, str], list[str | None]] = {}
    chunk_text: list[str] = []
    for line in lines:
        event = parse_event(line)  # never raises: junk is None
        if event is None:
            continue
        try:
            pieces = assembler.feed(event)
        except AgentFailed:
            break  # the documented error; the driver stops here
        for piece in pieces:
            if isinstance(piece, TextDelta):
                assert piece.text, "an empty delta was emitted"
                text_deltas.append(piece.text)
            elif isinstance(piece, ReasoningDelta):
                assert piece.text
                reasoning_deltas.append(piece.text)
            elif isinstance(piece, ClientToolCall):
                calls.append(piece)
            else:
                assert isinstance(piece, BuiltinToolUse)
                builtin_results.setdefault((piece.name, _canonical(piece.input)), []).append(piece.result)
        for chunk in maker.for_pieces(pieces):
            delta = chunk.choices[0].delta
            chunk_text.append(delta.content or "")
            chunk_text.append((chunk.provider_specific_fields or {}).get("text_with_tool_calls", ""))

    # The streamed text is exactly what the assembler says it emitted, and the final text unless
    # a snapshot was rewritten (then the final answer is the last snapshot, flagged `rewritten`).
    assert "".join(text_deltas) == assembler.answer.emitted
    assert "".join(reasoning_deltas) == assembler.reasoning.emitted
    if not assembler.answer.rewritten:
        assert assembler.answer.emitted == assembler.final_text
    if not assembler.reasoning.rewritten:
        assert assembler.reasoning.emitted == assembler.final_reasoning
    # The chunks carry the same text (as content, or beside a client tool call).
    assert "".join(chunk_text) == assembler.answer.emitted

    # No client tool call is emitted twice; ids are unique and indices consecutive.
    assert calls == assembler.tool_calls
    keys = [(c.name, c.arguments) for c in calls]
    assert len(set(keys)) == len(keys)
    assert len({c.id for c in calls}) == len(calls)
    assert [c.index for c in calls] == list(range(len(calls)))
    if max_tool_calls is not None:
        assert len(calls) <= max_tool_calls
    for call in calls:
        assert call.name in CLIENT_TOOLS or expose_builtins
        json.loads(call.arguments)
    # A built-in tool use is shown again only when a (new) result arrives.
    for results in builtin_results.values():
        assert all(r is not None for r in results[1:])
        assert len(set(results[1:])) == len(results[1:])


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(
    data=st.one_of(
        st.text(any_char, max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))
    )
)
def test_parse_event_never_raises_on_any_line(data):
    event = parse_event(data)
    if event is not None:
        assert event.type in ("history_delta", "error", "done")


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(pieces=st.lists(text, min_size=1, max_size=8), cumulative=st.booleans())
def test_cumulative_snapshots_reassemble_exactly(pieces, cumulative):
    """The common case, as a property: cumulative snapshots stream the text once, in order."""
    assembler = Assembler()
    streamed, so_far = [], ""
    for piece in pieces:
        so_far += piece
        snapshot = so_far if cumulative else piece
        event = parse_event(
            json.dumps(
                {
                    "type": "history_delta",
                    "stages": [{"id": "s", "preview": [{"type": "message", "content": snapshot}]}],
                }
            )
        )
        streamed += [p.text for p in assembler.feed(event) if isinstance(p, TextDelta)]
    if cumulative:
        assert "".join(streamed) == so_far == assembler.final_text
        assert not assembler.answer.rewritten
    else:
        assert assembler.final_text == pieces[-1]  # non-cumulative: the last snapshot wins
        assert "".join(streamed) == assembler.answer.emitted


def test_null_and_empty_input_are_one_tool_call():
    assembler = Assembler(client_tools=CLIENT_TOOLS)
    uses = [
        {"name": "get_weather", "type": "tool_call", "input": None},
        {"name": "get_weather", "type": "tool_call", "input": {}},
    ]
    event = {
        "type": "history_delta",
        "stages": [{"id": "s1", "logs": [{"role": "assistant", "type": "tool_call", "content": uses}]}],
    }
    assembler.feed(parse_event(json.dumps(event)))
    assert len(assembler.tool_calls) == 1
