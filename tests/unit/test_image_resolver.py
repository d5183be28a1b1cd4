"""Image URL host lookups (client/resolver.py): IP literals and their old numeric spellings read as
the address they spell, the hosts file, then DNS on the event loop with a deadline per lookup. DNS is
a stand-in resolver here (no sockets in this tier); tests/e2e/test_hostile_input_proxy.py drives the
real one against a DNS server on loopback."""

from __future__ import annotations

import asyncio
import threading
import time

import dns.resolver
import pytest
from support.timing import bound

from litellm_conol.client import resolver as resolver_module
from litellm_conol.client.resolver import dns_lookup, hosts_file_addresses, literal_address, resolve_host

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "host, address",
    [
        ("93.184.216.34", "93.184.216.34"),
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("::1", "::1"),
        ("fe80::1%eth0", "fe80::1%eth0"),
        ("img.example", None),
        ("1.2.3.4.example", None),
    ],
)
def test_an_ip_literal_is_the_address_it_spells(host, address):
    assert literal_address(host) == address


def test_the_hosts_file_is_read_and_read_again_when_it_changes(tmp_path, monkeypatch):
    hosts = tmp_path / "hosts"
    hosts.write_text(
        "127.0.0.1 localhost\n::1 localhost ip6-localhost  # loopback\nbad-line\n10.0.0.7 db.corp.\n"
    )
    monkeypatch.setattr(resolver_module, "HOSTS_FILE", hosts)
    assert hosts_file_addresses("localhost") == ["127.0.0.1", "::1"]
    assert hosts_file_addresses("db.corp") == ["10.0.0.7"]
    hosts.write_text("169.254.169.254 db.corp\n")
    assert hosts_file_addresses("db.corp") == ["169.254.169.254"]
    assert hosts_file_addresses("img.example") == []


class StandIn:
    """A DNS resolver whose answers the test decides: per (name, type), a list of addresses, an
    exception to raise, or an event to wait for first."""

    def __init__(self, answers: dict) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str]] = []
        self.active = 0
        self.most_active = 0

    async def resolve(self, name: str, kind: str, **options: object) -> object:
        self.asked.append((name, kind))
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            await asyncio.sleep(0)  # an answer takes a turn of the loop at least
            answer = self.answers.get((name, kind), [])
            if isinstance(answer, asyncio.Event):
                await answer.wait()
                answer = []
            if isinstance(answer, Exception):
                raise answer
            return type("Answer", (), {"rrset": [type("Record", (), {"address": a})() for a in answer]})()
        finally:
            self.active -= 1


@pytest.fixture
def stand_in(monkeypatch, tmp_path):
    def install(answers: dict) -> StandIn:
        resolver = StandIn(answers)
        monkeypatch.setattr(resolver_module, "_resolver", resolver)
        monkeypatch.setattr(resolver_module, "HOSTS_FILE", tmp_path / "no-hosts")
        return resolver

    return install


async def test_a_and_aaaa_are_asked_together_and_ipv4_comes_first(stand_in):
    dns = stand_in(
        {("img.example", "A"): ["93.184.216.34"], ("img.example", "AAAA"): ["2606:2800:220:1::248"]}
    )
    assert await resolve_host("img.example", 443) == ["93.184.216.34", "2606:2800:220:1::248"]
    assert sorted(dns.asked) == [("img.example", "A"), ("img.example", "AAAA")] and dns.most_active == 2


@pytest.mark.parametrize("failure", [dns.resolver.NXDOMAIN(), dns.resolver.NoNameservers()])
async def test_a_name_dns_cannot_answer_resolves_to_nothing(stand_in, failure):
    stand_in({("gone.example", "A"): failure})
    assert await dns_lookup("gone.example") == []


async def test_a_lookup_that_never_answers_ends_at_its_deadline_without_a_thread(stand_in):
    never = asyncio.Event()
    stand_in({("slow.example", "A"): never, ("slow.example", "AAAA"): never})
    threads = threading.active_count()
    started = time.monotonic()
    assert await dns_lookup("slow.example", timeout=1.0) == []
    assert time.monotonic() - started < 1.0 + bound(1.0)
    assert threading.active_count() == threads


async def test_slow_names_never_delay_another_lookup(stand_in):
    """Twenty lookups of names whose server never answers are in flight; another name still
    resolves at once (with getaddrinfo in four threads, it waited behind them)."""
    never = asyncio.Event()
    slow = {(f"slow{i}.example", kind): never for i in range(20) for kind in ("A", "AAAA")}
    stand_in({**slow, ("fast.example", "A"): ["93.184.216.34"]})
    stuck = [asyncio.create_task(resolve_host(f"slow{i}.example", 80)) for i in range(20)]
    await asyncio.sleep(0)
    try:
        assert await asyncio.wait_for(resolve_host("fast.example", 80), timeout=5) == ["93.184.216.34"]
        assert not any(task.done() for task in stuck)
    finally:
        for task in stuck:
            task.cancel()
        await asyncio.gather(*stuck, return_exceptions=True)


async def test_a_literal_or_a_hosts_file_name_asks_no_dns(stand_in, tmp_path, monkeypatch):
    dns = stand_in({})
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    monkeypatch.setattr(resolver_module, "HOSTS_FILE", hosts)
    assert await resolve_host("0x7f.1", 80) == ["127.0.0.1"]
    assert await resolve_host("LOCALHOST.", 80) == ["127.0.0.1"]
    assert dns.asked == []
