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


def peak_of(call, *args):
    """(what ``call(*args)`` returned or raised, the peak of memory traced while it ran)."""
    tracemalloc.start()
    try:
        try:
            result = call(*args)
        except BadRequest as refusal:
            result = refusal
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_percent_encoded_data_url_is_refused_before_anything_is_decoded():
    """24 MB of ``%XX`` (8 MB of bytes, within the default cap): decoding it one escape at a time took
    gigabytes and seconds of the event loop. Refused at once, holding nothing."""
    data = PNG + bytes(8_000_000 - len(PNG))
    url = "data:image/png,%" + data.hex("%")
    refusal, peak = peak_of(
        image_of_part, {"type": "image_url", "image_url": {"url": url}}, "m", ImageLimits()
    )
    assert peak < 64 * 1024
    assert isinstance(refusal, BadRequest) and refusal.message == (
        "m has an image in a data: URL that is not base64 and 24,000,000 characters long; such data is "
        "taken up to 65,536 characters: send the image base64-encoded (data:image/png;base64,…)"
    )


def test_a_small_percent_encoded_image_is_taken_and_measured_against_max_image_bytes():
    icon = PNG + b"\x00\x01 tiny"
    url = "data:image/png," + "".join(f"%{b:02X}" if b > 0x7E or b < 0x30 else chr(b) for b in icon)
    assert image_of_part({"type": "image_url", "image_url": {"url": url}}, "m", LIMITS).data == icon
    with pytest.raises(BadRequest) as caught:
        image_of_part({"type": "image_url", "image_url": {"url": url}}, "m", ImageLimits(max_bytes=10))
    assert caught.value.message == "m has an image of 15 bytes, over this deployment's max_image_bytes (10)"


def test_base64_broken_by_whitespace_everywhere_decodes_without_an_object_per_piece():
    """``"iV BO Rw …"``: split into pieces it held an object per piece (about 25 times the text)."""
    data = PNG + bytes(1_500_000 - len(PNG))
    encoded = base64.b64encode(data).decode()
    payload = " ".join(encoded[i : i + 2] for i in range(0, len(encoded), 2))
    image, peak = peak_of(image_of_part, parts(payload)[0], "m", ImageLimits(max_bytes=2 * MiB))
    assert image.data == data
    # the text as bytes, then without the spaces (bytes.translate sizes its result as its input):
    # about 2 times the text; an object per piece held about 30 times it
    assert peak < 3 * len(payload)


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
