"""The pure image parts (core/request/images.py, the rendering of image parts): decoding, limits, the three
request shapes, the vision refusal before any upload, and filling in the uploaded assets."""

from __future__ import annotations

import base64
import hashlib

import pytest

from litellm_conol import BadRequest
from litellm_conol.core.config.boundary import settings_of
from litellm_conol.core.config.options import build_request
from litellm_conol.core.models.catalog import CatalogModel
from litellm_conol.core.models.discovery import Discovered, DiscoveredModel
from litellm_conol.core.protocol.wire import ImagePart, TextPart
from litellm_conol.core.request.images import (
    AssetRef,
    ImageLimits,
    asset_ref,
    decode_data_url,
    image_limits,
    image_of_part,
    resolve_images,
)
from litellm_conol.core.request.render import render_messages

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"
PNG_B64 = base64.b64encode(PNG).decode()
DATA_URL = f"data:image/png;base64,{PNG_B64}"
KEY = "sha256:" + hashlib.sha256(PNG).hexdigest()


def user(*parts: dict) -> list[dict]:
    return [{"role": "user", "content": list(parts)}]


def request(messages: list[dict], model: str = "conol/claude-haiku-4-5", discovered=None, **params):
    return build_request(
        model=model,
        messages=messages,
        api_key="tok",
        api_base="http://conol.invalid",
        optional_params=params,
        timeout=None,
        discovered=discovered,
    )


# --- data: URLs and the three part shapes --------------------------------------------------------


def test_a_base64_data_url_decodes_to_its_bytes_and_type():
    assert decode_data_url(DATA_URL) == ("image/png", PNG)
    assert decode_data_url("data:image/JPG;base64," + PNG_B64) == ("image/jpeg", PNG)
    assert decode_data_url("data:image/gif,GIF89a%00") == ("image/gif", b"GIF89a\x00")


@pytest.mark.parametrize(
    "url, problem",
    [
        ("data:image/png;base64" + PNG_B64, "without a comma"),
        ("data:image/png;base64,@@@", "not valid base64"),
        ("data:image/svg+xml;base64," + PNG_B64, "of type 'image/svg+xml'"),
        ("data:text/plain;base64," + PNG_B64, "of type 'text/plain'"),
    ],
)
def test_a_bad_data_url_is_a_400_naming_the_problem(url, problem):
    with pytest.raises(BadRequest, match=problem.replace("+", r"\+")):
        decode_data_url(url, "messages[0].content")


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image_url", "image_url": {"url": DATA_URL}},
        {"type": "image_url", "image_url": DATA_URL},
        {"type": "input_image", "image_url": DATA_URL},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
    ],
    ids=["openai", "openai-string", "responses-input_image", "anthropic-base64"],
)
def test_every_request_shape_gives_the_same_image(part):
    source = image_of_part(part, "m", ImageLimits())
    assert (source.key, source.media_type, source.data, source.url) == (KEY, "image/png", PNG, None)


def test_images_follow_their_message_text_and_are_collected_once_by_content():
    images: dict = {}
    messages = [
        *user({"type": "text", "text": "first"}, {"type": "image_url", "image_url": {"url": DATA_URL}}),
        {"role": "assistant", "content": "seen"},
        *user({"type": "image_url", "image_url": {"url": DATA_URL}}, {"type": "text", "text": "again"}),
    ]
    parts = render_messages(messages, ImageLimits(), images)
    pending = "pending-image:" + KEY
    assert [p.model_dump(by_alias=True) for p in parts] == [
        {"type": "text", "content": "first"},
        {"type": "image", "content": pending, "mediaType": "image/png"},
        {"type": "text", "content": "[Assistant]\nseen"},
        {"type": "text", "content": "again"},
        {"type": "image", "content": pending, "mediaType": "image/png"},
    ]
    assert list(images) == [KEY]


def test_a_message_of_only_an_image_is_sent():
    parts = render_messages(user({"type": "image_url", "image_url": {"url": DATA_URL}}), ImageLimits())
    assert [type(p) for p in parts] == [ImagePart]


# --- http(s) URLs and the limits -----------------------------------------------------------------


def test_an_http_url_is_refused_by_default_naming_the_option():
    with pytest.raises(BadRequest) as caught:
        request(user({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}))
    assert caught.value.status_code == 400
    assert caught.value.message == (
        "messages[0].content has an image given by http(s) URL, which this deployment does not fetch "
        "(image_fetch is 'off'): send the image as a data: URL (base64), or set image_fetch: public on "
        "the deployment"
    )


def test_with_image_fetch_public_an_http_url_is_kept_for_the_client_to_fetch():
    built = request(
        user({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}), image_fetch="public"
    )
    (source,) = built.images.values()
    assert (source.url, source.data, built.image_limits.fetch) == (
        "https://example.com/a.png",
        None,
        "public",
    )


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/a.png", "gopher://x/", "http:///nohost"]
)
def test_other_schemes_are_refused_even_with_fetching_on(url):
    with pytest.raises(BadRequest, match="neither a data: URL nor an http"):
        request(user({"type": "image_url", "image_url": {"url": url}}), image_fetch="public")


def test_an_image_over_max_image_bytes_is_a_400():
    with pytest.raises(
        BadRequest, match=r"an image of 14 bytes, over this deployment's max_image_bytes \(10\)"
    ):
        request(user({"type": "image_url", "image_url": {"url": DATA_URL}}), max_image_bytes=10)


