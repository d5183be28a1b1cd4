"""Writing one connection of ``GET /api/sessions/<id>/messages``: the replay, then live events and pings."""

from __future__ import annotations

import asyncio

from aiohttp import web

from ._records import ConnectionRecord, FakeConfig, StreamClose
from ._session import LiveSession

PING = b": ping\n\n"
LINE_PING = b"\n"  # the line framings have no comments: an empty line keeps the connection busy
CONTENT_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson", "message": "text/plain"}
_DATA = b"data: "


def framed(raw: bytes, framing: str) -> bytes:
    """One timeline item (an SSE event, as recorded) in the connection's framing: its ``data:``
    payload as one bare line (``ndjson``) or one ``message<TAB>`` line (``message``). Items that are
    no ``data`` event (raw lines, comments) go out as they are."""
    if framing == "sse" or not raw.startswith(_DATA):
        return raw
    payload = raw[len(_DATA) :].rstrip(b"\n")
    return payload + b"\n" if framing == "ndjson" else b"message\t" + payload + b"\n"


WRITE_BATCH = 1 << 20  # join small events into one write, but never build a replay blob of 50 MB


async def pump(
    response: web.StreamResponse,
    live: LiveSession,
    conn: ConnectionRecord,
    config: FakeConfig,
    first: int = 0,
) -> str:
    """Replay the timeline, then follow it live with pings when idle. Returns who ended the stream."""
    framing = config.framing  # fixed for the connection: a switch applies to the next one
    start = len(live.timeline)  # items before this are replay: their closes do not close us
    index, close_after_replay = first, False  # first > 0: a follow-up's stream without the earlier turns
    while live.killed_by is None:
        changed = live.changed  # taken before reading, so an append in between still wakes us
        batch: list[bytes] = []
        size = 0
        while index < len(live.timeline):
            item = live.timeline[index]
            index += 1
            if isinstance(item, StreamClose):
                if index > start:
                    await _write(response, batch)
                    return "server"
                close_after_replay |= item.permanent
                continue
            batch.append(framed(item.raw, framing))
            conn.events_sent += 1
            size += len(item.raw)
            if size >= WRITE_BATCH:
                await _write(response, batch)
                batch, size = [], 0
        await _write(response, batch)
        if close_after_replay:
            return "server"
        if index < len(live.timeline):
            continue
        try:
            async with asyncio.timeout(config.ping_interval):
                await changed.wait()
        except TimeoutError:
            if live.pings_enabled:
                await response.write(PING if framing == "sse" else LINE_PING)
                conn.pings_sent += 1
    return live.killed_by


async def _write(response: web.StreamResponse, batch: list[bytes]) -> None:
    if batch:
        await response.write(batch[0] if len(batch) == 1 else b"".join(batch))
