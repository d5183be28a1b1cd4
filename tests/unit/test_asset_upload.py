"""Uploading images (client/assets.py) over an in-memory transport: the request, the typed errors, the
cache by content hash and account, and that the token is in no error or cache key."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest

from litellm_conol import BadRequest, ImageTooLarge, ImageTypeUnsupported, UpstreamError, UpstreamUnavailable
from litellm_conol.client.assets import AssetCache, upload_asset, upload_images
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.request.images import AssetRef, ImageLimits, ImageSource, content_key

TOKEN = "session-token-do-not-leak-99"
ENDPOINT = Endpoint("https://conol.test", TOKEN)
PNG = b"\x89PNG\r\n\x1a\n" + b"one"


class Uploads:
    def __init__(self, status: int = 201, body: object = None) -> None:
        self.status, self.body = status, body
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        n = len(self.seen)
        body = (
            self.body
            if self.body is not None
            else {"id": f"a{n}", "url": f"/api/assets/a{n}", "mediaType": "image/png"}
        )
        return httpx.Response(self.status, content=json.dumps(body).encode())


def source(data: bytes = PNG) -> ImageSource:
    return ImageSource(key=content_key(data), media_type="image/png", data=data)


async def test_an_upload_is_the_raw_bytes_with_their_type_and_the_home_referer():
    uploads = Uploads()
    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        asset = await upload_asset(ENDPOINT, http, PNG, "image/png")
    assert asset == AssetRef("/api/assets/a1", "image/png")
    request = uploads.seen[0]
    assert (request.method, str(request.url), request.content) == (
        "POST",
        "https://conol.test/api/assets",
        PNG,
    )
    assert request.headers["content-type"] == "image/png"
    assert request.headers["referer"] == "https://conol.test/home"
    assert request.headers["origin"] == "https://conol.test"


@pytest.mark.parametrize(
    "status, body, error, message",
    [
        (413, {}, ImageTooLarge, "conol refused an image of 11 bytes as too large (413)"),
        (415, {}, ImageTypeUnsupported, "conol refused an image of type image/png (415)"),
        (
            500,
            {"error": f"echo {TOKEN}"},
            UpstreamError,
            "conol failed while uploading an image (500): echo ***",
        ),
        (503, {}, UpstreamUnavailable, "conol is unavailable while uploading an image (503)"),
        (404, {}, UpstreamError, "conol does not accept image uploads here (POST /api/assets answered 404)"),
        (
            201,
            {"id": "../x"},
            UpstreamError,
            "conol's answer to an image upload has no usable asset id (['id'])",
        ),
    ],
)
async def test_upload_errors_are_typed_and_never_hold_the_token(status, body, error, message):
    async with httpx.AsyncClient(transport=httpx.MockTransport(Uploads(status, body))) as http:
        with pytest.raises(error) as caught:
            await upload_images(ENDPOINT, http, {"k": source()}, ImageLimits(), cache=AssetCache())
    assert caught.value.message.startswith(message)
    assert TOKEN not in caught.value.message and TOKEN not in repr(caught.value)
    assert isinstance(caught.value, BadRequest) is (status in (413, 415))
    assert caught.value.status_code == {413: 413, 415: 415, 500: 500, 503: 503, 404: 502, 201: 502}[status]


async def test_the_same_image_is_uploaded_once_per_account():
    uploads, cache = Uploads(), AssetCache()
    other = Endpoint("https://conol.test", "another-token")
    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        first = await upload_images(ENDPOINT, http, {source().key: source()}, ImageLimits(), cache=cache)
        again = await upload_images(ENDPOINT, http, {source().key: source()}, ImageLimits(), cache=cache)
        theirs = await upload_images(other, http, {source().key: source()}, ImageLimits(), cache=cache)
    assert first == again == {source().key: AssetRef("/api/assets/a1", "image/png")}
    assert theirs == {source().key: AssetRef("/api/assets/a2", "image/png")}
    assert len(uploads.seen) == 2
    assert all(TOKEN not in str(key) for key in cache._entries)
    assert hashlib.sha256(TOKEN.encode()).hexdigest()[:32] in {key[1] for key in cache._entries}


def test_the_cache_forgets_gone_assets_and_drops_the_least_recently_used():
    cache = AssetCache(size=2)
    gone, kept = AssetRef("/api/assets/gone", "image/png"), AssetRef("/api/assets/kept", "image/png")
    cache.put(ENDPOINT, "k1", gone)
    cache.put(ENDPOINT, "k2", kept)
    cache.forget(ENDPOINT, [gone])
    assert (cache.get(ENDPOINT, "k1"), cache.get(ENDPOINT, "k2")) == (None, kept)
    cache.put(ENDPOINT, "k3", gone)
    cache.get(ENDPOINT, "k2")
    cache.put(ENDPOINT, "k4", gone)
    assert (cache.get(ENDPOINT, "k3"), cache.get(ENDPOINT, "k2"), len(cache)) == (None, kept, 2)
