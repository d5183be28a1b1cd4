"""Fetching an image a caller names by http(s) URL (``image_fetch: public``), without an SSRF hole.

A proxy that fetches any URL a caller names can be made to read what only it can reach: the cloud
metadata service (169.254.169.254), an admin port on localhost, a host on the private network. So
every hop is checked before a connection is made: the host is resolved once, EVERY address it
resolves to must be public (not private, loopback, link-local, multicast, reserved, unspecified,
shared or documentation space), and the connection goes to the checked address (the URL's host
only in ``Host`` and TLS SNI), so a second DNS answer cannot swap in another address. Redirects are
followed by hand, each one checked the same way. No cookie and no proxy from the environment are
used: the request carries nothing of conol's.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from ..core import BadRequest, ImageTooLarge, ImageTypeUnsupported, check_image_bytes, fetched_media_type

Resolver = Callable[[str, int], Awaitable[list[str]]]
MAX_REDIRECTS = 3


async def system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_public(address: str) -> bool:
    """Whether ``address`` is one a server may be asked to connect to on a caller's behalf."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is loopback too
    return ip.is_global and not ip.is_multicast


@dataclass
class ImageFetcher:
    """``fetch(url)`` → (bytes, media type), or a 400 saying why not. ``resolve``, ``allowed`` and
    ``transport`` are for tests (a resolver that knows test names, a recording transport)."""

    timeout: float
    max_bytes: int
    resolve: Resolver = system_resolve
    allowed: Callable[[str], bool] = is_public
    transport: httpx.AsyncBaseTransport | None = None

    async def fetch(self, url: str, where: str = "image") -> tuple[bytes, str]:
        transport = self.transport or httpx.AsyncHTTPTransport(retries=0)
        async with httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False) as client:
            try:
                async with asyncio.timeout(self.timeout):
                    return await self._follow(client, url, where)
            except TimeoutError:
                raise BadRequest(
                    f"{where}: fetching the image URL took longer than image_fetch_timeout "
                    f"({self.timeout:g} s)"
                ) from None
            except httpx.HTTPError as exc:
                raise BadRequest(
                    f"{where}: the image URL could not be fetched ({type(exc).__name__})"
                ) from None

    async def _follow(self, client: httpx.AsyncClient, url: str, where: str) -> tuple[bytes, str]:
        for _ in range(MAX_REDIRECTS + 1):
            request = await self._checked_request(client, url, where)
            response = await client.send(request, stream=True)
            try:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                return await self._image(response, where)
            finally:
                await response.aclose()
        raise BadRequest(f"{where}: the image URL redirected more than {MAX_REDIRECTS} times")

    async def _checked_request(self, client: httpx.AsyncClient, url: str, where: str) -> httpx.Request:
        """The request for ``url``, addressed to a checked IP; a 400 for any other scheme, a host
        that does not resolve, or one with any address that is not public."""
        parsed = httpx.URL(url)
        host = parsed.host
        if parsed.scheme not in ("http", "https") or not host:
            raise BadRequest(f"{where}: the image URL (or a redirect) is not an http(s) URL")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            addresses = await self.resolve(host, port)
        except OSError:
            addresses = []
        if not addresses:
            raise BadRequest(f"{where}: the image URL's host {host!r} does not resolve")
        refused = [address for address in addresses if not self.allowed(address)]
        if refused:
            raise BadRequest(
                f"{where}: the image URL's host {host!r} resolves to a private, loopback or link-local "
                f"address ({refused[0]}); image_fetch: public fetches from public addresses only"
            )
        netloc = parsed.netloc.decode("ascii")
        extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
        return client.build_request(
            "GET",
            parsed.copy_with(host=addresses[0]),
            headers={"Host": netloc, "Accept": "image/*"},
            extensions=extensions,
        )

    async def _image(self, response: httpx.Response, where: str) -> tuple[bytes, str]:
        if response.status_code != 200:
            raise BadRequest(f"{where}: fetching the image URL answered HTTP {response.status_code}")
        try:
            media_type = fetched_media_type(response.headers.get("content-type"), where)
        except BadRequest as exc:
            raise ImageTypeUnsupported(exc.message) from None
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise ImageTooLarge(f"{where}: the image is {int(declared):,} bytes, over max_image_bytes")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                raise ImageTooLarge(
                    f"{where}: the image is over this deployment's max_image_bytes ({self.max_bytes:,})"
                )
        check_image_bytes(bytes(body), self.max_bytes, where)
        return bytes(body), media_type
