"""The decoder reads the three framings other clients saw (docs/protocol.md#stream): SSE ``data:``
lines, bare JSON lines (NDJSON) and ``message<TAB>`` lines, each split into reads anywhere, with the
same payloads."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from litellm_conol.core.protocol.sse import FRAMING_MESSAGE, FRAMING_NDJSON, FRAMING_SSE, SSEDecoder
from litellm_conol.core.protocol.wire import DoneEvent, HistoryDelta, parse_event

PAYLOADS = [
    b'{"type":"history_delta","stages":[{"id":"s","preview":[{"type":"message","content":"Hi \\u00e9"}]}]}',
    b'{"type":"error","message":"tab\\there"}',
    b'{"done":true}',
    b"[DONE]",
]


def framed(framing: str, payloads: list[bytes], eol: bytes = b"\n") -> bytes:
    if framing == "sse":
        return b"".join(b"data: " + p + eol + eol for p in payloads)
    prefix = b"message\t" if framing == "message" else b""
    return b"".join(prefix + p + eol for p in payloads)


def decode(chunks: list[bytes]) -> tuple[list[bytes], set[str]]:
    decoder = SSEDecoder()
    out = [bytes(payload) for chunk in chunks for payload in decoder.feed(chunk)]
    return out, decoder.framing


def splits(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    return [stream[a:b] for a, b in itertools.pairwise([0, *points, len(stream)])]


def test_each_framing_yields_the_same_payloads_and_says_which_it_was():
    expected = {"sse": {FRAMING_SSE}, "ndjson": {FRAMING_NDJSON}, "message": {FRAMING_MESSAGE}}
    for framing, seen in expected.items():
        for eol in (b"\n", b"\r\n", b"\r"):
            assert decode([framed(framing, PAYLOADS, eol)]) == (PAYLOADS, seen), (framing, eol)


@settings(max_examples=150, deadline=None)
@given(
    framing=st.sampled_from(["sse", "ndjson", "message"]),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_any_split_into_reads_gives_the_same_payloads(framing, cuts):
    stream = framed(framing, PAYLOADS, b"\r\n")
    assert decode(splits(stream, cuts))[0] == PAYLOADS


def test_every_byte_its_own_read_even_inside_the_message_prefix():
    stream = framed("message", PAYLOADS[:2]) + framed("ndjson", PAYLOADS[2:])
    assert decode([bytes([b]) for b in stream]) == (PAYLOADS, {FRAMING_MESSAGE, FRAMING_NDJSON})


def test_comments_event_lines_and_empty_lines_between_line_events_are_skipped():
    stream = b': ping\n\nevent: x\n{"type":"done"}\n\n\nmessage\t{"type":"done"}\nmessagex\t{"a":1}\nid: 3\n'
    assert decode([stream])[0] == [b'{"type":"done"}', b'{"type":"done"}']


def test_an_unfinished_last_line_is_dropped_in_every_framing():
    for framing in ("sse", "ndjson", "message"):
        stream = framed(framing, PAYLOADS[:1]) + framed(framing, PAYLOADS[1:2])[:-1]
        assert decode([stream])[0] == PAYLOADS[:1], framing


def test_line_payloads_parse_as_events():
    payloads, _ = decode([framed("ndjson", PAYLOADS)])
    events = [parse_event(p) for p in payloads]
    assert isinstance(events[0], HistoryDelta) and events[0].stages[0].preview[0].content == "Hi é"
    assert events[1] is not None and events[1].message == "tab\there"  # type: ignore[union-attr]
    assert [type(e) for e in events[2:]] == [DoneEvent, DoneEvent]


def test_an_sse_stream_sets_only_the_sse_framing():
    decoder = SSEDecoder()
    list(decoder.feed(b'data: {"a":1}\ndata: {"b":2}\n\n: ping\n\n'))
    assert decoder.framing == {FRAMING_SSE}
