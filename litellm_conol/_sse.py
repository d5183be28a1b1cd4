"""Server-sent events straight from bytes: chunks of the HTTP body in, ``data`` payloads out.

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
"""

from __future__ import annotations

from collections.abc import Iterator


class SSEDecoder:
    """Feed it the body's chunks in order; it yields each complete event's ``data`` payload."""

    __slots__ = ("_after_cr", "_data", "_line")

    def __init__(self) -> None:
        self._line = bytearray()  # the unfinished last line of the previous chunks
        self._data: list[bytes] = []  # the current event's data lines
        self._after_cr = False  # the previous chunk ended with "\r" (maybe half of "\r\n")

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith(b"\r")
        if b"\r" in chunk:  # rare: normalise both other line ends to "\n" (memchr when absent)
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._line:
                self._line += chunk[start:end]
                line = bytes(self._line)
                self._line.clear()
            else:
                line = chunk[start:end]
            start = end + 1
            payload = self._take_line(line)
            if payload is not None:
                yield payload
        if start < len(chunk):
            self._line += chunk[start:] if start else chunk

    def _take_line(self, line: bytes) -> bytes | None:
        """Process one line; the event's payload when the line ends an event that had data."""
        if not line:
            data, self._data = self._data, []
            if not data:
                return None
            return data[0] if len(data) == 1 else b"\n".join(data)
        if line.startswith(b"data"):
            value = line[4:]
            if not value:  # "data" alone: an empty data line
                self._data.append(b"")
            elif value.startswith(b":"):
                self._data.append(value[2:] if value.startswith(b": ") else value[1:])
            # "datafoo: …" is another field's name: ignored like every field we do not use
        return None
