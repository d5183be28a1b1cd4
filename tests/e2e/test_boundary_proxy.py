"""The operator/caller boundary through the real proxy (docs/configuration.md#who-sets-what).

Every ``operator`` option, at the top level and in ``extra_body`` of a chat request, is a 400 naming
it, with no connection to a listener the request names, no request to conol and no session; Redis,
image-fetch and reuse overrides are refused the same way on ``/v1/messages`` and ``/v1/responses``;
a ``narrow`` option may lower the deployment's value and is refused when it widens it.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from support.proxyproc import MASTER_KEY, ProxyProcess

from litellm_conol.core.config.settings_table import SETTINGS

pytestmark = pytest.mark.timeout(120)

GUARDED = "guarded"  # the deployment name: max_images 5, session_reuse off
PROXY_DEPLOYMENTS = [  # on the shared proxy (tests/e2e/conftest.py)
    {
        "model_name": GUARDED,
        "litellm_params": {"model": "conol/claude-haiku-4-5", "max_images": 5, "session_reuse": "off"},
    }
]
OPERATOR_OPTIONS = sorted(
    name
    for name, s in SETTINGS.items()
    if s.scope == "operator" and s.param and not s.litellm_guarded and name != "caller_options"
)


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


@pytest.fixture
def fake(proxy_fake):
    proxy_fake.reset()
    return proxy_fake


def value_naming(name: str, port: int) -> Any:
    """A value for ``name`` that points at the listener where the option names a place."""
    return {
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
    }.get(name, SETTINGS[name].default)


def chat(proxy: ProxyProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60)


@pytest.mark.parametrize("where", ["top level", "extra_body"])
@pytest.mark.parametrize("name", OPERATOR_OPTIONS)
def test_every_operator_option_in_a_chat_body_is_a_400_naming_it(shipped_proxy, fake, listener, name, where):
    value = value_naming(name, listener.getsockname()[1])
    # the openai SDK merges extra_body into the JSON body; a raw `extra_body` key is the other spelling
    extra = {name: value} if where == "top level" else {"extra_body": {name: value}}
    with pytest.raises(openai.BadRequestError) as caught:
        chat(shipped_proxy).chat.completions.create(
            model=GUARDED, messages=[{"role": "user", "content": "Hi"}], extra_body=extra
        )
    assert f"`{name}` is set by the proxy operator, not per request" in str(caught.value)
    assert connections(listener) == 0
    assert fake.requests == []


@pytest.mark.parametrize(
    "extra, mentions",
    [
        ({"redis_url": "redis://127.0.0.1:{port}/0"}, "`redis_url` is set by the proxy operator"),
        ({"image_fetch": "public", "max_images": 3}, "`image_fetch` is set by the proxy operator"),
        ({"session_reuse": "auto"}, "`session_reuse` can only be tightened per request"),
        ({"max_images": 50}, "`max_images` can only be tightened per request: this deployment allows 5"),
    ],
)
def test_overrides_are_refused_on_messages_and_responses_too(shipped_proxy, fake, listener, extra, mentions):
    port = listener.getsockname()[1]
    extra = {k: v.format(port=port) if isinstance(v, str) else v for k, v in extra.items()}
    client = anthropic.Anthropic(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(
            model=GUARDED, max_tokens=64, messages=[{"role": "user", "content": "Hi"}], extra_body=extra
        )
    assert mentions in str(refused.value)
    with pytest.raises(openai.BadRequestError) as caught:
        chat(shipped_proxy).responses.create(model=GUARDED, input="Hi", extra_body=extra)
    assert mentions in str(caught.value)
    assert connections(listener) == 0
    assert fake.requests == []


def test_a_caller_may_lower_a_narrow_option_and_is_answered(shipped_proxy, fake):
    answer = chat(shipped_proxy).chat.completions.create(
        model=GUARDED,
        messages=[{"role": "user", "content": "Hi"}],
        extra_body={"max_images": 1, "session_reuse": "off", "max_repair_turns": 0},
    )
    assert (
        answer.choices[0].message.content
        == "Hello! I am the fake conol agent, running offline. How can I help you today?"
    )
    assert [r.path for r in fake.requests if r.method == "POST"] == ["/api/sessions"]


def test_a_deployment_with_reuse_off_never_continues_a_session(shipped_proxy, fake):
    """Item 3 of the issue: the caller's `auto` used to win over the deployment's `off`."""
    client = chat(shipped_proxy)
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
