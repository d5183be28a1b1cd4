"""A DNS server on loopback whose answers a test decides: per name, the addresses (A records) and how
long to wait before answering; any other name is NXDOMAIN. Each query is answered in a thread of its
own, so a slow name never holds up a fast one: what is slow is the name, not the server.

``tests/support/hostile_shim.py`` points a proxy's image-URL lookups at it (``DNS_STUB_PORT``).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset


@dataclass
class DnsStub:
    answers: dict[str, tuple[float, list[str]]] = field(default_factory=dict)  # name → (delay, addresses)
    asked: list[str] = field(default_factory=list)
    port: int = 0
    _socket: socket.socket | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def answer(self, name: str, addresses: list[str], delay: float = 0.0) -> None:
        self.answers[name.lower().rstrip(".")] = (delay, addresses)

    def _serve(self) -> None:
        assert self._socket is not None
        while not self._stopping.is_set():
            try:
                wire, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue  # wakes up now and then to see whether it is stopping
            except OSError:
                return
            threading.Thread(target=self._reply, args=(wire, client), daemon=True).start()

    def _reply(self, wire: bytes, client: tuple[str, int]) -> None:
        query = dns.message.from_wire(wire)
        question = query.question[0]
        name = question.name.to_text().lower().rstrip(".")
        self.asked.append(name)
        response = dns.message.make_response(query)
        delay, addresses = self.answers.get(name, (0.0, []))
        if name not in self.answers:
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif question.rdtype == dns.rdatatype.A and addresses:
            response.answer.append(dns.rrset.from_text_list(question.name, 60, "IN", "A", addresses))
        if delay and self._stopping.wait(delay):
            return
        if self._socket is not None:
            with suppress(OSError):
                self._socket.sendto(response.to_wire(), client)


@contextmanager
def dns_stub() -> Iterator[DnsStub]:
    stub = DnsStub()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(0.2)
        stub.port, stub._socket = server.getsockname()[1], server
        thread = threading.Thread(target=stub._serve, daemon=True)
        thread.start()
        try:
            yield stub
        finally:
            stub._stopping.set()
            stub._socket = None
            server.close()
            thread.join(timeout=5)
