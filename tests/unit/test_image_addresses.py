"""The address check of image fetching (core/request/addresses.py, client/fetch.py): our own table of refused
ranges, over every spelling of an address a URL can carry, and the allowed ports.

No name is resolved: the fetcher gets a resolver that mimics getaddrinfo's acceptance of numeric hosts
(``inet_aton`` takes ``2130706433``, ``0x7f.1``, ``127.1``; IPv6 literals keep their zone id), and an
in-memory transport that records where a request would have gone.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litellm_conol import BadRequest
from litellm_conol.client.fetch import ImageFetcher
from litellm_conol.core.request.addresses import is_public

EXAMPLES = int(os.environ.get("CONOL_FUZZ_EXAMPLES", "150"))
REFUSED = "image URL refused: not a public http(s) image"
PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"

V4_REFUSED = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "255.255.255.255/32",
]
V6_REFUSED = [
    "::/128",
    "::1/128",
    "64:ff9b:1::/48",
    "2002::/16",
    "2001::/32",
    "2001:2::/48",
    "2001:db8::/32",
    "3fff::/20",
    "2001:10::/28",
    "2001:20::/28",
    "100::/64",
    "fc00::/7",
    "fe80::/10",
    "fec0::/10",
    "ff00::/8",
]
V4_NETS = [ipaddress.IPv4Network(n) for n in V4_REFUSED]


def in_net(net: str) -> st.SearchStrategy[int]:
    network = ipaddress.ip_network(net)
    return st.integers(int(network.network_address), int(network.broadcast_address))


refused_v4 = st.sampled_from(V4_REFUSED).flatmap(in_net)
any_v4 = st.integers(0, 2**32 - 1)


def v4_public(value: int) -> bool:
    return not any(ipaddress.IPv4Address(value) in net for net in V4_NETS)


def v4_spellings(value: int) -> list[str]:
    """The ways a URL's host can name IPv4 ``value`` that getaddrinfo accepts (or httpx refuses)."""
    a, b, c, d = ipaddress.IPv4Address(value).packed
    dotted = f"{a}.{b}.{c}.{d}"
    high, low = value >> 16, value & 0xFFFF
    return [
        dotted,
        str(value),  # 2130706433
        hex(value),  # 0x7f000001
        ".".join(f"0{x:o}" for x in (a, b, c, d)),  # 0177.0.0.01
        ".".join(hex(x) for x in (a, b, c, d)),  # 0x7f.0x0.0x0.0x1
        f"{a}.{value & 0xFFFFFF}",  # 127.1
        f"{hex(a)}.{value & 0xFFFFFF}",  # 0x7f.1
        f"{a}.{b}.{low}",  # 127.0.1
        f"[::ffff:{dotted}]",  # IPv4-mapped
        f"[::ffff:{high:x}:{low:x}]",
        f"[::{dotted}]",  # IPv4-compatible
        f"[64:ff9b::{dotted}]",  # NAT64
        f"[64:ff9b::{high:x}:{low:x}%25eth0]",  # NAT64 with a zone id
        f"[64:ff9b:1::{high:x}:{low:x}]",  # local-use NAT64
        f"[2002:{high:x}:{low:x}::1]",  # 6to4
        f"[::ffff:{dotted}%25eth0]",
    ]


async def numeric_resolver(host: str, port: int) -> list[str]:
    """getaddrinfo for numeric hosts, without resolving any name: inet_aton's IPv4 forms, IPv6
    literals with their zone id kept (as getaddrinfo returns it)."""
    try:
        return [socket.inet_ntoa(socket.inet_aton(host))]
    except OSError:
        pass
    literal = unquote(host)
    address, _, zone = literal.partition("%")
    try:
        canonical = socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, address))
    except OSError:
        raise socket.gaierror(socket.EAI_NONAME, "not a numeric host") from None
    return [canonical + (f"%{zone}" if zone else "")]


class Recorder:
    def __init__(self) -> None:
        self.sent: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        # stream=, not content=: the fetcher reads the raw stream, which content= has already read
        return httpx.Response(200, headers={"Content-Type": "image/png"}, stream=httpx.ByteStream(PNG))


def fetcher(recorder: Recorder, **kw) -> ImageFetcher:
    return ImageFetcher(
        timeout=5.0, max_bytes=4096, resolve=numeric_resolver, transport=httpx.MockTransport(recorder), **kw
    )


# --- the table ----------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(refused_v4)
def test_every_refused_ipv4_address_is_refused_in_every_ipv6_embedding(value):
    v4 = ipaddress.IPv4Address(value)
    for address in (str(v4), f"::ffff:{v4}", f"::{v4}", f"64:ff9b::{v4}", f"64:ff9b::{v4}%eth0"):
        assert is_public(address) is False, address


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(st.sampled_from(V6_REFUSED).flatmap(in_net), st.sampled_from(["", "%eth0", "%1"]))
def test_every_address_of_a_refused_ipv6_range_is_refused(value, zone):
    assert is_public(str(ipaddress.IPv6Address(value)) + zone) is False


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(any_v4)
def test_an_ipv4_address_outside_the_table_is_public_also_mapped_and_through_nat64(value):
    v4 = ipaddress.IPv4Address(value)
    expected = v4_public(value)
    assert [is_public(a) for a in (str(v4), f"::ffff:{v4}", f"64:ff9b::{v4}")] == [expected] * 3
    # 6to4 and local-use NAT64 hide where they lead: refused whatever the IPv4 address inside
    assert is_public(f"2002:{value >> 16:x}:{value & 0xFFFF:x}::1") is False
    assert is_public(f"64:ff9b:1::{value >> 16:x}:{value & 0xFFFF:x}") is False


