"""What one image fetch (client/fetch.py) costs the proxy at most, over in-memory transports and
injected resolvers: raw reads (a compression bomb stays small), the refusal that says nothing of the
address, and signature sniffing. The per-request budget, the byte budget and the URL cache:
test_image_fetch_budget.py; name lookups: test_image_resolver.py."""

from __future__ import annotations

import gzip
import logging
import tracemalloc

import httpx
import pytest

from litellm_conol import BadRequest, ImageTypeUnsupported
from litellm_conol.client.fetch import ImageFetcher
from litellm_conol.core.protocol.endpoint import Endpoint

pytestmark = pytest.mark.timeout(60)

MiB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"
JPEG = b"\xff\xd8\xff\xe0" + b"jfif"
GIF = b"GIF89a" + b"frames"
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 "
REFUSED = "image URL refused: not a public http(s) image"
ENDPOINT = Endpoint("https://conol.test", "tok")


async def public(host: str, port: int) -> list[str]:
    return ["93.184.216.34"]


def answer(body: bytes, content_type: str = "image/png", **headers: str) -> httpx.Response:
    # stream=: the body reaches the fetcher as the network would give it (content= decodes at once)
    return httpx.Response(
        200, headers={"Content-Type": content_type, **headers}, stream=httpx.ByteStream(body)
    )


def fetcher(handler, **kw) -> ImageFetcher:
    options = {"timeout": 5.0, "max_bytes": MiB, "resolve": public, "transport": httpx.MockTransport(handler)}
    return ImageFetcher(**{**options, **kw})


# --- 5: raw reads, identity only -----------------------------------------------------------------

BOMB = gzip.compress(gzip.compress(bytes(64 * MiB)))  # a few hundred bytes, 64 MiB inflated


async def test_a_compression_bomb_is_refused_without_inflating_it():
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answer(BOMB, **{"Content-Encoding": "gzip, gzip"})

    tracemalloc.start()
    try:
        with pytest.raises(BadRequest) as caught:
            await fetcher(handler).fetch("http://img.example/bomb.png", "m")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(BOMB) < 100_000 and peak < 2 * MiB + 4 * MiB
    assert (caught.value.message, caught.value.status_code) == (
        "m: the image URL answered with Content-Encoding 'gzip, gzip'; images are fetched unencoded only",
        400,
    )
    assert sent[0].headers["accept-encoding"] == "identity"


async def test_the_raw_stream_is_read_and_bounded_even_unlabelled():
    """A gzip body sent WITHOUT Content-Encoding is raw bytes: never inflated, and not an image."""
    with pytest.raises(ImageTypeUnsupported) as caught:
        await fetcher(lambda request: answer(BOMB)).fetch("http://img.example/x.png", "m")
    assert caught.value.status_code == 400
    assert caught.value.message == (
        "m has an image (declared image/png) whose bytes are not image/gif, image/jpeg, image/png, image/webp"
    )


# --- 8: the signature decides the type -----------------------------------------------------------


@pytest.mark.parametrize(
    "body, declared, expected",
    [
        (PNG, "image/png", "image/png"),
        (JPEG, "image/png", "image/jpeg"),
        (GIF, "image/webp", "image/gif"),
        (WEBP, "image/jpeg", "image/webp"),
    ],
)
async def test_a_fetched_image_is_uploaded_as_the_type_its_bytes_say(body, declared, expected):
    assert await fetcher(lambda request: answer(body, declared)).fetch("http://img.example/x") == (
        body,
        expected,
    )


# --- 8: one refusal for the caller, the reason in the log ----------------------------------------


async def test_the_caller_learns_nothing_of_how_an_internal_name_resolves(caplog):
    async def internal(host: str, port: int) -> list[str]:
        return {"db.corp": ["10.1.2.3"]}.get(host, [])

    never = fetcher(lambda request: pytest.fail("a request was sent"), resolve=internal)
    messages = []
    with caplog.at_level(logging.WARNING, "litellm_conol.images"):
        for url in ("http://db.corp/x.png?token=secret", "http://nowhere.corp/x.png", "ftp://db.corp/x.png"):
            with pytest.raises(BadRequest) as caught:
                await never.fetch(url, "messages[1].content")
            messages.append((caught.value.message, caught.value.status_code))
    assert messages == [("messages[1].content: " + REFUSED, 400)] * 3
    assert [r.getMessage() for r in caplog.records if r.name == "litellm_conol.images"] == [
        "image URL refused (messages[1].content): host 'db.corp' resolves to 10.1.2.3, not a public address",
        "image URL refused (messages[1].content): host 'nowhere.corp' does not resolve",
        "image URL refused (messages[1].content): host 'db.corp' has scheme 'ftp', not http(s)",
    ]
    assert all(r.levelno == logging.WARNING for r in caplog.records)
