"""``stop`` and ``max_tokens`` enforced by us through the real proxy, against the fake."""

from __future__ import annotations

import litellm
import openai
import pytest
from support.chat import ask
from support.limits import collect, longest_prefix_within

import litellm_conol
from litellm_conol.fake import BUILTINS, Preview, ScenarioContext
from litellm_conol.fake._library import STOP_SEQUENCE, STOP_SPLIT_ANSWER

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


STOP_SPLIT = "[[fake:stop_split]]"


LONG = "[[fake:long_writer]]"


LIMIT = 60


def assert_closed_early(fake) -> None:
    """The client closed conol's stream at the cut, while the agent was still writing."""
    session = fake.last_session
    assert fake.wait_until(lambda: session.connections[-1].closed_at is not None, 5.0)
    connection = session.connections[-1]
    assert connection.closed_by == "client"
    assert session.terminal_at is None or connection.closed_at < session.terminal_at
    snapshots = [s for s in BUILTINS[session.scenario].script(ScenarioContext()) if isinstance(s, Preview)]
    assert connection.events_sent < len(snapshots)  # the rest was written to nobody


# --- through the real proxy with the openai SDK ----------------------------------------------------


def test_proxy_stop_non_streamed_and_streamed(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    response = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=ask(STOP_SPLIT)["messages"], stop=[STOP_SEQUENCE]
    )
    assert response.choices[0].message.content == STOP_SPLIT_ANSWER
    assert response.choices[0].finish_reason == "stop"
    assert_closed_early(fake)
    stream = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=ask(STOP_SPLIT)["messages"], stop=STOP_SEQUENCE, stream=True
    )
    content, finish, ids = collect(stream)
    assert (content, finish) == (STOP_SPLIT_ANSWER, "stop")
    assert len(ids) == 1
    assert_closed_early(fake)


def test_proxy_max_tokens_non_streamed_and_streamed(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    messages = ask(LONG)["messages"]
    response = client.chat.completions.create(
        model="conol/claude-haiku-4-5", messages=messages, max_tokens=LIMIT
    )
    assert response.choices[0].message.content == longest_prefix_within(LIMIT)
    assert response.choices[0].finish_reason == "length"
    assert_closed_early(fake)
    stream = client.chat.completions.create(
        model="conol/claude-haiku-4-5",
        messages=messages,
        max_tokens=LIMIT + 100,
        max_completion_tokens=LIMIT,
        stream=True,
    )
    assert collect(stream)[:2] == (longest_prefix_within(LIMIT), "length")
    assert_closed_early(fake)


def test_proxy_bad_value_is_400(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    with pytest.raises(openai.BadRequestError, match="stop sequences must be non-empty strings"):
        client.chat.completions.create(
            model="conol/claude-haiku-4-5", messages=ask("Hi")["messages"], stop=[""]
        )
    with pytest.raises(openai.BadRequestError, match="max_tokens must be a whole number"):
        client.chat.completions.create(
            model="conol/claude-haiku-4-5", messages=ask("Hi")["messages"], max_tokens=0
        )
    assert fake.requests == []
