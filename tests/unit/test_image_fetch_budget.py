"""A request's image fetches (client/assets.py driving client/fetch.py), over in-memory transports and
injected resolvers: they run a few at a time under ONE budget for the whole request, and a fetched
URL's asset is remembered for ``url_cache_ttl`` seconds only (an injected clock, no sleeping on it)."""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc

import httpx
import pytest
from support.timing import bound

from litellm_conol import BadRequest
from litellm_conol.client import fetch as fetch_module
from litellm_conol.client.assets import AssetCache, upload_images
from litellm_conol.client.fetch import FETCHES_AT_ONCE, ByteBudget, ImageFetcher
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.request.images import ImageLimits, ImageSource, image_of_url

pytestmark = pytest.mark.timeout(60)

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"
MiB = 1024 * 1024
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


def test_a_url_is_remembered_under_the_limits_it_was_fetched_with():
    """The same URL under a deployment with a lower max_image_bytes or other ports is another image:
    the asset fetched under the wider limits is not reused there (the URL is fetched again, and
    refused if too large)."""
    url = "http://img.example/x.png"
    wide = ImageLimits(fetch="public", max_bytes=4096)
    keys = {
        image_of_url(url, "m", limits).key
        for limits in (
            wide,
            ImageLimits(fetch="public", max_bytes=100),
            ImageLimits(fetch="public", fetch_ports=frozenset({8080})),
        )
    }
    assert len(keys) == 3 and image_of_url(url, "m", wide).key == image_of_url(url, "m", wide).key


async def test_a_url_fetched_under_wider_limits_is_fetched_again_under_tighter_ones():
    cache, url = AssetCache(), "http://img.example/x.png"
    fetches: list[str] = []
    big = PNG + bytes(1000)

    def handler(request: httpx.Request) -> httpx.Response:
        fetches.append(request.headers["host"])
        return answer(big)

    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        for limits in (
            ImageLimits(fetch="public", max_bytes=4096),
            ImageLimits(fetch="public", max_bytes=100),
        ):
            source = image_of_url(url, "m", limits)
            fetch = fetcher(handler, max_bytes=limits.max_bytes)
            try:
                await upload_images(ENDPOINT, http, {source.key: source}, limits, cache=cache, fetcher=fetch)
            except BadRequest as refusal:
                assert (
                    refusal.message == "image_url: the image is over this deployment's max_image_bytes (100)"
                )
    assert fetches == ["img.example", "img.example"]


# --- the bytes of fetched images: uploaded as each arrives, under one budget per process ----------


CHUNK = bytes(64 * 1024)


def chunked(request: httpx.Request, size: int) -> httpx.Response:
    """An image of ``size`` bytes, produced a chunk at a time (nothing of it exists beforehand), its
    first chunk naming the host (so no two images have the same bytes)."""
    head = PNG + request.headers["host"].encode()

    async def body():
        yield head
        for start in range(len(head), size, len(CHUNK)):
            await asyncio.sleep(0)
            yield CHUNK[: min(len(CHUNK), size - start)]

    return httpx.Response(200, headers={"Content-Type": "image/png"}, stream=body_stream(body()))


class body_stream(httpx.AsyncByteStream):
    def __init__(self, chunks) -> None:
        self.chunks = chunks

    async def __aiter__(self):
        async for chunk in self.chunks:
            yield chunk


async def test_each_image_is_uploaded_as_it_arrives():
    """Twenty URL images: the first upload comes before the last fetch starts (all of them were
    fetched, and held, before any upload)."""
    events: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        events.append("fetch")
        return answer(PNG + request.headers["host"].encode())

    def upload(request: httpx.Request) -> httpx.Response:
        events.append("upload")
        return uploads(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(upload)) as http:
        assets = await upload_images(
            ENDPOINT, http, images(20), ImageLimits(), cache=AssetCache(), fetcher=fetcher(handler)
        )
    assert len(assets) == 20 and events.count("upload") == 20
    assert events.index("upload") < len(events) - 1 - events[::-1].index("fetch")


async def test_twenty_url_images_hold_a_few_images_at_a_time():
    """20 images of 2 MiB: at most four (FETCHES_AT_ONCE) are held at once, each uploaded before the
    next is read; all twenty were held together before (40 MiB and their copies)."""
    size = 2 * MiB
    limits = ImageLimits(max_bytes=size)
    async with httpx.AsyncClient(transport=httpx.MockTransport(uploads)) as http:
        tracemalloc.start()
        try:
            assets = await upload_images(
                ENDPOINT,
                http,
                images(20),
                limits,
                cache=AssetCache(),
                fetcher=fetcher(lambda r: chunked(r, size), max_bytes=size),
            )
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert len(assets) == 20
    assert peak < FETCHES_AT_ONCE * size * 2.5  # 20 MiB: four images, each read then copied once


async def test_the_process_budget_bounds_the_bytes_of_all_requests_together():
    """Three requests of four 2 MiB images each, in one process whose budget is 4 MiB: never more
    than two images are being read or uploaded at once, whoever asked."""
    size, holding, most = 2 * MiB, [0], [0]
    fetch_module._budgets[asyncio.get_running_loop()] = ByteBudget(4 * MiB)

    def handler(request: httpx.Request) -> httpx.Response:
        holding[0] += 1
        most[0] = max(most[0], holding[0])
        return chunked(request, size)

    def upload(request: httpx.Request) -> httpx.Response:
        holding[0] -= 1
        return uploads(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(upload)) as http:
        requests = [
            upload_images(
                ENDPOINT,
                http,
                images(4),
                ImageLimits(max_bytes=size),
                cache=AssetCache(),
                fetcher=fetcher(handler, max_bytes=size),
            )
            for _ in range(3)
        ]
        answers = await asyncio.gather(*requests)
    assert [len(a) for a in answers] == [4, 4, 4] and most[0] == 2
    assert fetch_module._budgets[asyncio.get_running_loop()].used == 0


async def test_the_byte_budget_serves_waiters_in_order_and_gives_back_what_a_cancelled_wait_got():
    budget = ByteBudget(10)
    await budget.acquire(8)
    big = asyncio.create_task(budget.acquire(6))
    small = asyncio.create_task(budget.acquire(2))
    await asyncio.sleep(0)
    assert not big.done() and not small.done()  # 2 would fit, but the 6 came first
    big.cancel()
    await asyncio.gather(big, return_exceptions=True)
    await asyncio.sleep(0)
    assert small.done() and budget.used == 10
    budget.release(8)
    budget.release(2)
    assert budget.used == 0
    await budget.acquire(50)  # more than the whole budget: takes all of it, alone
    assert budget.used == 10
    budget.release(50)
    assert budget.used == 0
