"""The bytes SSE decoder (``core/protocol/sse.py``: ``SSEDecoder``) and the piece coalescing the driver does on bursts.

The decoder must give exactly what a text SSE decoder gives (httpx_sse, the reference here) for any
split of the same stream into reads, with every line ending the spec allows.
"""

from __future__ import annotations

import itertools

import pytest
from httpx_sse._decoders import SSEDecoder as ReferenceDecoder
from httpx_sse._decoders import SSELineDecoder
from hypothesis import given, settings
from hypothesis import strategies as st

from litellm_conol.core.answer.assembler import (
    BuiltinToolUse,
    ClientToolCall,
    ReasoningDelta,
    TextDelta,
    coalesce,
)
from litellm_conol.core.protocol.sse import SSEDecoder


def decode(chunks: list[bytes]) -> list[bytes]:
    decoder = SSEDecoder()
    return [payload for chunk in chunks for payload in decoder.feed(chunk)]


def reference(stream: bytes) -> list[bytes]:
    """httpx_sse's result for the whole stream: the non-empty data of every event it dispatches
    (it also dispatches events with only an event/id field, and drops empty data; we yield
    ``data:``-only events as empty payloads, which parse_event ignores)."""
    lines, events = SSELineDecoder(), ReferenceDecoder()
    out: list[bytes] = []
    for line in [*lines.decode(stream.decode()), *lines.flush()]:
        sse = events.decode(line)
        if sse is not None and sse.data:
            out.append(sse.data.encode())
    return out


def splits(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    bounds = [0, *points, len(stream)]
    return [stream[a:b] for a, b in itertools.pairwise(bounds)]


def test_one_event_per_blank_line_and_data_prefix_forms():
    stream = b'data: {"a":1}\n\ndata:{"b":2}\n\n: heartbeat\n\nevent: x\nid: 7\ndata: c\n\n'
    assert decode([stream]) == [b'{"a":1}', b'{"b":2}', b"c"]


def test_multiline_data_is_joined_with_newlines_and_only_one_space_is_dropped():
    assert decode([b"data: a\ndata:  b\ndata\n\n"]) == [b"a\n b\n"]


def test_crlf_and_bare_cr_line_ends_even_split_between_reads():
    assert decode([b"data: a\r", b"\n\r", b"\ndata: b\r\r", b"data: c\r"]) == [b"a", b"b"]
    assert decode([b"data: x\r\rdata: y\r\n\r\n"]) == [b"x", b"y"]


def test_an_unfinished_event_at_the_end_is_dropped_and_other_fields_are_ignored():
    assert decode([b"data: done\n\ndatax: no\nretry: 5\n\ndata: half"]) == [b"done"]


def test_a_payload_within_one_read_is_a_slice_of_it_and_a_split_one_is_joined():
    big = b"x" * 100_000
    assert decode([b"data: " + big[:30_000], big[30_000:] + b"\n", b"\n"]) == [big]


def test_every_split_in_one_or_two_places_even_inside_the_prefix_gives_the_same_payloads():
    stream = b'data: {"a":1}\n\ndata:b\ndata\n\n: hi\ndatax: no\n\ndata: \n\n'
    expected = [b'{"a":1}', b"b\n", b""]
    assert decode([stream]) == expected
    for i, j in itertools.combinations_with_replacement(range(len(stream) + 1), 2):
        assert decode([stream[:i], stream[i:j], stream[j:]]) == expected, (i, j)


def test_a_split_line_keeps_no_view_of_earlier_reads_once_it_is_finished():
    decoder = SSEDecoder()
    assert list(decoder.feed(b"data: ab")) == []
    assert list(decoder.feed(b"cd\n\n")) == [b"abcd"]
    assert decoder._pending == []


line_end = st.sampled_from(["\n", "\r\n", "\r"])
field_line = st.one_of(
    st.builds(lambda v: f"data: {v}", st.text(alphabet='ab {}":,é', max_size=8)),
    st.builds(lambda v: f"data:{v}", st.text(alphabet="ab {}", max_size=5)),
    st.just("data"),
    st.just(": comment"),
    st.just("event: message"),
    st.just("id: 3"),
    st.just(""),
)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.tuples(field_line, line_end), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
)
def test_same_payloads_as_httpx_sse_for_any_stream_and_any_split(lines, cuts):
    stream = "".join(text + end for text, end in lines).encode()
    got = decode(splits(stream, cuts))
    assert [p for p in got if p] == reference(stream)


# --- coalescing -------------------------------------------------------------------------------------


def test_coalesce_joins_adjacent_deltas_of_one_kind_and_keeps_the_order():
    call = ClientToolCall(index=0, id="c1", name="f", arguments="{}")
    builtin = BuiltinToolUse(name="WebSearch", input={}, result=None)
    pieces = [
        ReasoningDelta("th"),
        ReasoningDelta("ink"),
        TextDelta("Hel"),
        TextDelta("lo"),
        builtin,
        TextDelta(" there"),
        call,
        TextDelta("!"),
    ]
    assert coalesce(pieces) == [
        ReasoningDelta("think"),
        TextDelta("Hello"),
        builtin,
        TextDelta(" there"),
        call,
        TextDelta("!"),
    ]


@pytest.mark.parametrize("pieces", [[], [TextDelta("a")]])
def test_coalesce_of_nothing_to_join(pieces):
    assert coalesce(pieces) == pieces
