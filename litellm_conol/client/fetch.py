"""Fetching an image a caller names by http(s) URL (``image_fetch: public``), without an SSRF hole.

A proxy that fetches any URL a caller names can be made to read what only it can reach: the cloud
metadata service (169.254.169.254), an admin port on localhost, a host on the private network. So
every hop is checked before a connection is made: only ports 80 and 443 (unless the operator allows
others), the host is resolved once (``client/resolver.py``: on the event loop, a deadline per
lookup, no shared thread pool), EVERY address it resolves to must be public by our own table
(``core/request/addresses.py``), and the connection goes to the checked address (the URL's host only
in ``Host`` and TLS SNI), so a second DNS answer cannot swap in another address. Redirects are
followed by hand, each one checked the same way. No cookie and no proxy from the environment are
used: the request carries nothing of conol's.

The caller learns only that a URL was refused, never why: the reason would tell an outsider how
internal names resolve. The reason goes to the ``litellm_conol.images`` log. Answers are read raw
(``Accept-Encoding: identity``, any other ``Content-Encoding`` refused), so a few hundred
compressed bytes cannot inflate into gigabytes before the size cap sees them. A request's fetches
run a few at a time under ONE time budget, and each image is handed on (uploaded) as soon as it
arrives, its bytes held under a process-wide byte budget (:class:`ByteBudget`) until then
(docs/images-and-discovery.md, "Image URLs").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urljoin

import httpx

from ..core.config.boundary import setting_value
from ..core.errors import BadRequest, ImageTooLarge, ImageTypeUnsupported
from ..core.request.addresses import canonical_address, is_public
from ..core.request.images import DEFAULT_FETCH_PORTS, check_image_bytes, fetched_media_type, image_type
from .resolver import resolve_host

T = TypeVar("T")
Resolver = Callable[[str, int], Awaitable[list[str]]]
Deliver = Callable[[int, bytes, str], Awaitable[None]]
MAX_REDIRECTS = 3
FETCHES_AT_ONCE = 4  # of one request
LOOKUPS_AT_ONCE = 4  # name lookups at a time, per request
REFUSED = "image URL refused: not a public http(s) image"

log = logging.getLogger("litellm_conol.images")


def refused(where: str, host: str, reason: str) -> BadRequest:
    """The one refusal the caller sees; the host and the reason go to the proxy log only."""
    log.warning("image URL refused (%s): host %r %s", where, host, reason)
    return BadRequest(f"{where}: {REFUSED}")


@dataclass
class ImageFetcher:
    """``fetch(url)`` → (bytes, media type), or a 400 saying why not; ``fetch_each(urls, deliver)``
    for the images of one request under one budget of ``timeout`` seconds. ``resolve``, ``allowed``,
    ``allowed_ports`` and ``transport`` are for tests and the operator's ports (a resolver that
    knows test names, a recording transport); no environment variable changes them."""

    timeout: float
    max_bytes: int
    resolve: Resolver = resolve_host
    allowed: Callable[[str], bool] = is_public
    transport: httpx.AsyncBaseTransport | None = None
    allowed_ports: frozenset[int] = DEFAULT_FETCH_PORTS
    lookups: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(LOOKUPS_AT_ONCE))

    async def fetch(self, url: str, where: str = "image") -> tuple[bytes, str]:
        fetched: list[tuple[bytes, str]] = []

        async def keep(_: int, data: bytes, media_type: str) -> None:
            fetched.append((data, media_type))

        await self.fetch_each([url], keep, where)
        return fetched[0]

    async def fetch_each(self, urls: Sequence[str], deliver: Deliver, where: str = "image") -> None:
        """Fetch each URL and hand its image to ``deliver(index, bytes, media type)`` as it arrives:
        at most FETCHES_AT_ONCE at a time, the fetches ALL within ``timeout`` seconds together (a
        request of many slow images costs one budget, not one each; handing on is not counted), each
        image's bytes under the process's byte budget until ``deliver`` returns. The first refusal
        ends the others."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        gate, budget, size = asyncio.Semaphore(FETCHES_AT_ONCE), image_budget(), self.max_bytes

        async def one(index: int, url: str) -> None:
            async with gate:
                await self._within(deadline, budget.acquire(size), where)  # room for the most it may read
                try:
                    data, media_type = await self._within(deadline, self._fetch_one(url, where), where)
                    await deliver(index, data, media_type)
                finally:
                    budget.release(size)

        try:
            async with asyncio.TaskGroup() as group:
                for index, url in enumerate(urls):
                    group.create_task(one(index, url))
        except BaseExceptionGroup as errors:
            raise _first(errors) from None

    async def _within(self, deadline: float, step: Awaitable[T], where: str) -> T:
        """``step`` before the request's fetch budget runs out; a 400 saying so after."""
        try:
            async with asyncio.timeout_at(deadline):
                return await step
        except TimeoutError:
            raise BadRequest(
                f"{where}: fetching the image URL took longer than image_fetch_timeout ({self.timeout:g} s)"
            ) from None

    async def _fetch_one(self, url: str, where: str) -> tuple[bytes, str]:
        # a client (and connection pool) per URL: a pooled TLS connection to one address would
        # otherwise carry another name's request under the first name's SNI; one TLS context for all
        # (a context of its own loaded the CA bundle again: megabytes and milliseconds per image)
        transport = self.transport or httpx.AsyncHTTPTransport(retries=0, verify=tls_context())
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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings of every image fetch: httpx's defaults (certificates verified), made once."""
    return httpx.create_ssl_context()


class ByteBudget:
    """Bytes of fetched images held at once, all requests together: a fetch reserves the most it may
    read before it connects, and gives it back once its image has been handed on. Waiters are served
    first come, first served (a large reservation is not passed over forever). One per event loop:
    :func:`image_budget`."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self._waiting: deque[tuple[int, asyncio.Future[None]]] = deque()

    async def acquire(self, size: int) -> None:
        size = min(size, self.total)
        if not self._waiting and self.used + size <= self.total:
            self.used += size
            return
        granted = asyncio.get_running_loop().create_future()
        self._waiting.append((size, granted))
        try:
            await granted
        except BaseException:
            if granted.done() and not granted.cancelled():
                self.release(size)  # granted as the wait was cancelled: give it back
            else:
                with contextlib.suppress(ValueError):  # release() may have passed it over already
                    self._waiting.remove((size, granted))
                self._grant()  # the ones behind it may fit now
            raise

    def release(self, size: int) -> None:
        self.used -= min(size, self.total)
        self._grant()

    def _grant(self) -> None:
        while self._waiting and self.used + self._waiting[0][0] <= self.total:
            size, granted = self._waiting.popleft()
            if not granted.done():  # a waiter cancelled meanwhile takes nothing
                self.used += size
                granted.set_result(None)


_budgets: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ByteBudget] = weakref.WeakKeyDictionary()


def image_budget() -> ByteBudget:
    """The running event loop's byte budget (``CONOL_IMAGE_BYTES_IN_FLIGHT``, read when it is made)."""
    loop = asyncio.get_running_loop()
    budget = _budgets.get(loop)
    if budget is None:
        budget = _budgets[loop] = ByteBudget(setting_value("image_bytes_in_flight"))
    return budget


def _first(errors: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = errors
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
