"""Images and run-time discovery through LiteLLM's SDK against the fake conol, in process: the upload
comes before the session, the turn names the asset, an earlier turn's image is not uploaded again,
refusals come before any upload, upload failures are typed, and discovery never waits on the request
path nor leaks the servers' apiKey."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging

import litellm
import pytest

import litellm_conol
from litellm_conol.client.assets import asset_cache
from litellm_conol.client.discovery import discovery_cache
from litellm_conol.core.protocol.endpoint import Endpoint
from litellm_conol.core.request.images import AssetRef
from litellm_conol.fake import AGENT_SERVER_KEY, FakeConol

litellm.suppress_debug_info = True
litellm_conol.register()
pytestmark = pytest.mark.timeout(60)

PNG = b"\x89PNG\r\n\x1a\n" + b"image-one"
OTHER = b"\x89PNG\r\n\x1a\n" + b"image-two"
VISION_MODEL = "conol/claude-haiku-4-5"
TEXT_MODEL = "conol/deepseek-v4-flash"  # the fake's agent servers say: text only
# The deployment names its agent_model: a model the catalog says nothing about (no supports_vision),
# so only discovery can tell that it takes no images.
UNCATALOGUED = {"agent_model": "deepseek/deepseek-v4-flash"}


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def image_turn(text: str, data: bytes = PNG) -> dict:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": data_url(data)}},
        ],
    }


@pytest.fixture
def fake():
    asset_cache.clear()
    discovery_cache.clear()
    with FakeConol() as server:
        yield server
    asset_cache.clear()
    discovery_cache.clear()


def kw(fake: FakeConol, **extra) -> dict:
    return {"api_base": fake.base_url, "api_key": fake.token, **extra}


def paths(fake: FakeConol) -> list[str]:
    return [r.path for r in fake.requests if not r.path.startswith("/api/sessions/")]


def create_body(fake: FakeConol) -> dict:
    return [r for r in fake.requests if r.path == "/api/sessions"][-1].body


def test_a_data_url_is_uploaded_before_the_session_and_named_in_the_turn(fake):
    response = litellm.completion(
        model=VISION_MODEL, messages=[image_turn("What is it? [[fake:echo]]")], **kw(fake)
    )
    assert paths(fake) == ["/api/assets", "/api/sessions"]
    upload = fake.requests[0]
    assert upload.headers["content-type"] == "image/png"
    assert upload.headers["referer"] == fake.base_url + "/home"
    assert next(iter(fake.assets.values())).sha256 == hashlib.sha256(PNG).hexdigest()
    assert create_body(fake)["messages"] == [
        {"type": "text", "content": "What is it? [[fake:echo]]"},
        {"type": "image", "content": "/api/assets/asset_1", "mediaType": "image/png"},
    ]
    assert response.choices[0].message.content == "What is it? [[fake:echo]]"


def test_an_earlier_turns_image_is_not_uploaded_again(fake):
    first = [image_turn("one")]
    litellm.completion(model=VISION_MODEL, messages=first, **kw(fake))
    later = [*first, {"role": "assistant", "content": "a picture"}, image_turn("and this?", OTHER)]
    litellm.completion(model=VISION_MODEL, messages=later, **kw(fake))
    assert paths(fake) == ["/api/assets", "/api/sessions", "/api/assets", "/api/sessions"]
    assert [a.sha256 for a in fake.assets.values()] == [hashlib.sha256(d).hexdigest() for d in (PNG, OTHER)]
    images = [p["content"] for p in create_body(fake)["messages"] if p["type"] == "image"]
    assert images == ["/api/assets/asset_1", "/api/assets/asset_2"]


def test_another_account_uploads_its_own_copy(fake):
    litellm.completion(model=VISION_MODEL, messages=[image_turn("one")], **kw(fake))
    other = FakeConol(token="another-account-token")
    with other:
        litellm.completion(model=VISION_MODEL, messages=[image_turn("one")], **kw(other))
        assert [r.path for r in other.requests][:2] == ["/api/assets", "/api/sessions"]


def test_an_http_url_is_refused_without_any_request(fake):
    messages = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://e.x/a.png"}}]}
    ]
    with pytest.raises(litellm.BadRequestError, match="image_fetch is 'off'"):
        litellm.completion(model=VISION_MODEL, messages=messages, **kw(fake))
    assert fake.requests == []


def test_an_internal_url_is_refused_with_fetching_on_and_nothing_leaves(fake):
    # the fake itself is the internal service here: it must see no request at all
    url = f"{fake.base_url}/api/auth/get-session"
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    with pytest.raises(
        litellm.BadRequestError, match=r"image_url: image URL refused: not a public http\(s\) image"
    ) as caught:
        litellm.completion(model=VISION_MODEL, messages=messages, **kw(fake, image_fetch="public"))
    assert "127.0.0.1" not in str(caught.value)  # the caller learns nothing of the address
    assert fake.requests == []


@pytest.mark.parametrize(
    "config, error, message",
    [
        (
            {"asset_max_bytes": 8},
            litellm.BadRequestError,
            "conol refused an image of 17 bytes as too large (413)",
        ),
        ({"asset_status": 415}, litellm.BadRequestError, "conol refused an image of type image/png (415)"),
        ({"asset_status": 500}, litellm.InternalServerError, "conol failed while uploading an image (500)"),
        (
            {"asset_status": 503},
            litellm.ServiceUnavailableError,
            "conol is unavailable while uploading an image (503)",
        ),
        (
            {"assets": "absent"},
            litellm.BadGatewayError,
            "conol does not accept image uploads here (POST /api/assets answered 404)",
        ),
        (
            {"drift": "asset_renamed"},
            litellm.BadGatewayError,
            "conol's answer to an image upload has no usable asset id",
        ),
    ],
)
def test_upload_failures_are_typed_and_no_session_is_created(fake, config, error, message):
    fake.configure(**config)
    with pytest.raises(error) as caught:
        litellm.completion(model=VISION_MODEL, messages=[image_turn("x")], **kw(fake))
    assert message in str(caught.value)
    assert fake.token not in str(caught.value)
    assert paths(fake) == ["/api/assets"]


def test_a_remembered_asset_gone_from_conol_is_uploaded_afresh_once(fake):
    # e.g. expired on conol: the create names an asset conol no longer knows and is refused (no session)
    gone = AssetRef("/api/assets/asset_99", "image/png")
    asset_cache.put(Endpoint(fake.base_url, fake.token), "sha256:" + hashlib.sha256(PNG).hexdigest(), gone)
    response = litellm.completion(model=VISION_MODEL, messages=[image_turn("x [[fake:echo]]")], **kw(fake))
    assert response.choices[0].message.content == "x [[fake:echo]]"
    assert paths(fake) == ["/api/sessions", "/api/assets", "/api/sessions"]
    assert [r.status for r in fake.requests if r.path == "/api/sessions"] == [400, 201]
    assert create_body(fake)["messages"][1]["content"] == "/api/assets/asset_1"


def test_a_create_refused_for_another_reason_is_not_retried(fake):
    fake.configure(create_status=400)
    with pytest.raises(litellm.BadRequestError, match="injected failure"):
        litellm.completion(model=VISION_MODEL, messages=[image_turn("x")], **kw(fake))
    assert paths(fake) == ["/api/assets", "/api/sessions"]


# --- run-time discovery --------------------------------------------------------------------------


def test_startup_discovery_never_waits_and_then_refuses_images_for_a_text_only_model(fake, caplog):
    caplog.set_level(logging.DEBUG)

    async def run() -> None:
        # the first request goes on with the catalog (it says nothing of vision): the image is sent
        await litellm.acompletion(
            model=TEXT_MODEL, messages=[image_turn("x")], **kw(fake, discovery="startup", **UNCATALOGUED)
        )
        await discovery_cache.settle()
        assert paths(fake).count("/api/agent-servers") == 1
        before = len(fake.requests)
        with pytest.raises(litellm.BadRequestError) as caught:
            await litellm.acompletion(
                model=TEXT_MODEL, messages=[image_turn("x")], **kw(fake, discovery="startup", **UNCATALOGUED)
            )
        assert "conol/deepseek-v4-flash does not take image input (per conol's agent-servers list)" in str(
            caught.value
        )
        assert len(fake.requests) == before  # refused before any upload, and startup fetched only once
        await litellm.acompletion(
            model=VISION_MODEL, messages=[image_turn("y", OTHER)], **kw(fake, discovery="startup")
        )

    asyncio.run(run())
    assert AGENT_SERVER_KEY not in caplog.text


def test_a_failing_discovery_fails_open_and_logs_without_secrets(fake, caplog):
    fake.configure(agent_servers="absent")
    caplog.set_level(logging.INFO, logger="litellm_conol.discovery")

    async def run() -> None:
        for _ in range(2):
            await litellm.acompletion(
                model=TEXT_MODEL, messages=[image_turn("x")], **kw(fake, discovery="interval", **UNCATALOGUED)
            )
            await discovery_cache.settle()

    asyncio.run(run())
    assert "conol offers no /api/agent-servers here: the catalog decides" in caplog.text
    fake.reset()
    fake.configure(drift="agent_servers_renamed")
    discovery_cache.clear()
    caplog.clear()
    asyncio.run(run())
    assert (
        "conol model discovery failed (the catalog decides meanwhile): conol's agent-servers answer is unreadable"
        in caplog.text
    )
    assert fake.token not in caplog.text and AGENT_SERVER_KEY not in caplog.text


def test_discovery_off_asks_nothing(fake):
    litellm.completion(model=TEXT_MODEL, messages=[image_turn("x")], **kw(fake, **UNCATALOGUED))
    assert "/api/agent-servers" not in paths(fake)


def test_the_catalog_refuses_images_for_a_text_only_model_without_discovery(fake):
    with pytest.raises(litellm.BadRequestError) as caught:
        litellm.completion(model=TEXT_MODEL, messages=[image_turn("x")], **kw(fake))
    assert "conol/deepseek-v4-flash does not take image input (per the model catalog)" in str(caught.value)
    assert fake.requests == []  # refused before any upload or session


def test_a_bad_discovery_option_is_a_400_before_any_request(fake):
    with pytest.raises(
        litellm.BadRequestError, match="discovery must be one of 'off', 'startup', 'interval', got 'yes'"
    ):
        litellm.completion(model=VISION_MODEL, messages=[image_turn("x")], **kw(fake, discovery="yes"))
    assert fake.requests == []
