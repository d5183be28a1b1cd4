"""A request's image fetches (client/assets.py driving client/fetch.py), over in-memory transports and
injected resolvers: they run a few at a time under ONE budget for the whole request, and a fetched
URL's asset is remembered for ``url_cache_ttl`` seconds only (an injected clock, no sleeping on it)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from support.timing import bound

from litellm_conol import BadRequest
from litellm_conol.client.assets import AssetCache, upload_images
from litellm_conol.client.fetch import ImageFetcher
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.request.images import ImageLimits, ImageSource

pytestmark = pytest.mark.timeout(60)

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"
ENDPOINT = Endpoint("https://conol.test", "tok")


async def public(host: str, port: int) -> list[str]:
    return ["93.184.216.34"]


def answer(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers={"Content-Type": "image/png"}, stream=httpx.ByteStream(body))


def fetcher(handler, **kw) -> ImageFetcher:
    options = {
        "timeout": 5.0,
        "max_bytes": 4096,
        "resolve": public,
        "transport": httpx.MockTransport(handler),
    }
    return ImageFetcher(**{**options, **kw})


# --- 8: bounded lookups, one budget per request --------------------------------------------------


def images(n: int) -> dict[str, ImageSource]:
    return {f"url:{i}": ImageSource(key=f"url:{i}", url=f"http://img{i}.example/x.png") for i in range(n)}


def uploads(request: httpx.Request) -> httpx.Response:
    return httpx.Response(201, content=json.dumps({"id": f"a{len(request.content)}"}).encode())


async def drive(fetch: ImageFetcher, n: int) -> dict:
    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        return await upload_images(
            ENDPOINT, http, images(n), ImageLimits(), cache=AssetCache(), fetcher=fetch
        )


async def test_a_requests_fetches_run_concurrently_within_one_budget():
    """Four images behind a DNS that takes 0.9 s each: together within the 1 s budget, not 3.6 s."""

    async def slow(host: str, port: int) -> list[str]:
        await asyncio.sleep(0.9)
        return ["93.184.216.34"]

    started = time.monotonic()
    assets = await drive(fetcher(lambda request: answer(PNG), resolve=slow, timeout=1.0), 4)
    assert len(assets) == 4 and time.monotonic() - started < 1.0 + bound(1.0)


async def test_slow_dns_ends_the_whole_request_at_its_one_budget():
    """Three images behind a DNS that takes 0.9 s and one behind a DNS that never answers: the
    request is refused when its one 1 s budget is spent, not after 0.9 + 0.9 + 0.9 + 1 s."""
    never = asyncio.Event()

    async def slow(host: str, port: int) -> list[str]:
        if host == "img3.example":
            await never.wait()
        await asyncio.sleep(0.9)
        return ["93.184.216.34"]

    started = time.monotonic()
    with pytest.raises(BadRequest) as caught:
        await drive(fetcher(lambda request: answer(PNG), resolve=slow, timeout=1.0), 4)
    assert time.monotonic() - started < 1.0 + bound(1.0)
    assert (caught.value.message, caught.value.status_code) == (
        "image_url: fetching the image URL took longer than image_fetch_timeout (1 s)",
        400,
    )


async def test_lookups_run_a_few_at_a_time():
    active, most = 0, 0

    async def counting(host: str, port: int) -> list[str]:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.05)
        active -= 1
        return ["93.184.216.34"]

    assert len(await drive(fetcher(lambda request: answer(PNG), resolve=counting), 9)) == 9
    assert most == 4


# --- 8: a fetched URL is remembered for url_cache_ttl seconds ------------------------------------


async def test_a_fetched_urls_asset_expires_after_url_cache_ttl():
    now = [1000.0]
    cache = AssetCache(clock=lambda: now[0])
    fetches: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        fetches.append(request.headers["host"])
        return answer(PNG)

    fetch = fetcher(handler)
    limits = ImageLimits(url_cache_ttl=60.0)
    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        for at in (1000.0, 1059.0, 1061.0, 1100.0):
            now[0] = at
            assets = await upload_images(ENDPOINT, http, images(1), limits, cache=cache, fetcher=fetch)
            assert list(assets) == ["url:0"]
    # fetched at 1000, remembered at 1059, fetched again at 1061 (over 60 s), remembered at 1100
    assert fetches == ["img0.example", "img0.example"]
    assert ImageLimits().url_cache_ttl == 3600.0 and ImageLimits().fetch_ports == frozenset({80, 443})
