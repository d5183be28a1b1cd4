"""Fetching an image a caller names by http(s) URL (``image_fetch: public``), without an SSRF hole.

A proxy that fetches any URL a caller names can be made to read what only it can reach: the cloud
metadata service (169.254.169.254), an admin port on localhost, a host on the private network. So
every hop is checked before a connection is made: only ports 80 and 443 (unless the operator allows
others), the host is resolved once, EVERY address it resolves to must be public by our own table
(``core/request/addresses.py``), and the connection goes to the checked address (the URL's host only in
``Host`` and TLS SNI), so a second DNS answer cannot swap in another address. Redirects are
followed by hand, each one checked the same way. No cookie and no proxy from the environment are
used: the request carries nothing of conol's.

The caller learns only that a URL was refused, never why: the reason would tell an outsider how
internal names resolve. The reason goes to the ``litellm_conol.images`` log. Answers are read raw
(``Accept-Encoding: identity``, any other ``Content-Encoding`` refused), so a few hundred
compressed bytes cannot inflate into gigabytes before the size cap sees them. A request's fetches
run a few at a time under ONE budget (docs/images-and-discovery.md, "Image URLs").
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx

from ..core.errors import BadRequest, ImageTooLarge, ImageTypeUnsupported
from ..core.request.addresses import canonical_address, is_public
from ..core.request.images import DEFAULT_FETCH_PORTS, check_image_bytes, fetched_media_type, image_type

Resolver = Callable[[str, int], Awaitable[list[str]]]
MAX_REDIRECTS = 3
FETCHES_AT_ONCE = 4  # of one request
LOOKUPS_AT_ONCE = 4  # name lookups at a time, per fetcher (and, for system_resolve, per process)
REFUSED = "image URL refused: not a public http(s) image"

log = logging.getLogger("litellm_conol.images")

# getaddrinfo blocks a thread until the DNS server answers: lookups get a few threads of their own,
# so callers naming slow names cannot take the default pool the rest of the proxy runs on.
_lookup_threads = ThreadPoolExecutor(max_workers=LOOKUPS_AT_ONCE, thread_name_prefix="conol-image-dns")


async def system_resolve(host: str, port: int) -> list[str]:
    lookup = functools.partial(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    infos = await asyncio.get_running_loop().run_in_executor(_lookup_threads, lookup)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def refused(where: str, host: str, reason: str) -> BadRequest:
    """The one refusal the caller sees; the host and the reason go to the proxy log only."""
    log.warning("image URL refused (%s): host %r %s", where, host, reason)
    return BadRequest(f"{where}: {REFUSED}")


@dataclass
class ImageFetcher:
    """``fetch(url)`` → (bytes, media type), or a 400 saying why not; ``fetch_all(urls)`` for the
    images of one request under one budget of ``timeout`` seconds. ``resolve``, ``allowed``,
    ``allowed_ports`` and ``transport`` are for tests and the operator's ports (a resolver that
    knows test names, a recording transport); no environment variable changes them."""

    timeout: float
    max_bytes: int
    resolve: Resolver = system_resolve
    allowed: Callable[[str], bool] = is_public
    transport: httpx.AsyncBaseTransport | None = None
    allowed_ports: frozenset[int] = DEFAULT_FETCH_PORTS
    lookups: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(LOOKUPS_AT_ONCE))

    async def fetch(self, url: str, where: str = "image") -> tuple[bytes, str]:
        (image,) = await self.fetch_all([url], where)
        return image

    async def fetch_all(self, urls: Sequence[str], where: str = "image") -> list[tuple[bytes, str]]:
        """Each URL's image, in order: at most FETCHES_AT_ONCE at a time, ALL within ``timeout``
        seconds together (a request of many slow images costs one budget, not one each). The first
        refusal ends the others."""
        gate = asyncio.Semaphore(FETCHES_AT_ONCE)

        async def one(url: str) -> tuple[bytes, str]:
            async with gate:
                return await self._fetch_one(url, where)

        try:
            async with asyncio.timeout(self.timeout), asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(url)) for url in urls]
        except TimeoutError:
            raise BadRequest(
                f"{where}: fetching the image URL took longer than image_fetch_timeout ({self.timeout:g} s)"
            ) from None
        except BaseExceptionGroup as errors:
            raise _first(errors) from None
        return [task.result() for task in tasks]

    async def _fetch_one(self, url: str, where: str) -> tuple[bytes, str]:
        # a client (and connection pool) per URL: a pooled TLS connection to one address would
        # otherwise carry another name's request under the first name's SNI
        transport = self.transport or httpx.AsyncHTTPTransport(retries=0)
        async with httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False) as client:
            try:
                return await self._follow(client, url, where)
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
        raise refused(where, request.headers.get("host", ""), f"redirected more than {MAX_REDIRECTS} times")

    async def _checked_request(self, client: httpx.AsyncClient, url: str, where: str) -> httpx.Request:
        """The request for ``url``, addressed to a checked IP; refused for any other scheme, a port
        not allowed, a host that does not resolve, or one with any address that is not public."""
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL:
            raise refused(where, "", "is not a valid URL") from None
        host = parsed.host
        if parsed.scheme not in ("http", "https") or not host:
            raise refused(where, host, f"has scheme {parsed.scheme!r}, not http(s)")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        if port not in self.allowed_ports:
            raise refused(where, host, f"has port {port}, not one of {sorted(self.allowed_ports)}")
        address = await self._checked_address(host, port, where)
        netloc = parsed.netloc.decode("ascii")
        extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
        return client.build_request(
            "GET",
            parsed.copy_with(host=address),
            headers={"Host": netloc, "Accept": "image/*", "Accept-Encoding": "identity"},
            extensions=extensions,
        )

    async def _checked_address(self, host: str, port: int, where: str) -> str:
        """The canonical address to connect to: ``host``'s first, once all of them are allowed."""
        try:
            async with self.lookups:
                addresses = await self.resolve(host, port)
        except (OSError, UnicodeError):  # getaddrinfo's errors, and a name IDNA cannot encode
            addresses = []
        if not addresses:
            raise refused(where, host, "does not resolve")
        bad = [address for address in addresses if not self.allowed(address)]
        if bad:
            raise refused(where, host, f"resolves to {bad[0]}, not a public address")
        try:
            return canonical_address(addresses[0])
        except ValueError:
            raise refused(where, host, f"resolves to {addresses[0]!r}, not an IP address") from None

    async def _image(self, response: httpx.Response, where: str) -> tuple[bytes, str]:
        if response.status_code != 200:
            raise BadRequest(f"{where}: fetching the image URL answered HTTP {response.status_code}")
        try:
            media_type = fetched_media_type(response.headers.get("content-type"), where)
        except BadRequest as exc:
            raise ImageTypeUnsupported(exc.message) from None
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise BadRequest(
                f"{where}: the image URL answered with Content-Encoding {encoding!r}; images are "
                "fetched unencoded only"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise ImageTooLarge(f"{where}: the image is {int(declared):,} bytes, over max_image_bytes")
        body = bytearray()
        async for chunk in response.aiter_raw():  # raw: nothing is ever decompressed
            body += chunk
            if len(body) > self.max_bytes:
                raise ImageTooLarge(
                    f"{where}: the image is over this deployment's max_image_bytes ({self.max_bytes:,})"
                )
        data = bytes(body)
        del body
        check_image_bytes(data, self.max_bytes, where)
        return data, image_type(data, media_type, where)


def _first(errors: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = errors
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
