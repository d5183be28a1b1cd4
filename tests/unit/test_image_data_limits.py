"""Images given inline (core/request/images.py): an oversized data: URL or base64 block is refused before it
is decoded (its size is counted from the encoded length), and the bytes' signature decides the type."""

from __future__ import annotations

import base64
import tracemalloc

import pytest

from litellm_conol import BadRequest, ImageTypeUnsupported
from litellm_conol.core.request.images import ImageLimits, image_of_part

MiB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n"
JPEG = b"\xff\xd8\xff\xe0" + b"jfif"
GIF = b"GIF87a" + b"frames"
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 "
LIMITS = ImageLimits(max_bytes=MiB)


def parts(payload: str, media_type: str = "image/png") -> list[dict]:
    url = f"data:{media_type};base64,{payload}"
    return [
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "input_image", "image_url": url},
        {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": payload}},
    ]


def wrapped(payload: str, width: int = 76) -> str:
    return "\n".join(payload[i : i + width] for i in range(0, len(payload), width)) + "\n"


@pytest.mark.parametrize("shape", [0, 1, 2], ids=["image_url", "input_image", "anthropic-base64"])
@pytest.mark.parametrize("wrap", [False, True], ids=["one-line", "wrapped"])
def test_an_oversized_base64_image_is_refused_before_it_is_decoded(shape, wrap):
    size = 16 * MiB
    payload = base64.b64encode(PNG + bytes(size - len(PNG))).decode()
    part = parts(wrapped(payload) if wrap else payload)[shape]
    tracemalloc.start()
    try:
        with pytest.raises(BadRequest) as caught:
            image_of_part(part, "m", LIMITS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MiB  # decoding would have held 16 MiB (and copies of the 21 MiB text)
    assert (type(caught.value), caught.value.status_code) == (BadRequest, 400)
    assert (
        caught.value.message
        == "m has an image of 16,777,216 bytes, over this deployment's max_image_bytes (1,048,576)"
    )


def test_an_oversized_percent_encoded_data_url_is_refused_before_it_is_decoded():
    url = "data:image/png," + "%00" * (MiB + 1)
    tracemalloc.start()
    try:
        with pytest.raises(BadRequest) as caught:
            image_of_part({"type": "image_url", "image_url": {"url": url}}, "m", LIMITS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MiB
    assert (
        caught.value.message
        == "m has an image of 1,048,577 bytes, over this deployment's max_image_bytes (1,048,576)"
    )


@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize("wrap", [False, True], ids=["one-line", "wrapped"])
def test_the_counted_size_is_exact_at_the_limit(extra, wrap):
    limit = 1000
    data = PNG + bytes(limit + extra - len(PNG))
    payload = base64.b64encode(data).decode()
    for part in parts(wrapped(payload, 7) if wrap else payload):
        if extra <= 0:
            assert image_of_part(part, "m", ImageLimits(max_bytes=limit)).data == data
        else:
            with pytest.raises(BadRequest, match=f"an image of {limit + extra:,} bytes, over"):
                image_of_part(part, "m", ImageLimits(max_bytes=limit))


@pytest.mark.parametrize(
    "data, declared, expected",
    [
        (PNG + b"x", "image/png", "image/png"),
        (JPEG, "image/png", "image/jpeg"),
        (GIF, "image/jpeg", "image/gif"),
        (WEBP, "image/gif", "image/webp"),
    ],
)
def test_the_bytes_signature_decides_the_uploaded_type(data, declared, expected):
    for part in parts(base64.b64encode(data).decode(), declared):
        source = image_of_part(part, "m", ImageLimits())
        assert (source.media_type, source.data) == (expected, data)


@pytest.mark.parametrize(
    "data", [b"<svg xmlns='http://www.w3.org/2000/svg'/>", b"GIF88a", b"RIFF\0\0\0\0WAVE", b"\x89PNG"]
)
def test_bytes_of_no_accepted_type_are_a_400(data):
    from litellm_conol.core.request.images import sniffed_media_type

    for part in parts(base64.b64encode(data).decode()):
        with pytest.raises(ImageTypeUnsupported) as caught:
            image_of_part(part, "m", ImageLimits())
        assert caught.value.status_code == 400
        assert caught.value.message == (
            "m has an image (declared image/png) whose bytes are not image/gif, image/jpeg, image/png, image/webp"
        )
    assert sniffed_media_type(data) is None
