"""``stop`` and ``max_tokens`` enforced by us: the four SDK paths, against the fake."""

from __future__ import annotations

import litellm
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


@pytest.fixture
def kw(conol_fake):
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


def connection_closed(connection):
    return lambda: connection.closed_at is not None


def assert_closed_early(fake) -> None:
    """The client closed conol's stream at the cut, while the agent was still writing."""
    session = fake.last_session
    assert fake.wait_until(lambda: session.connections[-1].closed_at is not None, 5.0)
    connection = session.connections[-1]
    assert connection.closed_by == "client"
    assert session.terminal_at is None or connection.closed_at < session.terminal_at
    snapshots = [s for s in BUILTINS[session.scenario].script(ScenarioContext()) if isinstance(s, Preview)]
    assert connection.events_sent < len(snapshots)  # the rest was written to nobody


# --- stop, the four paths -------------------------------------------------------------------------


def test_stop_sync(kw, conol_fake):
    response = litellm.completion(**ask(STOP_SPLIT, stop=STOP_SEQUENCE), **kw)
    assert response.choices[0].message.content == STOP_SPLIT_ANSWER
    assert response.choices[0].finish_reason == "stop"
    assert response.choices[0].message.provider_specific_fields["ended_by"] == "stop sequence"
    assert_closed_early(conol_fake)


def test_stop_sync_stream(kw, conol_fake):
    content, finish, ids = collect(
        litellm.completion(**ask(STOP_SPLIT, stop=[STOP_SEQUENCE]), stream=True, **kw)
    )
    assert (content, finish) == (STOP_SPLIT_ANSWER, "stop")  # no "[E" was ever sent
    assert len(ids) == 1
    assert_closed_early(conol_fake)


async def test_stop_async(kw, conol_fake):
    response = await litellm.acompletion(**ask(STOP_SPLIT, stop=["nowhere", STOP_SEQUENCE]), **kw)
    assert response.choices[0].message.content == STOP_SPLIT_ANSWER
    assert response.choices[0].finish_reason == "stop"
    assert_closed_early(conol_fake)


async def test_stop_async_stream(kw, conol_fake):
    stream = await litellm.acompletion(**ask(STOP_SPLIT, stop=STOP_SEQUENCE), stream=True, **kw)
    content, finish, _ = collect([chunk async for chunk in stream])
    assert (content, finish) == (STOP_SPLIT_ANSWER, "stop")
    assert_closed_early(conol_fake)


def test_a_stop_sequence_that_never_comes_changes_nothing(kw):
    response = litellm.completion(**ask("[[fake:done]]", stop=["Finished,", "zzz"]), **kw)
    assert response.choices[0].message.content == ""  # it starts with a stop sequence
    expected = BUILTINS["done"]
    assert expected.final_text.endswith(".")  # held back (it may be the start of ".\n") until the end
    content, finish, _ = collect(litellm.completion(**ask("[[fake:done]]", stop=".\n"), stream=True, **kw))
    assert (content, finish) == (expected.final_text, "stop")


# --- max_tokens, the four paths -------------------------------------------------------------------


def test_max_tokens_sync(kw, conol_fake):
    response = litellm.completion(**ask(LONG, max_tokens=LIMIT), **kw)
    assert response.choices[0].message.content == longest_prefix_within(LIMIT)
    assert response.choices[0].finish_reason == "length"
    assert response.choices[0].message.provider_specific_fields["ended_by"] == "max_tokens"
    assert_closed_early(conol_fake)


def test_max_tokens_sync_stream(kw, conol_fake):
    content, finish, _ = collect(litellm.completion(**ask(LONG, max_tokens=LIMIT), stream=True, **kw))
    assert (content, finish) == (longest_prefix_within(LIMIT), "length")
    assert_closed_early(conol_fake)


async def test_max_completion_tokens_async(kw, conol_fake):
    response = await litellm.acompletion(**ask(LONG, max_completion_tokens=LIMIT), **kw)
    assert response.choices[0].message.content == longest_prefix_within(LIMIT)
    assert response.choices[0].finish_reason == "length"


async def test_max_tokens_async_stream_closes_upstream_before_the_last_text_is_read(kw, conol_fake):
    stream = await litellm.acompletion(
        **ask(LONG, max_tokens=LIMIT, max_completion_tokens=LIMIT + 100), stream=True, **kw
    )
    chunks, seen, closed_while_holding_it = [], "", None
    async for chunk in stream:
        chunks.append(chunk)
        seen += (chunk.choices[0].delta.content or "") if chunk.choices else ""
        if seen == longest_prefix_within(LIMIT) and closed_while_holding_it is None:
            # the chunk that ends the answer is in our hands and we have not asked for more:
            # conol's stream is closed already, the handler did not wait for the consumer
            connection = conol_fake.last_session.connections[-1]
            closed_while_holding_it = await conol_fake.await_until(connection_closed(connection), 2.0)
    assert closed_while_holding_it is True
    assert collect(chunks)[:2] == (longest_prefix_within(LIMIT), "length")  # the smaller limit
    assert_closed_early(conol_fake)
    response = await litellm.acompletion(
        **ask(LONG, max_tokens=LIMIT + 100, max_completion_tokens=LIMIT), **kw
    )
    assert response.choices[0].message.content == longest_prefix_within(LIMIT)


def test_an_answer_within_max_tokens_is_whole(kw):
    response = litellm.completion(**ask("[[fake:done]]", max_tokens=500, stop="never"), **kw)
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert response.choices[0].finish_reason == "stop"


# --- bad values: 400 naming the parameter, before any session --------------------------------------


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"max_tokens": 0}, "max_tokens must be a whole number of at least 1, got 0"),
        ({"max_tokens": -5}, "max_tokens must be a whole number of at least 1, got -5"),
        ({"max_tokens": 2.5}, "max_tokens must be a whole number"),
        ({"max_completion_tokens": 0}, "max_completion_tokens must be a whole number"),
        ({"max_tokens": 10, "max_completion_tokens": -1}, "max_completion_tokens must be"),
        ({"stop": ["ok", 7]}, "stop sequences must be non-empty strings, got 7"),
        ({"stop": ""}, "stop sequences must be non-empty strings, got ''"),
        ({"stop": {"a": 1}}, "stop must be a string or a list of strings, got dict"),
    ],
)
def test_bad_values_are_400_before_any_session(kw, conol_fake, params, problem):
    with pytest.raises(litellm.BadRequestError, match=problem):
        litellm.completion(**ask("[[fake:done]]", **params), **kw)
    assert conol_fake.requests == []


def test_more_than_four_stop_sequences_are_400_when_litellm_lets_them_through(kw, conol_fake, monkeypatch):
    # LiteLLM itself keeps the first 4 of a longer list, for every provider, unless told not to
    monkeypatch.setattr(litellm, "disable_stop_sequence_limit", True)
    with pytest.raises(litellm.BadRequestError, match="stop takes at most 4 sequences, got 5"):
        litellm.completion(**ask("[[fake:done]]", stop=["a", "b", "c", "d", "e"]), **kw)
    assert conol_fake.requests == []
