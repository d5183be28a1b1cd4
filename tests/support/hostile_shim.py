"""Loaded into a test proxy as a callback (``support.hostile_shim.shim``), before the provider: it points
the proxy's image-URL lookups at a test DNS server on loopback (``$DNS_STUB_PORT``,
``support.dns_stub``), and with ``$ALLOW_LOOPBACK_IMAGES=1`` lets image fetches reach 127.0.0.1 (the
only image server a test can run; every other address is checked as ever). Nothing else changes. Test-only: no operator setting does either.

On a provider that still looks names up with ``getaddrinfo`` in threads, the same server answers
through ``socket.getaddrinfo`` (blocking, as the real one does), so a test of slow lookups measures
the provider, not the shim.
"""

from __future__ import annotations

import functools
import os
import socket
from typing import Any

import dns.message
import dns.query
import dns.rdatatype
from litellm.integrations.custom_logger import CustomLogger

STUB_SUFFIX = ".stub.test"
PORT = int(os.environ.get("DNS_STUB_PORT", "0"))


def _point_lookups_at_the_stub() -> None:
    try:
        from litellm_conol.client import resolver
    except ImportError:  # a provider looking names up with getaddrinfo
        _answer_getaddrinfo_from_the_stub()
        return
    dns_resolver = resolver.dns_resolver()
    dns_resolver.nameservers = ["127.0.0.1"]
    dns_resolver.port = PORT
    dns_resolver.cache = None


def _answer_getaddrinfo_from_the_stub() -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not (isinstance(host, str) and host.endswith(STUB_SUFFIX)):
            return real(host, port, *args, **kwargs)
        query = dns.message.make_query(host, dns.rdatatype.A)
        answer = dns.query.udp(query, "127.0.0.1", port=PORT, timeout=60)
        addresses = [item.address for rrset in answer.answer for item in rrset]
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    socket.getaddrinfo = getaddrinfo


def _allow_loopback_images() -> None:
    from litellm_conol.client import assets, fetch
    from litellm_conol.core.request.addresses import is_public

    def allowed(address: str) -> bool:
        return address == "127.0.0.1" or is_public(address)

    assets.ImageFetcher = functools.partial(fetch.ImageFetcher, allowed=allowed)  # type: ignore[misc]


if PORT:
    _point_lookups_at_the_stub()
if os.environ.get("ALLOW_LOOPBACK_IMAGES") == "1":
    _allow_loopback_images()

shim = CustomLogger()
