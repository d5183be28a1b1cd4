"""conol's event stream straight from bytes: chunks of the HTTP body in, JSON payloads out.

Pure and incremental (no I/O). conol sends each cumulative snapshot as one ``data`` line, so an
answer of 100 KB arrives as ~50 MB of SSE; decoding the text (bytes → str → lines → joined fields,
as httpx_sse does) copies every byte several times and cost more CPU than parsing the JSON. Here
a payload that arrives within one read is a single slice of it, and the payload stays ``bytes``,
which the JSON parser reads directly.

Follows the SSE spec's parsing rules for the fields we use: lines end at ``\\r\\n``, ``\\n`` or
``\\r``; an event ends at a blank line and is dispatched only if it had ``data``; several ``data``
lines are joined with ``\\n``; one space after the colon is dropped; comments and the ``event``,
``id`` and ``retry`` fields are ignored (conol's events carry their type in the JSON); an
unfinished event at the end of the stream is dropped.

Other clients saw two more framings of the same events (docs/protocol.md#stream) and no source ties a
form to a request header, so every stream is read in all three at once: besides SSE ``data:``
lines, a bare JSON line (NDJSON: a line starting with ``{`` or ``[``) and a ``message\t<json>`` line
are each one complete payload. No SSE field name starts with ``{``, ``[`` or ``message<TAB>``, so
an SSE stream reads exactly as SSE. ``framing`` says which forms were seen (for ``doctor``).
"""

from __future__ import annotations

from collections.abc import Iterator

_DATA = b"data"
_MESSAGE = b"message\t"
_HEAD = len(_MESSAGE)  # bytes of a line looked at to tell its kind
_BARE_STARTS = frozenset(b"{[")

# What ``SSEDecoder.framing`` holds: the framings seen so far.
FRAMING_SSE = "sse"
FRAMING_NDJSON = "ndjson"
FRAMING_MESSAGE = "message"


class SSEDecoder:
    """Feed it the body's chunks in order; it yields each complete event's ``data`` payload.

    A payload costs one copy of its bytes: a line within one read is sliced out of it once; a line
    split over reads is kept as views of those reads and joined once, without its ``data:`` prefix.
    (Joining into a buffer and slicing the prefix off copied a 500 KB snapshot five times.)
    """

    __slots__ = ("_after_cr", "_data", "_pending", "framing")

    def __init__(self) -> None:
        self._pending: list[bytes | memoryview] = []  # the unfinished last line, as views of reads
        self._data: list[bytes] = []  # the current event's data lines
        self._after_cr = False  # the previous chunk ended with "\r" (maybe half of "\r\n")
        self.framing: set[str] = set()  # FRAMING_* of the payloads yielded so far

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        if b"\r" in chunk:  # rare: normalise both other line ends to "\n" (memchr when absent)
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._pending:
                self._pending.append(memoryview(chunk)[start:end])
                payload = self._take_split_line()
            else:
                payload = self._take_line(chunk, start, end)
            start = end + 1
            if payload is not None:
                yield payload
        if start < len(chunk):
            self._pending.append(memoryview(chunk)[start:] if start else chunk)

    def _take_line(self, buffer: bytes, start: int, end: int) -> bytes | None:
        """Process the line ``buffer[start:end]``; the event's payload if the line ends one."""
        if start == end:
            return self._end_event()
        head = buffer[start : start + _HEAD]
        if head.startswith(_DATA):  # the common case first: one check per SSE line
            offset = _value_offset(head, end - start)
            if offset is not None:
                self._data.append(buffer[start + offset : end])
            return None
        offset = self._line_offset(head)
        return buffer[start + offset : end] if offset is not None else None

    def _take_split_line(self) -> bytes | None:
        pieces, self._pending = self._pending, []
        length = sum(len(piece) for piece in pieces)
        if length == 0:
            return self._end_event()
        if len(pieces[0]) < min(_HEAD, length):  # the head itself is split: rare, join it all first
            line = b"".join(pieces)
            return self._take_line(line, 0, len(line))
        head = bytes(pieces[0][:_HEAD])
        if head.startswith(_DATA):
            offset = _value_offset(head, length)
            if offset is not None:
                pieces[0] = memoryview(pieces[0])[offset:]
                self._data.append(b"".join(pieces))
            return None
        offset = self._line_offset(head)
        if offset is None:
            return None
        pieces[0] = memoryview(pieces[0])[offset:]
        return b"".join(pieces)

    def _line_offset(self, head: bytes) -> int | None:
        """Where the payload of a one-line event starts (bare JSON: 0, ``message\\t``: 8); None for
        every other line (comments, SSE fields we ignore)."""
        if head[0] in _BARE_STARTS:
            self.framing.add(FRAMING_NDJSON)
            return 0
        if head == _MESSAGE:
            self.framing.add(FRAMING_MESSAGE)
            return _HEAD
        return None

    def _end_event(self) -> bytes | None:
        data, self._data = self._data, []
        if not data:
            return None
        self.framing.add(FRAMING_SSE)
        return data[0] if len(data) == 1 else b"\n".join(data)


def _value_offset(head: bytes, length: int) -> int | None:
    """Where a line's ``data`` value starts, given the line's first bytes (it starts with ``data``)
    and its length; None for other fields ("datafoo: …")."""
    if length == len(_DATA):  # "data" alone: an empty data line
        return len(_DATA)
    if head[4:5] != b":":
        return None
    return 6 if head[5:6] == b" " else 5  # one space after the colon is dropped
