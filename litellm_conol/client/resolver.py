"""Name lookups for image fetches (``image_fetch: public``): no thread, no shared pool, a deadline each.

``getaddrinfo`` blocks a thread until the DNS server answers, and a request that gives up cancels its
wait, not the thread: a caller naming slow names could hold every lookup thread and make every other
caller's fetch time out. So names are looked up here on the event loop itself: an IP literal (and
the old numeric spellings ``getaddrinfo`` takes, ``2130706433``, ``0x7f.1``, ``127.1``) is read as
the address it spells, a name in the hosts file gets the hosts file's addresses, and any other name
is asked of the system's DNS servers (``/etc/resolv.conf``) with dnspython's asyncio resolver, A and
AAAA at once, within :data:`LOOKUP_TIMEOUT` seconds. A lookup holds a socket while it waits and
nothing else, so one caller's slow names never delay another's (docs/images-and-discovery.md).

A name that does not resolve (NXDOMAIN, no answer, no server, the deadline) resolves to nothing: the
fetcher refuses it. Whatever a name resolves to is checked by the fetcher, never trusted here.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path
from typing import Any

import dns.asyncresolver
import dns.exception
import dns.resolver

LOOKUP_TIMEOUT = 5.0  # seconds for one name, all its servers and both record types together
HOSTS_FILE = Path("/etc/hosts")

_resolver: dns.asyncresolver.Resolver | None = None
_hosts: tuple[tuple[int, int], dict[str, list[str]]] | None = None


async def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` names, IPv4 first (as a connection tries them); ``[]`` when none."""
    literal = literal_address(host)
    if literal is not None:
        return [literal]
    name = host.rstrip(".").lower()
    known = hosts_file_addresses(name)
    if known:
        return known
    return await dns_lookup(name)


def literal_address(host: str) -> str | None:
    """``host`` as the IP address it spells (IPv6 with its zone id kept), or ``None`` for a name."""
    try:
        ipaddress.ip_address(host.partition("%")[0])
        return host
    except ValueError:
        pass
    try:
        return str(ipaddress.IPv4Address(socket.inet_aton(host)))
    except (OSError, ValueError):
        return None


def hosts_file_addresses(name: str) -> list[str]:
    """What the hosts file says ``name`` is (read again when the file changes)."""
    global _hosts
    try:
        stat = HOSTS_FILE.stat()
    except OSError:
        return []
    version = (stat.st_mtime_ns, stat.st_size)
    if _hosts is None or _hosts[0] != version:
        _hosts = version, _parse_hosts(HOSTS_FILE.read_text(errors="replace"))
    return list(_hosts[1].get(name, ()))


def _parse_hosts(text: str) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        fields = line.partition("#")[0].split()
        if len(fields) < 2 or literal_address(fields[0]) is None:
            continue
        for name in fields[1:]:
            table.setdefault(name.rstrip(".").lower(), []).append(fields[0])
    return table


def dns_resolver() -> dns.asyncresolver.Resolver:
    """The process's resolver, configured from ``/etc/resolv.conf`` on first use."""
    global _resolver
    if _resolver is None:
        resolver = dns.asyncresolver.Resolver()
        resolver.cache = dns.resolver.LRUCache(1024)  # answers kept for their TTL
        _resolver = resolver
    return _resolver


async def dns_lookup(name: str, timeout: float = LOOKUP_TIMEOUT) -> list[str]:
    """The A then AAAA addresses of ``name`` from DNS, asked together; ``[]`` on any DNS failure."""
    try:
        resolver = dns_resolver()
        async with asyncio.timeout(timeout):
            v4, v6 = await _both(resolver, name, timeout)
    except (TimeoutError, dns.exception.DNSException):
        return []
    return list(dict.fromkeys([*v4, *v6]))


async def _both(
    resolver: dns.asyncresolver.Resolver, name: str, timeout: float
) -> tuple[list[str], list[str]]:
    """A and AAAA at once; the first failure ends the other (no query is left running)."""
    try:
        async with asyncio.TaskGroup() as group:
            v4 = group.create_task(_records(resolver, name, "A", timeout))
            v6 = group.create_task(_records(resolver, name, "AAAA", timeout))
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
    return v4.result(), v6.result()


async def _records(resolver: dns.asyncresolver.Resolver, name: str, kind: str, timeout: float) -> list[str]:
    answer: Any = await resolver.resolve(name, kind, search=False, raise_on_no_answer=False, lifetime=timeout)
    return [str(record.address) for record in answer.rrset or ()]