def test_more_images_than_max_images_is_a_400():
    other = "data:image/png;base64," + base64.b64encode(PNG + b"other").decode()
    parts = [{"type": "image_url", "image_url": {"url": u}} for u in (DATA_URL, other)]
    with pytest.raises(BadRequest, match=r"has 2 images, over this deployment's max_images \(1\)"):
        request(user(*parts), max_images=1)


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"image_fetch": "any"}, "image_fetch must be one of 'off', 'public', got 'any'"),
        ({"max_image_bytes": 0}, "max_image_bytes must be a whole number from 1 to 52428800, got 0"),
        (
            {"max_image_bytes": 10**9},
            "max_image_bytes must be a whole number from 1 to 52428800, got 1000000000",
        ),
        ({"max_images": 101}, "max_images must be a whole number from 1 to 100, got 101"),
        (
            {"image_fetch_timeout": 0},
            "image_fetch_timeout must be a number of seconds more than 0 and at most 120, got 0",
        ),
    ],
)
def test_bad_image_options_are_a_400_naming_them(params, problem):
    with pytest.raises(BadRequest, match=problem):
        image_limits(settings_of(params))


# --- a model without image input -----------------------------------------------------------------

TEXT_ONLY = Discovered(models=(DiscoveredModel("claude-haiku-4-5", input_modalities=("text",)),))
VISION = Discovered(models=(DiscoveredModel("claude-haiku-4-5", input_modalities=("text", "image")),))


def test_discovery_saying_text_only_refuses_images_before_any_upload():
    with pytest.raises(BadRequest) as caught:
        request(user({"type": "image_url", "image_url": {"url": DATA_URL}}), discovered=TEXT_ONLY)
    assert caught.value.message == (
        "conol/claude-haiku-4-5 does not take image input (per conol's agent-servers list), and the "
        "request has 1 image(s): use a model that does, or send text only"
    )


def test_the_catalog_saying_text_only_refuses_images(monkeypatch, tmp_path):
    extra = tmp_path / "m.json"
    extra.write_text('{"models": [{"id": "blind-1", "agent_model": "v/blind-1", "supports_vision": false}]}')
    monkeypatch.setenv("CONOL_MODELS_EXTRA", str(extra))
    with pytest.raises(
        BadRequest, match=r"conol/blind-1 does not take image input \(per the model catalog\)"
    ):
        request(user({"type": "image_url", "image_url": {"url": DATA_URL}}), model="conol/blind-1")
    assert request([{"role": "user", "content": "text is fine"}], model="conol/blind-1").images == {}


def test_discovery_overrides_the_catalog_and_unknown_sends_the_image():
    assert list(
        request(user({"type": "image_url", "image_url": {"url": DATA_URL}}), discovered=VISION).images
    ) == [KEY]
    assert list(request(user({"type": "image_url", "image_url": {"url": DATA_URL}})).images) == [KEY]


def test_the_discovered_effort_ladder_reaches_the_request():
    ladder = Discovered(models=(DiscoveredModel("claude-haiku-4-5", efforts=("minimal", "high")),))
    assert request([{"role": "user", "content": "x"}], discovered=ladder).effort_ladder == ("minimal", "high")
    # without discovery: the catalog's ladder (models.json effort_ladders)
    assert request([{"role": "user", "content": "x"}]).effort_ladder == ("low", "medium", "high")
    # the discovered ladder is what the effort is clamped onto: xhigh asked, xhigh is not on it
    clamped = request([{"role": "user", "content": "x"}], discovered=ladder, reasoning_effort="xhigh")
    assert clamped.body.agent_effort == "high"


# --- after the upload ----------------------------------------------------------------------------


def test_resolving_fills_in_the_asset_path_and_stored_type_and_repair_bodies_stay_resolvable():
    built = request(
        user({"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": DATA_URL}})
    )
    assets = {KEY: AssetRef("/api/assets/asset_1", "image/png")}
    body = resolve_images(built.body, assets)
    assert [p.model_dump(by_alias=True) for p in body.messages] == [
        {"type": "text", "content": "see"},
        {"type": "image", "content": "/api/assets/asset_1", "mediaType": "image/png"},
    ]
    assert b'"mediaType":"image/png"' in body.to_json()
    repair = resolve_images(
        built.body_for(
            [*user({"type": "image_url", "image_url": {"url": DATA_URL}}), {"role": "user", "content": "fix"}]
        ),
        assets,
    )
    assert [p.content for p in repair.messages] == ["/api/assets/asset_1", "fix"]
    text_only = built.body.model_copy(update={"messages": [TextPart(content="x")]})
    assert resolve_images(text_only, {}) is text_only


@pytest.mark.parametrize(
    "answer, expected",
    [
        (
            {"id": "asset_1", "url": "/api/assets/asset_1", "mediaType": "image/png"},
            AssetRef("/api/assets/asset_1", "image/png"),
        ),
        ({"id": "a-B_9", "url": "https://elsewhere.invalid/x"}, AssetRef("/api/assets/a-B_9", "")),
        ({"id": "../../etc", "url": "/api/assets/../../etc"}, None),
        ({"assetId": "asset_1"}, None),
        (["asset_1"], None),
    ],
)
def test_the_upload_answer_is_read_and_an_odd_id_refused(answer, expected):
    assert asset_ref(answer) == expected


def test_catalog_model_vision_defaults_to_unknown():
    assert CatalogModel("x", "y").supports_vision is None
