"""A TCP relay that cuts idle connections, as a load balancer does (AWS ALB, nginx: 60 s by default).

``idle_cutting_relay(port, idle)`` listens on ``127.0.0.1`` (a free port), forwards every connection
to ``127.0.0.1:port`` and closes both sides of it once no byte has passed in either direction for
``idle`` seconds. It runs its own event loop in a thread, so sync clients can go through it.
docs/team-deployment.md (idle timeouts and keepalive) says why the proxy needs its keepalive.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

_READ = 65536


@dataclass
class RelayCounts:
    """What the relay saw; ``cut`` is set on the first idle cut (a test awaits it, never sleeps)."""

    connections: int = 0
    cuts: int = 0
    cut: threading.Event = field(default_factory=threading.Event)


class _Link:
    """One relayed connection: the time of its last byte, either way."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.last_byte = loop.time()

    async def pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(_READ):
            self.last_byte = self._loop.time()
            writer.write(data)
            await writer.drain()
            self.last_byte = self._loop.time()


class IdleCuttingRelay:
    def __init__(self, target_port: int, idle: float) -> None:
        self.target_port = target_port
        self.idle = idle
        self.counts = RelayCounts()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="idle-cutting-relay", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the relay did not start within 10 s")

    def stop(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
        if self._thread.is_alive():
            raise RuntimeError("the relay did not stop within 10 s")

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(self._relay(reader, writer))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.counts.connections += 1
        writers = [client_writer]
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            writers.append(upstream_writer)
            link = _Link(asyncio.get_running_loop())
            pumps = {
                asyncio.ensure_future(link.pump(client_reader, upstream_writer)),
                asyncio.ensure_future(link.pump(upstream_reader, client_writer)),
            }
            try:
                await self._watch(link, pumps)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        except OSError:
            pass  # the far side refused or reset: closing both sides below is all there is to do
        finally:
            for writer in writers:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()

    async def _watch(self, link: _Link, pumps: set[asyncio.Task[None]]) -> None:
        """Until a side closes (a pump ends) or the link has been idle for ``idle`` s (a cut)."""
        loop = asyncio.get_running_loop()
        while True:
            remaining = link.last_byte + self.idle - loop.time()
            if remaining <= 0:
                self.counts.cuts += 1
                self.counts.cut.set()
                return
            done, _ = await asyncio.wait(pumps, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            if done:
                return


@contextlib.contextmanager
def idle_cutting_relay(target_port: int, idle: float) -> Iterator[IdleCuttingRelay]:
    """A started relay to ``127.0.0.1:target_port`` cutting after ``idle`` s of silence; stopped after."""
    relay = IdleCuttingRelay(target_port, idle)
    relay.start()
    try:
        yield relay
    finally:
        relay.stop()