@pytest.mark.parametrize(
    "address, public",
    [
        ("192.0.0.8", False),
        ("192.88.99.1", False),
        ("198.18.0.1", False),
        ("255.255.255.255", False),
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
        ("64:ff9b::808:808", True),  # NAT64 of 8.8.8.8
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo
        ("2001:db8::1", False),
        ("fec0::1", False),
        ("4000::1", False),  # outside global unicast (2000::/3)
        ("2606:4700:4700::1111", True),
        ("8.8.8.8", True),
        ("2130706433", False),  # not an IP literal: names and other spellings are resolved first
        ("0x7f.1", False),
        ("0177.0.0.1", False),
        ("example.com", False),
    ],
)
def test_the_edges_of_the_table(address, public):
    assert is_public(address) is public


# --- through the fetcher: the spelling a URL carries ---------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(refused_v4, st.sampled_from(range(16)))
async def test_a_refused_address_in_any_spelling_is_refused_before_any_request(value, spelling):
    recorder = Recorder()
    host = v4_spellings(value)[spelling]
    with pytest.raises(BadRequest) as caught:
        await fetcher(recorder).fetch(f"http://{host}/x.png", "m")
    assert (caught.value.message, caught.value.status_code) == (f"m: {REFUSED}", 400)
    assert recorder.sent == []


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(any_v4, st.sampled_from(range(16)))
async def test_whatever_the_spelling_a_request_goes_only_to_a_canonical_public_address(value, spelling):
    recorder = Recorder()
    host = v4_spellings(value)[spelling]
    try:
        assert await fetcher(recorder).fetch(f"http://{host}/x.png") == (PNG, "image/png")
    except BadRequest as refusal:
        assert refusal.message == f"image: {REFUSED}" and recorder.sent == []
        return
    (request,) = recorder.sent
    connected = request.url.host
    assert connected == str(ipaddress.ip_address(connected)) and is_public(connected)
    embedded = ipaddress.ip_address(connected)
    if isinstance(embedded, ipaddress.IPv6Address):
        embedded = ipaddress.IPv4Address(int(embedded) & 0xFFFFFFFF)
    assert int(embedded) == value and v4_public(value)
    assert request.headers["host"] == httpx.URL(f"http://{host}/").netloc.decode()


async def test_only_ports_80_and_443_unless_the_operator_allows_others():
    recorder = Recorder()
    for url in ("http://8.8.8.8:8080/x.png", "https://8.8.8.8:22/x.png", "http://8.8.8.8:6379/x.png"):
        with pytest.raises(BadRequest) as caught:
            await fetcher(recorder).fetch(url)
        assert caught.value.message == f"image: {REFUSED}"
    assert recorder.sent == []
    for url in ("http://8.8.8.8/x.png", "http://8.8.8.8:443/x.png", "https://8.8.8.8:80/x.png"):
        assert await fetcher(recorder).fetch(url) == (PNG, "image/png")
    assert await fetcher(recorder, allowed_ports=frozenset({8080})).fetch("http://8.8.8.8:8080/x.png") == (
        PNG,
        "image/png",
    )
    assert [str(r.url) for r in recorder.sent] == [
        "http://8.8.8.8/x.png",
        "http://8.8.8.8:443/x.png",
        "https://8.8.8.8:80/x.png",
        "http://8.8.8.8:8080/x.png",
    ]


@pytest.mark.parametrize(
    "host",
    [
        "[fe80::1%25eth0]",
        "[fe80::1%eth0]",
        "[::1%25lo]",
        "[fd00::1%251]",
        "127.000.000.001",
        "[::ffff:7f00:1]",
    ],
)
async def test_zone_ids_and_odd_literals_are_refused(host):
    recorder = Recorder()
    with pytest.raises(BadRequest) as caught:
        await fetcher(recorder).fetch(f"http://{host}/x.png")
    assert caught.value.message == f"image: {REFUSED}" and recorder.sent == []


@pytest.mark.parametrize("address", ["2001:2::1", "2001:2:0:ffff::1", "3fff::1", "3fff:fff:ffff::1"])
def test_the_benchmarking_and_new_documentation_ranges_are_not_public(address):
    """2001:2::/48 (RFC 5180) and 3fff::/20 (RFC 9637) sit inside global unicast 2000::/3."""
    assert is_public(address) is False
    assert is_public("2001:3::1") is True and is_public("3fff:1000::1") is True
