"""The operator/caller boundary through the real proxy (docs/configuration.md#who-sets-what).

The table: every option a caller may not set (``operator`` and ``narrow``: :data:`NOT_THE_CALLERS`) ×
every place a caller can put it (:data:`PLACEMENTS`: the top level, ``extra_body``, and a
``fallbacks`` entry, plain, with ``api_key: null`` and with ``proxy_server_request: null``) × chat,
``/v1/messages`` and ``/v1/responses``: a 400 naming the option, no connection to the listener the
value names, no request to conol (no session, no upload) and no image fetch (the request names an
image URL; a fetch would log its refusal). A fallbacks entry is refused before routing by the
provider's pre-call hook, installed by the same config line as the provider.

Then: Redis, image-fetch and reuse overrides refused on ``/v1/messages`` and ``/v1/responses``; a
``narrow`` option may lower the deployment's value; the identity auth wrote is the one the handler
uses, on a fallback hop too, and a fallbacks entry cannot bring another. All of it under a root path
(``SERVER_ROOT_PATH``) that names one of LiteLLM's ``litellm_metadata`` routes.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from support.caller_kwargs import ENV_OUT
from support.proxyproc import MASTER_KEY, ProxyProcess, fake_env, running_proxy, shipped_config

from litellm_conol.core.config.settings_table import SETTINGS
from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(120)

# The proxy is served under a root path naming one of LiteLLM's ``litellm_metadata`` routes: the
# caller is still read from the dict auth wrote (a path match on the whole URL read every key as none).
ROOT_PATH = "/team-files"
GUARDED = "guarded"  # the deployment name: every narrow option tightened, session_reuse off
GUARDED_PARAMS = {
    "model": "conol/claude-haiku-4-5",
    "max_images": 5,
    "max_image_bytes": 1024 * 1024,
    "max_repair_turns": 0,
    "tool_validation": "off",
    "session_reuse": "off",
}
NOT_THE_CALLERS = sorted(name for name, s in SETTINGS.items() if s.scope != "request")
PLACEMENTS = ["top level", "extra_body", "entry", "entry api_key null", "entry proxy_server_request null"]
ROUTES = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}
# The narrow options, widened past GUARDED_PARAMS.
WIDER = {
    "max_images": 100,
    "max_image_bytes": 50 * 1024 * 1024,
    "max_repair_turns": 10,
    "tool_validation": "repair",
    "session_reuse": "auto",
}


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A port that counts who connects: it listens and never accepts (the kernel still completes
    each connection into the backlog, where a non-blocking accept finds it)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        server.setblocking(False)
        yield server


def connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


@pytest.fixture(scope="module")
def boundary_fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture(scope="module")
def calls_file(tmp_path_factory) -> Path:
    """What the handler was called with (``support.caller_kwargs``), one JSON line a call."""
    return tmp_path_factory.mktemp("calls") / "calls.jsonl"


@pytest.fixture(scope="module")
def boundary_proxy(boundary_fake, calls_file, tmp_path_factory) -> Iterator[ProxyProcess]:
    config = shipped_config()
    # the provider's handler, recording what identity each call carried
    config["litellm_settings"]["custom_provider_map"][0]["custom_handler"] = (
        "support.caller_kwargs.recording_llm"
    )
    config["model_list"].append({"model_name": GUARDED, "litellm_params": GUARDED_PARAMS})
    # an operator's own callbacks: the pre-call hook the provider installs survives LiteLLM setting
    # them up (the shim does nothing without its environment variables)
    config["litellm_settings"]["callbacks"] = ["support.hostile_shim.shim"]
    # lets a request fail its first try on purpose, so that LiteLLM runs its fallbacks
    config["general_settings"]["dangerously_allow_mock_testing_request_params"] = True
    directory = tmp_path_factory.mktemp("boundary-proxy")
    env = {**fake_env(boundary_fake), ENV_OUT: str(calls_file), "SERVER_ROOT_PATH": ROOT_PATH}
    with running_proxy(config, directory, env=env, secrets=[boundary_fake.token]) as proc:
        yield proc


def rooted(proxy: ProxyProcess) -> str:
    return proxy.base_url + ROOT_PATH


@pytest.fixture(scope="module")
def raw(boundary_proxy) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {MASTER_KEY}", "x-api-key": MASTER_KEY}
    with httpx.Client(base_url=rooted(boundary_proxy), headers=headers, timeout=60) as client:
        yield client


@pytest.fixture
def fake(boundary_fake):
    boundary_fake.reset()
    return boundary_fake


def value_naming(name: str, port: int) -> Any:
    """A value for ``name`` that points at the listener where the option names a place (a wider one
    for a narrow option)."""
    return {
        "api_key": "caller-chosen-token",
        "api_base": f"http://127.0.0.1:{port}",
        "redis_url": f"redis://127.0.0.1:{port}/0",
        "redis_host": "127.0.0.1",
        "redis_port": port,
        "redis_password": "pw",
        "image_fetch": "public",
        "image_fetch_ports": [port],
        "agent_model": "x-ai/grok-4.3",
        "max_effort": "max",
        "default_effort": "max",
        "model_pinning": "pin",
        "discovery": "startup",
        "caller_options": ["redis_url"],
        "usage_log": "/tmp/caller-chosen.jsonl",
        "models_file": "/etc/hostname",
        **WIDER,
    }.get(name, SETTINGS[name].default)


def request_body(route: str, extra: dict[str, Any], image_url: str) -> dict[str, Any]:
    """A request on ``route`` naming ``image_url``, with ``extra`` merged in."""
    if route == "chat":
        content = [{"type": "text", "text": "Hi"}, {"type": "image_url", "image_url": {"url": image_url}}]
        return {"model": GUARDED, "messages": [{"role": "user", "content": content}], **extra}
    if route == "messages":
        image = {"type": "image", "source": {"type": "url", "url": image_url}}
        content = [{"type": "text", "text": "Hi"}, image]
        return {
            "model": GUARDED,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": content}],
            **extra,
        }
    content = [{"type": "input_text", "text": "Hi"}, {"type": "input_image", "image_url": image_url}]
    return {"model": GUARDED, "input": [{"role": "user", "content": content}], **extra}


def placed(name: str, value: Any, placement: str) -> dict[str, Any]:
    if placement == "top level":
        return {name: value}
    if placement == "extra_body":
        return {"extra_body": {name: value}}
    entry: dict[str, Any] = {"model": "claude-haiku-4-5", name: value}
    if placement == "entry api_key null":
        entry["api_key"] = None
    elif placement == "entry proxy_server_request null":
        entry["proxy_server_request"] = None
    return {"fallbacks": [entry]}


def chat(proxy: ProxyProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=rooted(proxy), api_key=MASTER_KEY, max_retries=0, timeout=60)


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", NOT_THE_CALLERS)
def test_no_place_a_caller_can_put_an_operator_or_narrow_option_gets_it_through(
    boundary_proxy, raw, fake, listener, name, placement, route
):
    port = listener.getsockname()[1]
    logged = boundary_proxy.log_path.stat().st_size
    body = request_body(
        route, placed(name, value_naming(name, port), placement), f"http://127.0.0.1:{port}/x.png"
    )
    response = raw.post(ROUTES[route], json=body)
    if name == "api_base" and "Rejected Request: api_base is not allowed" in response.text:
        assert response.status_code == 401  # LiteLLM's own guard came first, in its words (as auth)
    else:
        assert (response.status_code, f"`{name}`" in response.text) == (400, True), response.text
    assert connections(listener) == 0
    assert fake.requests == []
    with boundary_proxy.log_path.open("rb") as log:  # what the proxy logged since: no fetch refused
        log.seek(logged)
        assert b"image URL refused" not in log.read()


@pytest.mark.parametrize(
    "extra, mentions",
    [
        ({"redis_url": "redis://127.0.0.1:{port}/0"}, "`redis_url` is set by the proxy operator"),
        ({"image_fetch": "public", "max_images": 3}, "`image_fetch` is set by the proxy operator"),
        ({"session_reuse": "auto"}, "`session_reuse` can only be tightened per request"),
        ({"max_images": 50}, "`max_images` can only be tightened per request: this deployment allows 5"),
    ],
)
def test_overrides_are_refused_on_messages_and_responses_too(boundary_proxy, fake, listener, extra, mentions):
    port = listener.getsockname()[1]
    extra = {k: v.format(port=port) if isinstance(v, str) else v for k, v in extra.items()}
    client = anthropic.Anthropic(base_url=rooted(boundary_proxy), api_key=MASTER_KEY, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(
            model=GUARDED, max_tokens=64, messages=[{"role": "user", "content": "Hi"}], extra_body=extra
        )
    assert mentions in str(refused.value)
    with pytest.raises(openai.BadRequestError) as caught:
        chat(boundary_proxy).responses.create(model=GUARDED, input="Hi", extra_body=extra)
    assert mentions in str(caught.value)
    assert connections(listener) == 0
    assert fake.requests == []


def test_a_caller_may_lower_a_narrow_option_and_is_answered(boundary_proxy, fake):
    answer = chat(boundary_proxy).chat.completions.create(
        model=GUARDED,
        messages=[{"role": "user", "content": "Hi"}],
        extra_body={"max_images": 1, "session_reuse": "off", "max_repair_turns": 0},
    )
    assert (
        answer.choices[0].message.content
        == "Hello! I am the fake conol agent, running offline. How can I help you today?"
    )
    assert [r.path for r in fake.requests if r.method == "POST"] == ["/api/sessions"]


def test_a_deployment_with_reuse_off_never_continues_a_session(boundary_proxy, fake):
    """Item 3 of the issue: the caller's `auto` used to win over the deployment's `off`."""
    client = chat(boundary_proxy)
    first = client.chat.completions.create(model=GUARDED, messages=[{"role": "user", "content": "Hi"}])
    history = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "And again"},
    ]
    with pytest.raises(openai.BadRequestError, match="`session_reuse` can only be tightened"):
        client.chat.completions.create(model=GUARDED, messages=history, extra_body={"session_reuse": "auto"})
    second = client.chat.completions.create(model=GUARDED, messages=history)
    assert (
        second.choices[0].message.content
        == "Hello! I am the fake conol agent, running offline. How can I help you today?"
    )
    posts = [r.path for r in fake.requests if r.method == "POST"]
    assert posts == ["/api/sessions", "/api/sessions"]  # a whole new session for turn 2: no follow-up


# --- who is calling ----------------------------------------------------------------------------------

MASTER_HASH = "litellm_proxy_master_key"  # what LiteLLM's auth writes as the master key's hash
FORGED = {"user_api_key_hash": "another-keys-hash", "user_api_key_team_id": "litellm-internal-health-check"}
# one caller per route: the end user as each front door spells it, and forged identity in the metadata
CALLERS = {
    "chat": ({"user": "alice", "metadata": dict(FORGED)}, "alice"),
    "messages": ({"metadata": {"user_id": "bob", **FORGED}, "litellm_metadata": dict(FORGED)}, "bob"),
    "responses": ({"user": "carol", "metadata": {"tag": "t"}, "litellm_metadata": dict(FORGED)}, "carol"),
}


def calls(calls_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in calls_file.read_text().splitlines()] if calls_file.exists() else []


def text_body(route: str, extra: dict[str, Any]) -> dict[str, Any]:
    if route == "chat":
        return {"model": GUARDED, "messages": [{"role": "user", "content": "Hi"}], **extra}
    if route == "messages":
        return {"model": GUARDED, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}], **extra}
    return {"model": GUARDED, "input": "Hi", **extra}


@pytest.mark.parametrize("route", list(ROUTES))
def test_the_caller_auth_wrote_is_captured_and_kept_on_a_fallback_hop(raw, fake, calls_file, route):
    """The handler reads the caller the pre-call hook captured from auth, on a plain call and on the
    hop LiteLLM makes to a caller's plain fallback (``mock_testing_fallbacks`` fails the first try)."""
    extra, end_user = CALLERS[route]
    expected = {
        "proxied": True,
        "key_hash": MASTER_HASH,
        "team_id": None,
        "user_id": "default_user_id",
        "end_user": end_user,
    }
    for hop in ({}, {"mock_testing_fallbacks": True, "fallbacks": ["claude-haiku-4-5"]}):
        seen = len(calls(calls_file))
        response = raw.post(ROUTES[route], json=text_body(route, {**extra, **hop}))
        assert response.status_code == 200, response.text
        (call,) = calls(calls_file)[seen:]
        assert call["read"] == {"captured": expected, "caller": expected}, hop


@pytest.mark.parametrize("key", ["metadata", "litellm_metadata"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_fallbacks_entry_cannot_bring_another_identity(raw, fake, calls_file, route, key):
    """Another key's hash, or the health check's team, in an entry LiteLLM would merge into the
    retried call: refused before routing, nothing reaches the handler, no session."""
    seen = len(calls(calls_file))
    entry = {"model": "claude-haiku-4-5", key: dict(FORGED)}
    response = raw.post(ROUTES[route], json=text_body(route, {"n": 2, "fallbacks": [entry]}))
    assert response.status_code == 400
    assert f"`{key}` is not allowed in a fallbacks entry" in response.text
    assert calls(calls_file)[seen:] == [] and fake.requests == []
