"""Images in a request → what conol receives (docs/protocol.md#assets): pure parts, decoding and limits.

conol sees an image only as an uploaded asset (``POST /api/assets``, then a part
``{"type": "image", "content": "/api/assets/<id>", "mediaType": …}``). Rendering cannot upload, so an
image becomes an :class:`ImageSource` (the bytes of a ``data:`` URL, or an ``http(s)`` URL the
deployment allows fetching) and a pending
:class:`~litellm_conol.core.protocol.wire.ImagePart` naming it by content hash; the client uploads
and :func:`resolve_images` fills the asset paths in before the session is created.
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote_to_bytes, urlsplit

from ..errors import BadRequest, ImageTypeUnsupported
from ..models.catalog import CatalogModel
from ..protocol import paths
from ..protocol.wire import CreateSessionBody, ImagePart, MessagePart
from ..settings import Settings

if TYPE_CHECKING:
    from ..models.discovery import Discovered

ImageFetch = Literal["off", "public"]

PENDING_PREFIX = "pending-image:"
ASSET_ID = re.compile(r"[A-Za-z0-9_-]+")  # any other asset id is refused (docs/protocol.md#assets)
# What every vision model behind conol reads; others (svg, tiff, heic) are refused here, not there.
MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_IMAGES = 20
DEFAULT_FETCH_TIMEOUT = 10.0
DEFAULT_FETCH_PORTS = frozenset({80, 443})
DEFAULT_URL_CACHE_TTL = 3600.0
DEFAULT_IMAGE_BYTES_IN_FLIGHT = 128 * 1024 * 1024  # fetched images' bytes held at once, per process
DATA_URL_HEADER_LIMIT = 1024  # "image/png;base64" and a few parameters: the comma comes early
# Percent-encoded (not base64) image data is decoded one escape at a time, an object per escape: a few
# KiB of an icon cost nothing, 30 MB cost gigabytes and seconds of the event loop. Refused above this
# many characters, before anything is decoded (images-and-discovery.md#what-the-bytes-say).
MAX_PERCENT_ENCODED_CHARS = 64 * 1024
_WHITESPACE = " \t\n\r\x0b\x0c"
_WHITESPACE_BYTES = _WHITESPACE.encode()
_LEADING_SPACE = re.compile(r"\s*")


@dataclass(frozen=True)
class ImageLimits:
    """Per deployment: ``image_fetch`` (off | public), ``max_image_bytes``, ``max_images``,
    ``image_fetch_timeout`` (seconds, for all of one request's fetches together), the ports a fetch
    may connect to, and how long a fetched URL's asset is remembered (seconds)."""

    fetch: ImageFetch = "off"
    max_bytes: int = DEFAULT_MAX_IMAGE_BYTES
    max_images: int = DEFAULT_MAX_IMAGES
    fetch_timeout: float = DEFAULT_FETCH_TIMEOUT
    fetch_ports: frozenset[int] = DEFAULT_FETCH_PORTS
    url_cache_ttl: float = DEFAULT_URL_CACHE_TTL


@dataclass(frozen=True)
class ImageSource:
    """One image of the request: its bytes (from a ``data:`` URL or base64 block), or the http(s)
    URL to fetch. ``key`` names it in the pending part: the content hash, or the URL's hash."""

    key: str
    media_type: str | None = None
    data: bytes | None = field(default=None, repr=False)
    url: str | None = None

    @property
    def pending(self) -> str:
        return PENDING_PREFIX + self.key


@dataclass(frozen=True)
class AssetRef:
    """conol's answer to an upload: where the asset is and what type it was stored as."""

    path: str
    media_type: str


def content_key(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def image_limits(settings: Settings) -> ImageLimits:
    """The call's image options (``image_fetch``, ``max_image_bytes``, ``max_images``,
    ``image_fetch_timeout``, ``image_fetch_ports``, ``image_url_cache_ttl``), as the settings read them."""
    return ImageLimits(
        fetch="public" if settings["image_fetch"] == "public" else "off",
        max_bytes=settings["max_image_bytes"],
        max_images=settings["max_images"],
        fetch_timeout=settings["image_fetch_timeout"],
        fetch_ports=settings["image_fetch_ports"],
        url_cache_ttl=settings["image_url_cache_ttl"],
    )


def image_of_part(part: Mapping[str, Any], where: str, limits: ImageLimits) -> ImageSource:
    """An OpenAI ``image_url`` part, a Responses ``input_image`` part or an Anthropic ``image``
    block (base64 or url ``source``) → the image to upload; a clear 400 for anything unusable."""
    kind = part.get("type")
    if kind == "image":
        return _anthropic_block(part.get("source"), where, limits)
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    # no strip(): a data: URL can be tens of MiB, and a stripped copy would hold it twice
    if not isinstance(url, str) or not url or url.isspace():
        raise BadRequest(f"{where} has an {kind} part without a URL")
    return image_of_url(url, where, limits)


def _anthropic_block(source: Any, where: str, limits: ImageLimits) -> ImageSource:
    if not isinstance(source, Mapping):
        raise BadRequest(f"{where} has an image block without a source")
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        return image_of_url(source["url"], where, limits)
    if source.get("type") != "base64" or not isinstance(source.get("data"), str):
        raise BadRequest(f"{where} has an image block whose source is not base64 data or a url")
    media_type = _media_type(str(source.get("media_type") or ""), where)
    return _decoded(_base64(source["data"], 0, where, limits.max_bytes), media_type, where, limits)


def image_of_url(url: str, where: str, limits: ImageLimits) -> ImageSource:
    """A ``data:`` URL is decoded here; an ``http(s)`` URL is kept for the client to fetch, only
    when the deployment allows it; any other scheme is refused."""
    start = _leading_space(url)
    scheme = url[start : start + 16].partition(":")[0].lower()  # a slice: the URL may be huge
    if scheme == "data":
        media_type, data = _data_url(url, start, where, limits.max_bytes)
        return _decoded(data, media_type, where, limits)
    url = url.strip()
    if scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise BadRequest(f"{where} has an image URL that is neither a data: URL nor an http(s) URL")
    if limits.fetch == "off":
        raise BadRequest(
            f"{where} has an image given by http(s) URL, which this deployment does not fetch "
            "(image_fetch is 'off'): send the image as a data: URL (base64), or set image_fetch: "
            "public on the deployment"
        )
    return ImageSource(key=url_key(url, limits), url=url)


def url_key(url: str, limits: ImageLimits) -> str:
    """The key of an image URL: the URL and the limits it is fetched under (largest image, ports), so
    an asset fetched under one deployment's limits is never reused under tighter ones."""
    ports = ",".join(str(port) for port in sorted(limits.fetch_ports))
    return "url:" + hashlib.sha256(f"{url}\0{limits.max_bytes}\0{ports}".encode()).hexdigest()


def decode_data_url(url: str, where: str = "image", max_bytes: int | None = None) -> tuple[str, bytes]:
    """``data:image/png;base64,…`` → (media type, bytes); 400 naming what is wrong. With
    ``max_bytes``, a payload that must decode to more is refused before it is decoded."""
    return _data_url(url, _leading_space(url), where, max_bytes)


def _leading_space(text: str) -> int:
    match = _LEADING_SPACE.match(text)
    return match.end() if match else 0


def _data_url(url: str, start: int, where: str, max_bytes: int | None) -> tuple[str, bytes]:
    """The data: URL starting at ``url[start]``; the payload is measured in place (offsets into
    ``url``, no copy) and refused when too large, before it is sliced or decoded."""
    comma = url.find(",", start + 5, start + 5 + DATA_URL_HEADER_LIMIT)
    if comma < 0:
        raise BadRequest(f"{where} has a data: URL without a comma before its data")
    kinds = [item.strip().lower() for item in url[start + 5 : comma].split(";")]
    media_type = _media_type(kinds[0], where)
    if "base64" in kinds[1:]:
        return media_type, _base64(url, comma + 1, where, max_bytes)
    n = len(url) - comma - 1
    if n > MAX_PERCENT_ENCODED_CHARS:
        raise percent_encoded_refusal(n, where)
    if max_bytes is not None:
        # each byte is one character or a three-character %XX, and each "%" saves at most two
        at_least = max(-(-n // 3), n - 2 * url.count("%", comma + 1))
        _refuse_over(at_least, max_bytes, where)
    return media_type, unquote_to_bytes(url[comma + 1 :].strip())


def percent_encoded_refusal(chars: int, where: str) -> BadRequest:
    return BadRequest(
        f"{where} has an image in a data: URL that is not base64 and {chars:,} characters long; such "
        f"data is taken up to {MAX_PERCENT_ENCODED_CHARS:,} characters: send the image base64-encoded "
        "(data:image/png;base64,…)"
    )


def long_percent_encoded(url: Any) -> int | None:
    """The length of ``url``'s data when it is a ``data:`` URL that is not base64 and longer than
    MAX_PERCENT_ENCODED_CHARS (what :func:`image_of_url` refuses); ``None`` otherwise. Looks at the
    first characters only, whatever the URL's length."""
    if not isinstance(url, str) or len(url) <= MAX_PERCENT_ENCODED_CHARS:
        return None
    start = _leading_space(url)
    if url[start : start + 5].lower() != "data:":
        return None
    comma = url.find(",", start + 5, start + 5 + DATA_URL_HEADER_LIMIT)
    if comma < 0 or "base64" in [kind.strip() for kind in url[start + 5 : comma].lower().split(";")[1:]]:
        return None
    chars = len(url) - comma - 1
    return chars if chars > MAX_PERCENT_ENCODED_CHARS else None


def _base64(text: str, start: int, where: str, max_bytes: int | None) -> bytes:
    """The base64 in ``text[start:]`` decoded; one that must decode to more than ``max_bytes`` is
    refused first: decoding an oversized payload would hold it (and its copies) in memory."""
    spaces = sum(text.count(c, start) for c in _WHITESPACE)
    if max_bytes is not None:
        _refuse_over(_base64_size(text, start, spaces), max_bytes, where)
    try:
        # One copy of the text as bytes, the whitespace deleted in one pass (splitting it out made an
        # object per piece), decoded from an offset (slicing would copy it again).
        head = text[:start]
        head_spaces = sum(head.count(c) for c in _WHITESPACE)
        offset, encoded = len(head.encode()), text.encode()
        if spaces or head_spaces:
            encoded, offset = encoded.translate(None, _WHITESPACE_BYTES), offset - head_spaces
        return binascii.a2b_base64(memoryview(encoded)[offset:], strict_mode=True)
    except (binascii.Error, ValueError):  # a non-ASCII character (or a lone surrogate): not base64
        raise BadRequest(f"{where} has image data that is not valid base64") from None


def _base64_size(text: str, start: int, spaces: int) -> int:
    """What valid base64 in ``text[start:]`` decodes to, in bytes, counted without decoding."""
    # the padding is at the end, perhaps followed by a line break: the last few characters say
    padding, index, stop = 0, len(text) - 1, max(start, len(text) - 64) - 1
    while index > stop and padding < 2 and (text[index] == "=" or text[index] in _WHITESPACE):
        padding += text[index] == "="
        index -= 1
    return (len(text) - start - spaces) * 3 // 4 - padding


def _refuse_over(size: int, max_bytes: int, where: str) -> None:
    if size > max_bytes:
        raise BadRequest(
            f"{where} has an image of {size:,} bytes, over this deployment's max_image_bytes ({max_bytes:,})"
        )


def _media_type(value: str, where: str) -> str:
    media_type = value.strip().lower()
    if media_type == "image/jpg":
        media_type = "image/jpeg"
    if media_type not in MEDIA_TYPES:
        raise BadRequest(
            f"{where} has an image of type {value or 'none'!r}; supported: {', '.join(sorted(MEDIA_TYPES))}"
        )
    return media_type


def _decoded(data: bytes, media_type: str, where: str, limits: ImageLimits) -> ImageSource:
    check_image_bytes(data, limits.max_bytes, where)
    media_type = image_type(data, media_type, where)
    return ImageSource(key=content_key(data), media_type=media_type, data=data)


def check_image_bytes(data: bytes, max_bytes: int, where: str) -> None:
    if not data:
        raise BadRequest(f"{where} has an empty image")
    _refuse_over(len(data), max_bytes, where)


def sniffed_media_type(data: bytes) -> str | None:
    """The accepted image type ``data`` starts with (its signature), or ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_type(data: bytes, declared: str, where: str) -> str:
    """The type to upload ``data`` as: what its signature says, whatever was declared (a declared
    type is the caller's word; the bytes are what the model reads). Bytes of no accepted type are a
    400."""
    sniffed = sniffed_media_type(data)
    if sniffed is None:
        raise ImageTypeUnsupported(
            f"{where} has an image (declared {declared}) whose bytes are not {_accepted()}",
            status_code=400,
        )
    return sniffed


def _accepted() -> str:
    return ", ".join(sorted(MEDIA_TYPES))


def fetched_media_type(content_type: str | None, where: str) -> str:
    """The ``Content-Type`` of a fetched image, which must be an image type we send on."""
    return _media_type((content_type or "").partition(";")[0], where)


def asset_ref(answer: Any) -> AssetRef | None:
    """conol's upload answer ``{id, url, mediaType}`` → the part's path; ``None`` when unusable.

    The part always names ``/api/assets/<id>`` (docs/protocol.md#assets; the answer's ``url`` is
    the same path): a ``url`` from the answer never goes into a turn verbatim."""
    if not isinstance(answer, Mapping):
        return None
    asset_id = answer.get("id")
    if not isinstance(asset_id, str) or not ASSET_ID.fullmatch(asset_id):
        return None
    media_type = answer.get("mediaType")
    return AssetRef(path=paths.asset(asset_id), media_type=media_type if isinstance(media_type, str) else "")


def check_images(
    model: CatalogModel, images: Mapping[str, ImageSource], limits: ImageLimits, discovered: Discovered | None
) -> None:
    """Refuse, before any upload, images for a model that does not take them (the account's agent
    servers say so, else the catalog; when neither says, the images are sent) and too many images."""
    if not images:
        return
    if len(images) > limits.max_images:
        raise BadRequest(
            f"the request has {len(images)} images, over this deployment's max_images ({limits.max_images})"
        )
    said = discovered.supports_vision(model.agent_model) if discovered is not None else None
    source = "conol's agent-servers list"
    if said is None:
        said, source = model.supports_vision, "the model catalog"
    if said is False:
        raise BadRequest(
            f"conol/{model.id} does not take image input (per {source}), and the request has "
            f"{len(images)} image(s): use a model that does, or send text only"
        )


def resolve_images(body: CreateSessionBody, assets: Mapping[str, AssetRef]) -> CreateSessionBody:
    """``body`` with each pending image part naming its uploaded asset (and its stored media type)."""
    parts = resolve_parts(body.messages, assets)
    return body if parts is body.messages else body.model_copy(update={"messages": parts})


def resolve_parts(parts: list[MessagePart], assets: Mapping[str, AssetRef]) -> list[MessagePart]:
    """``parts`` with each pending image naming its uploaded asset; ``parts`` itself when none is pending."""
    resolved: list[MessagePart] = []
    changed = False
    for part in parts:
        if isinstance(part, ImagePart) and part.content.startswith(PENDING_PREFIX):
            asset = assets[part.content.removeprefix(PENDING_PREFIX)]
            part = ImagePart(content=asset.path, media_type=asset.media_type or part.media_type)
            changed = True
        resolved.append(part)
    return resolved if changed else parts
