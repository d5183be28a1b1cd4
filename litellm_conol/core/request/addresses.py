"""Which addresses an image fetch may connect to (``image_fetch: public``): our own table, pure.

The table is ours, not Python's ``is_global``: that one has changed between patch releases, and an
address check that moves with the interpreter is no check (docs/images-and-discovery.md, "Image
URLs"). Anything not a plain IPv4 or IPv6 literal (a name, ``2130706433``, ``0x7f.1``) is refused
here: the fetcher resolves names first and checks what they resolve to.
"""

from __future__ import annotations

import ipaddress

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

V4_REFUSED: tuple[ipaddress.IPv4Network, ...] = tuple(
    _V4(net)
    for net in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared (CGNAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, the cloud metadata service
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments (192.0.0.8 among them)
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved
        "255.255.255.255/32",  # broadcast
    )
)

# Refused whole: what they lead to cannot be told from the address (a translator, a tunnel) or is
# never a public host.
V6_REFUSED: tuple[ipaddress.IPv6Network, ...] = tuple(
    _V6(net)
    for net in (
        "::/128",  # unspecified
        "::1/128",  # loopback
        "64:ff9b:1::/48",  # local-use NAT64
        "2002::/16",  # 6to4: the IPv4 inside is bits 16-48; refusing the whole prefix is simplest
        "2001::/32",  # Teredo
        "2001:2::/48",  # benchmarking (RFC 5180)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation (RFC 9637)
        "2001:10::/28",  # ORCHID (reserved)
        "2001:20::/28",  # ORCHIDv2 (reserved)
        "100::/64",  # discard-only
        "fc00::/7",  # unique local (private)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated, still routed on some networks)
        "ff00::/8",  # multicast
    )
)

# An IPv4 address in the last 32 bits: checked as that IPv4 address.
V6_EMBEDDING_V4: tuple[ipaddress.IPv6Network, ...] = (
    _V6("::ffff:0:0/96"),  # IPv4-mapped
    _V6("::/96"),  # IPv4-compatible (deprecated)
    _V6("64:ff9b::/96"),  # well-known NAT64 prefix
)

# Only global unicast space is public; anything else in IPv6 is unallocated or special.
V6_GLOBAL_UNICAST = _V6("2000::/3")


def is_public(address: str) -> bool:
    """Whether ``address`` (an IP literal; a zone id such as ``%eth0`` is ignored) is one a server may
    be asked to connect to on a caller's behalf. Anything that is not an IP literal is not."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return _v4_public(ip)
    if any(ip in net for net in V6_REFUSED):
        return False
    if any(ip in net for net in V6_EMBEDDING_V4):
        return _v4_public(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return ip in V6_GLOBAL_UNICAST


def canonical_address(address: str) -> str:
    """``address`` in its one canonical spelling, without a zone id (what the connection goes to)."""
    return str(ipaddress.ip_address(address.partition("%")[0]))


def _v4_public(ip: ipaddress.IPv4Address) -> bool:
    return not any(ip in net for net in V4_REFUSED)
