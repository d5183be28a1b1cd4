"""Uploading a request's images (``POST /api/assets``, docs/protocol.md#assets), each once per conversation.

A chat client re-sends the whole conversation every turn, earlier images included. Uploads are
remembered by content hash (and a fetched URL by its URL and the limits it was fetched under, for
``url_cache_ttl`` seconds: what a URL serves may change, and another deployment may allow less), per
conol account, base URL and caller (docs/session-reuse.md#whose-sessions),
so an image already uploaded is named again, not sent again, and never another caller's upload. The
account is keyed by a hash of its token: the token itself is never stored here.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import httpx

from ..core.errors import ConolError, ImageTooLarge, ImageTypeUnsupported, UpstreamError
from ..core.protocol import paths
from ..core.protocol.endpoint import Endpoint
from ..core.request.images import AssetRef, ImageLimits, ImageSource, asset_ref, content_key
from .fetch import ImageFetcher
from .http_errors import error_for_response, error_for_transport

CACHE_SIZE = 4096  # uploads remembered per process (a few hundred bytes each)


@dataclass
class AssetCache:
    """Uploaded assets by (conol, account and caller, image key), each with when it was stored; least
    recently used dropped first. ``caller``: the request's caller digest (``""``: none). ``clock`` is
    for tests."""

    size: int = CACHE_SIZE
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[tuple[str, str, str], tuple[AssetRef, float]] = field(default_factory=OrderedDict)

    def get(
        self, endpoint: Endpoint, key: str, max_age: float | None = None, *, caller: str = ""
    ) -> AssetRef | None:
        """The asset remembered for ``key``; ``None`` (and forgotten) when older than ``max_age``."""
        entry_key = self._key(endpoint, key, caller)
        entry = self._entries.get(entry_key)
        if entry is None:
            return None
        if max_age is not None and self.clock() - entry[1] > max_age:
            del self._entries[entry_key]
            return None
        self._entries.move_to_end(entry_key)
        return entry[0]

    def put(self, endpoint: Endpoint, key: str, asset: AssetRef, *, caller: str = "") -> None:
        entry_key = self._key(endpoint, key, caller)
        self._entries[entry_key] = (asset, self.clock())
        self._entries.move_to_end(entry_key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def forget(self, endpoint: Endpoint, assets: Iterable[AssetRef], *, caller: str = "") -> None:
        """Drop every entry of this account and caller naming one of ``assets`` (gone from conol)."""
        paths = {asset.path for asset in assets}
        account = self._key(endpoint, "", caller)[:2]
        for key in [k for k, v in self._entries.items() if k[:2] == account and v[0].path in paths]:
            del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _key(endpoint: Endpoint, key: str, caller: str) -> tuple[str, str, str]:
        scope = endpoint.token + (f"\0{caller}" if caller else "")
        account = hashlib.sha256(scope.encode()).hexdigest()[:32]
        return endpoint.base_url.rstrip("/"), account, key


asset_cache = AssetCache()


@dataclass
class ImageTally:
    """What one request's images cost upstream: uploads made (``POST /api/assets``) and image URLs
    fetched (the operator's metrics, docs/metrics.md)."""

    uploads: int = 0
    url_fetches: int = 0


async def upload_asset(
    endpoint: Endpoint, client: httpx.AsyncClient, data: bytes, media_type: str, timeout: float = 60.0
) -> AssetRef:
    """``POST /api/assets`` with the raw bytes; typed errors for 413 / 415, the usual for the rest."""
    doing = "uploading an image"
    origin = endpoint.url("").rstrip("/")
    headers = endpoint.headers() | {"Content-Type": media_type, "Referer": origin + "/home"}
    try:
        response = await client.post(
            endpoint.url(paths.ASSETS), content=data, headers=headers, timeout=timeout
        )
    except httpx.HTTPError as exc:
        raise error_for_transport(exc, doing, secrets=(endpoint.token,)) from None
    # httpx's response and its stream refer to each other, and the response holds the request and so
    # the image: only the cyclic garbage collector would free it, some time later. Read, the stream is
    # done with: replaced, the image goes with the response (the byte budget counted it as gone).
    response.stream = httpx.ByteStream(b"")
    if response.status_code == 413:
        raise ImageTooLarge(f"conol refused an image of {len(data):,} bytes as too large (413)")
    if response.status_code == 415:
        raise ImageTypeUnsupported(f"conol refused an image of type {media_type} (415)")
    if response.status_code == 404:
        raise UpstreamError(
            "conol does not accept image uploads here (POST /api/assets answered 404): the request "
            "has images; send it without them, or run `litellm-conol doctor`",
            status_code=502,
        )
    if not response.is_success:
        raise error_for_response(response, doing, secrets=(endpoint.token,))
    try:
        answer = json.loads(response.content)
    except ValueError:
        answer = None
    asset = asset_ref(answer)
    if asset is None:
        keys = sorted(answer)[:8] if isinstance(answer, dict) else type(answer).__name__
        raise UpstreamError(f"conol's answer to an image upload has no usable asset id ({keys})")
    return asset if asset.media_type else AssetRef(asset.path, media_type)


async def upload_images(
    endpoint: Endpoint,
    client: httpx.AsyncClient,
    images: Mapping[str, ImageSource],
    limits: ImageLimits,
    *,
    cache: AssetCache = asset_cache,
    fetcher: ImageFetcher | None = None,
    caller: str = "",
    tally: ImageTally | None = None,
) -> dict[str, AssetRef]:
    """Each image's asset, by its pending key: from the cache, else uploaded. The http(s) images not
    remembered (a URL for ``limits.url_cache_ttl`` seconds, under the limits it was fetched with) are
    fetched first, a few at a time under the request's one fetch budget (``limits.fetch_timeout``),
    and each is uploaded as it arrives (its bytes never wait for the others'); then the decoded ones.
    ``caller``: whose uploads are reused; ``tally`` counts the uploads and fetches made."""
    tally = tally or ImageTally()
    assets: dict[str, AssetRef] = {}
    to_fetch: dict[str, str] = {}
    for key, source in images.items():
        max_age = limits.url_cache_ttl if source.url is not None else None
        asset = cache.get(endpoint, key, max_age, caller=caller)
        if asset is not None:
            assets[key] = asset
        elif source.data is None:
            to_fetch[key] = source.url or ""

    async def uploaded(key: str, data: bytes, media_type: str) -> None:
        assets[key] = await _upload(endpoint, client, data, media_type, cache, caller, tally)
        cache.put(endpoint, key, assets[key], caller=caller)

    if to_fetch:
        tally.url_fetches += len(to_fetch)
        keys = list(to_fetch)
        fetcher = fetcher or ImageFetcher(
            timeout=limits.fetch_timeout, max_bytes=limits.max_bytes, allowed_ports=limits.fetch_ports
        )
        await fetcher.fetch_each(
            list(to_fetch.values()), lambda index, data, kind: uploaded(keys[index], data, kind), "image_url"
        )
    for key, source in images.items():
        if key not in assets:
            await uploaded(key, source.data or b"", source.media_type or "")
    return {key: assets[key] for key in images}


async def _upload(
    endpoint: Endpoint,
    client: httpx.AsyncClient,
    data: bytes,
    media_type: str,
    cache: AssetCache,
    caller: str,
    tally: ImageTally,
) -> AssetRef:
    by_content = content_key(data)
    asset = cache.get(endpoint, by_content, caller=caller)
    if asset is None:
        try:
            asset = await upload_asset(endpoint, client, data, media_type)
            tally.uploads += 1
        except ConolError as exc:
            exc.message = exc.message.replace(endpoint.token, "***") if endpoint.token else exc.message
            raise
        cache.put(endpoint, by_content, asset, caller=caller)
    return asset
