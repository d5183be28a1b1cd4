"""The image fetcher (client/fetch.py, ``image_fetch: public``) against local servers: what it fetches,
and the SSRF cases it refuses before any connection (the request never leaves the machine).

Loopback stands in for both sides: 127.0.0.2 plays a public image host (the test's ``allowed`` policy
admits it, and a test resolver gives it names), 127.0.0.1 the internal service an attacker wants read.
The servers' ports are allowed here (``allowed_ports``), so the address check is what refuses. The
caller sees one generic refusal; the reason is in the ``litellm_conol.images`` log.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import httpx
import pytest
from aiohttp import web

from litellm_conol import BadRequest, ImageTooLarge, ImageTypeUnsupported
from litellm_conol.client.fetch import ImageFetcher
from litellm_conol.core.request.addresses import is_public

pytestmark = pytest.mark.timeout(30)

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels" * 10
PUBLIC = "127.0.0.2"
REFUSED = "image URL refused: not a public http(s) image"


def reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "litellm_conol.images"]


class Recorder:
    def __init__(self) -> None:
        self.hits: list[tuple[str, str]] = []  # (path, Host header)


async def _serve(host: str, routes: dict, recorder: Recorder, never: asyncio.Event):
    """``never`` is set at teardown: a "slow" handler then ends and the server can stop."""

    async def handle(request: web.Request) -> web.StreamResponse:
        recorder.hits.append((request.path, request.headers.get("Host", "")))
        answer = routes.get(request.path)
        if answer == "slow":
            await never.wait()
        if isinstance(answer, str) and answer.startswith("redirect:"):
            raise web.HTTPFound(answer.removeprefix("redirect:"))
        if callable(answer):
            return answer()  # a fresh response each time: one is sent only once
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port


@pytest.fixture
async def servers():
    """(public port, its recorder, internal port, its recorder); ``fetcher()`` allows both ports"""
    internal = Recorder()
    release = asyncio.Event()
    runner_in, port_in = await _serve(
        "127.0.0.1", {"/secret": lambda: web.Response(body=PNG, content_type="image/png")}, internal, release
    )
    public = Recorder()
    routes = {
        "/ok.png": lambda: web.Response(body=PNG, content_type="image/png"),
        "/page": lambda: web.Response(text="<html>", content_type="text/html"),
        "/big.png": lambda: web.Response(body=PNG * 100, content_type="image/png"),
        "/slow.png": "slow",
        "/to-internal": f"redirect:http://127.0.0.1:{port_in}/secret",
        "/to-metadata": "redirect:http://169.254.169.254/latest/meta-data/",
        "/to-file": "redirect:file:///etc/passwd",
        "/to-ok": "redirect:/ok.png",
        "/loop": "redirect:/loop",
    }
    runner_pub, port_pub = await _serve(PUBLIC, routes, public, release)
    PORTS[:] = [port_pub, port_in]
    try:
        yield port_pub, public, port_in, internal
    finally:
        release.set()
        await runner_pub.cleanup()
        await runner_in.cleanup()


PORTS: list[int] = []  # the servers' ports, set by the fixture
NAMES = {"img.test": [PUBLIC], "mixed.test": [PUBLIC, "10.0.0.7"], "meta.test": ["169.254.169.254"]}


async def resolve(host: str, port: int) -> list[str]:
    if host in NAMES:
        return NAMES[host]
    infos = await asyncio.get_running_loop().getaddrinfo(host, port)
    return [str(info[4][0]) for info in infos]


def fetcher(**kw) -> ImageFetcher:
    options = {
        "timeout": 5.0,
        "max_bytes": 4096,
        "resolve": resolve,
        "allowed": lambda a: a == PUBLIC or is_public(a),
        "allowed_ports": frozenset({80, 443, *PORTS}),
    }
    return ImageFetcher(**{**options, **kw})


class NoConnection(httpx.AsyncBaseTransport):
    """A transport that fails the test if the fetcher ever tries to send anything."""

    def __init__(self) -> None:
        self.calls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        raise AssertionError(f"a request left the fetcher: {request.url}")


async def test_an_image_is_fetched_from_the_checked_address_with_the_url_host(servers):
    port, public, _, _ = servers
    data, media_type = await fetcher().fetch(f"http://img.test:{port}/ok.png")
    assert (data, media_type) == (PNG, "image/png")
    # img.test resolves only through the test resolver: the connection went to the checked address
    assert public.hits == [("/ok.png", f"img.test:{port}")]


async def test_a_redirect_to_a_public_address_is_followed(servers):
    port, public, _, _ = servers
    assert await fetcher().fetch(f"http://img.test:{port}/to-ok") == (PNG, "image/png")
    assert [path for path, _ in public.hits] == ["/to-ok", "/ok.png"]


@pytest.mark.parametrize(
    "url, address",
    [
        ("http://127.0.0.1:{internal}/secret", "127.0.0.1"),
        ("http://localhost:{internal}/secret", None),  # None: the system resolver's first answer
        ("http://[::1]:{internal}/secret", "::1"),
        ("http://[::ffff:127.0.0.1]:{internal}/secret", "::ffff:127.0.0.1"),
        ("http://2130706433:{internal}/secret", "127.0.0.1"),
        ("http://0.0.0.0:{internal}/secret", "0.0.0.0"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://10.0.0.7/x.png", "10.0.0.7"),
        ("http://192.168.1.1/x.png", "192.168.1.1"),
        ("http://172.16.0.1/x.png", "172.16.0.1"),
        ("http://100.64.0.1/x.png", "100.64.0.1"),
        ("http://[fe80::1]/x.png", "fe80::1"),
        ("http://[fd00::1]/x.png", "fd00::1"),
        ("http://meta.test/latest", "169.254.169.254"),
        ("http://mixed.test/x.png", "10.0.0.7"),  # the first non-public of its addresses
    ],
)
async def test_private_loopback_and_link_local_targets_are_refused_before_any_connection(
    servers, url, address, caplog
):
    _, _, internal_port, internal = servers
    transport = NoConnection()
    with pytest.raises(BadRequest) as caught, caplog.at_level(logging.WARNING, "litellm_conol.images"):
        await fetcher(transport=transport).fetch(url.format(internal=internal_port), "messages[0].content")
    assert (caught.value.message, caught.value.status_code) == (f"messages[0].content: {REFUSED}", 400)
    assert transport.calls == 0 and internal.hits == []
    (reason,) = reasons(caplog)
    host = urlsplit(url.format(internal=internal_port)).hostname
    address = address or (await resolve(host, internal_port))[0]
    assert (
        reason
        == f"image URL refused (messages[0].content): host '{host}' resolves to {address}, not a public address"
    )


@pytest.mark.parametrize("path, target", [("/to-internal", "127.0.0.1"), ("/to-metadata", "169.254.169.254")])
async def test_a_redirect_to_an_internal_address_is_refused_and_never_followed(servers, path, target, caplog):
    port, public, _, internal = servers
    with pytest.raises(BadRequest) as caught, caplog.at_level(logging.WARNING, "litellm_conol.images"):
        await fetcher().fetch(f"http://img.test:{port}{path}")
    assert caught.value.message == f"image: {REFUSED}"
    assert reasons(caplog) == [
        f"image URL refused (image): host {target!r} resolves to {target}, not a public address"
    ]
    assert [p for p, _ in public.hits] == [path] and internal.hits == []


async def test_a_redirect_to_another_scheme_and_redirect_loops_are_refused(servers, caplog):
    port, _, _, _ = servers
    with caplog.at_level(logging.WARNING, "litellm_conol.images"):
        for path in ("/to-file", "/loop"):
            with pytest.raises(BadRequest) as caught:
                await fetcher().fetch(f"http://img.test:{port}{path}")
            assert caught.value.message == f"image: {REFUSED}"
    assert reasons(caplog) == [
        "image URL refused (image): host '' has scheme 'file', not http(s)",
        f"image URL refused (image): host 'img.test:{port}' redirected more than 3 times",
    ]


async def test_only_images_within_the_size_cap_and_the_timeout(servers):
    port, _, _, _ = servers
    with pytest.raises(ImageTypeUnsupported, match="of type 'text/html'"):
        await fetcher().fetch(f"http://img.test:{port}/page")
    with pytest.raises(ImageTooLarge, match="over max_image_bytes"):
        await fetcher().fetch(f"http://img.test:{port}/big.png")
    with pytest.raises(BadRequest, match=r"took longer than image_fetch_timeout \(1 s\)"):
        await fetcher(timeout=1.0).fetch(f"http://img.test:{port}/slow.png")
    with pytest.raises(BadRequest, match="answered HTTP 404"):
        await fetcher().fetch(f"http://img.test:{port}/missing.png")


async def test_a_name_that_does_not_resolve_is_refused_like_any_other(caplog):
    with pytest.raises(BadRequest) as caught, caplog.at_level(logging.WARNING, "litellm_conol.images"):
        await fetcher(transport=NoConnection()).fetch("http://no-such-host.invalid/x.png")
    assert caught.value.message == f"image: {REFUSED}"
    assert reasons(caplog) == ["image URL refused (image): host 'no-such-host.invalid' does not resolve"]


@pytest.mark.parametrize(
    "address, public",
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("169.254.169.254", False),
        ("::1", False),
        ("::ffff:10.0.0.1", False),
        ("fe80::1%eth0", False),
        ("224.0.0.1", False),
        ("0.0.0.0", False),
        ("192.0.2.1", False),
    ],
)
def test_what_counts_as_public(address, public):
    assert is_public(address) is public
