"""The fake's own contract for ``POST /api/assets`` and ``GET /api/agent-servers`` (docs/protocol.md#assets,
#discovery), each reading it offers, and image parts in a create body."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from litellm_conol.fake import (
    AGENT_SERVER_KEY,
    COOKIE_NAME,
    EXTRA_MODELS,
    KNOWN_MODELS,
    FakeConol,
    Preview,
    Scenario,
    ScenarioContext,
    SetStatus,
    Step,
)

pytestmark = pytest.mark.timeout(30)

PNG = b"\x89PNG\r\n\x1a\n" + b"x" * 32


@pytest.fixture(scope="module")
def server():
    with FakeConol() as fake:
        yield fake


@pytest.fixture
def fake(server):
    server.reset()
    return server


@pytest.fixture
def http(fake):
    with httpx.Client(base_url=fake.base_url, cookies={COOKIE_NAME: fake.token}, timeout=10) as client:
        yield client


def upload(http: httpx.Client, data: bytes = PNG, content_type: str = "image/png") -> httpx.Response:
    return http.post("/api/assets", content=data, headers={"Content-Type": content_type})


def create(http: httpx.Client, parts: list[dict]) -> httpx.Response:
    body = {
        "source": {"type": "home"},
        "messages": parts,
        "timezone": "UTC",
        "agentModel": "claude-haiku-4-5",
    }
    return http.post("/api/sessions", json={**body, "agentEffort": "low"})


def test_an_upload_answers_201_with_id_url_and_media_type_and_is_remembered(fake, http):
    first, second = upload(http), upload(http, content_type="image/webp")
    assert (first.status_code, first.json()) == (
        201,
        {"id": "asset_1", "url": "/api/assets/asset_1", "mediaType": "image/png"},
    )
    assert second.json()["id"] == "asset_2"
    stored = fake.assets["asset_1"]
    assert (stored.media_type, stored.size) == ("image/png", len(PNG))


@pytest.mark.parametrize(
    "config, content_type, data, status",
    [
        ({}, "text/plain", PNG, 415),
        ({}, "image/png", b"", 400),
        ({"asset_max_bytes": 16}, "image/png", PNG, 413),
        ({"asset_status": 503}, "image/png", PNG, 503),
        ({"assets": "absent"}, "image/png", PNG, 404),
    ],
)
def test_upload_refusals(fake, http, config, content_type, data, status):
    fake.configure(**config)
    assert upload(http, data, content_type).status_code == status
    assert fake.assets == {}


def test_uploads_need_the_cookie(fake):
    response = httpx.post(f"{fake.base_url}/api/assets", content=PNG, headers={"Content-Type": "image/png"})
    assert response.status_code == 401 and fake.assets == {}


def test_a_create_part_must_name_a_known_asset(fake, http):
    asset = upload(http).json()
    image = {"type": "image", "content": asset["url"], "mediaType": "image/png"}
    ok = create(http, [{"type": "text", "content": "look"}, image])
    assert ok.status_code == 201
    assert fake.last_session.messages == ["look"]
    unknown = create(http, [{"type": "text", "content": "x"}, {**image, "content": "/api/assets/asset_404"}])
    assert (unknown.status_code, unknown.json()) == (
        400,
        {"error": "messages[1] names an unknown asset '/api/assets/asset_404'"},
    )
    no_type = create(http, [{"type": "image", "content": asset["url"]}])
    assert no_type.status_code == 400 and "mediaType" in no_type.json()["error"]


def test_reset_forgets_the_assets(fake, http):
    upload(http)
    fake.reset()
    assert fake.assets == {}


# --- agent servers ---------------------------------------------------------------------------------


def test_the_nested_list_names_every_model_with_modalities_and_efforts(http):
    answer = http.get("/api/agent-servers").json()
    assert isinstance(answer, list) and answer[0]["apiKey"] == AGENT_SERVER_KEY
    agent = answer[0]["capabilities"]["agents"][0]
    names = [model["name"] for model in agent["models"]]
    assert set(names) == set(KNOWN_MODELS) | set(EXTRA_MODELS)
    by_name = {model["name"]: model for model in agent["models"]}
    assert by_name["claude-fable-5"]["efforts"] == ["low", "medium", "high", "xhigh"]
    assert by_name["claude-fable-5"]["inputModalities"] == ["text", "image"]
    assert by_name["deepseek/deepseek-v4-flash"]["efforts"] == ["high", "xhigh"]
    assert by_name["deepseek/deepseek-v4-flash"]["inputModalities"] == ["text"]


@pytest.mark.parametrize("mode", ["agentServers", "servers", "data"])
def test_the_list_can_come_under_a_key(fake, http, mode):
    fake.configure(agent_servers=mode)
    answer = http.get("/api/agent-servers").json()
    assert list(answer) == [mode] and answer[mode][0]["id"] == "server-1"


def test_string_models_and_absent(fake, http):
    fake.configure(agent_servers="strings")
    models = http.get("/api/agent-servers").json()[0]["capabilities"]["agents"][0]["models"]
    assert all(isinstance(model, str) for model in models)
    fake.configure(agent_servers="absent")
    assert http.get("/api/agent-servers").status_code == 404


def test_unknown_modes_are_refused(fake):
    with pytest.raises(ValueError, match="config agent_servers='nested' must be one of list, agentServers"):
        fake.configure(agent_servers="nested")
    with pytest.raises(ValueError, match="config assets='off' must be one of on, absent"):
        fake.configure(assets="off")


def test_scenarios_see_the_transcripts_images_by_content_in_order(fake, http):
    seen: list[tuple[str, ...]] = []

    def steps(ctx: ScenarioContext) -> list[Step]:
        seen.append(ctx.images)
        return [Preview("ok"), SetStatus("completed")]

    fake.add_scenario(Scenario("images_seen", steps))
    other = PNG + b"other"
    first, second = upload(http).json()["url"], upload(http, other).json()["url"]
    image = {"type": "image", "mediaType": "image/png"}
    created = create(http, [{"type": "text", "content": "[[fake:images_seen]]"}, {**image, "content": first}])
    sid = created.json()["sessionId"]
    turn = {
        "messages": [{"type": "text", "content": "more"}, {**image, "content": second}],
        "timezone": "UTC",
    }
    assert http.post(f"/api/sessions/{sid}/messages", json=turn).status_code == 202
    digests = (hashlib.sha256(PNG).hexdigest(), hashlib.sha256(other).hexdigest())
    assert seen == [digests[:1], digests]
    assert fake.session(sid).images == list(digests)
