"""The four LiteLLM paths (sync/async × stream/non-stream) against the fake conol, in process."""

from __future__ import annotations

import asyncio
import time

import litellm
import pytest
from support.chat import MODEL, ask
from support.timing import bound

import litellm_conol
from litellm_conol.fake import BUILTINS

litellm.suppress_debug_info = True
litellm_conol.register()

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def kw(conol_fake):
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


def collect_stream(chunks) -> dict:
    ids, content, reasoning, finish, fields = set(), [], [], None, []
    for chunk in chunks:
        ids.add(chunk.id)
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        reasoning.append(getattr(delta, "reasoning_content", None) or "")
        finish = chunk.choices[0].finish_reason or finish
        if getattr(chunk, "provider_specific_fields", None):
            fields.append(chunk.provider_specific_fields)
    return {
        "ids": ids,
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "finish": finish,
        "fields": fields,
    }


async def acollect_stream(stream) -> dict:
    return collect_stream([chunk async for chunk in stream])


# --- the four paths give the same exact answer --------------------------------------------------


def test_sync_completion(kw):
    expected = BUILTINS["hello"]
    response = litellm.completion(**ask("Hi"), **kw)
    message = response.choices[0].message
    assert message.content == expected.final_text
    assert message.reasoning_content == expected.final_reasoning
    assert response.choices[0].finish_reason == "stop"
    assert response.model == "claude-haiku-4-5"


def test_sync_streaming(kw):
    expected = BUILTINS["hello"]
    got = collect_stream(litellm.completion(**ask("Hi"), stream=True, **kw))
    assert got["content"] == expected.final_text
    assert got["reasoning"] == expected.final_reasoning
    assert got["finish"] == "stop"
    assert len(got["ids"]) == 1


async def test_async_completion(kw):
    expected = BUILTINS["hello"]
    response = await litellm.acompletion(**ask("Hi"), **kw)
    assert response.choices[0].message.content == expected.final_text
    assert response.choices[0].message.reasoning_content == expected.final_reasoning


async def test_async_streaming(kw):
    expected = BUILTINS["hello"]
    got = await acollect_stream(await litellm.acompletion(**ask("Hi"), stream=True, **kw))
    assert got["content"] == expected.final_text
    assert got["reasoning"] == expected.final_reasoning
    assert len(got["ids"]) == 1 and next(iter(got["ids"])).startswith("chatcmpl-")


# --- every termination shape: complete, never truncated, streamed == non-streamed ----------------

SCENARIOS = [
    "hello",
    "done",
    "done_marker",
    "early_terminal",
    "committed_tail",
    "close_after_terminal",
    "close_early",
    "parts",
    "multi_stage",
    "unicode",
    "silence",
    "out_of_order",
    "malformed_line",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_scenarios_complete_exactly_in_both_modes(kw, scenario):
    expected = BUILTINS[scenario]
    prompt = f"Hi [[fake:{scenario}]]"
    response = await litellm.acompletion(**ask(prompt), **kw)
    streamed = await acollect_stream(await litellm.acompletion(**ask(prompt), stream=True, **kw))
    assert response.choices[0].message.content == expected.final_text
    assert (getattr(response.choices[0].message, "reasoning_content", None) or "") == expected.final_reasoning
    assert streamed["content"] == expected.final_text
    assert streamed["reasoning"] == expected.final_reasoning


def test_rewrite_final_answer_is_the_last_snapshot_and_stream_says_so(kw):
    expected = BUILTINS["rewrite"]
    response = litellm.completion(**ask("[[fake:rewrite]]"), **kw)
    assert response.choices[0].message.content == expected.final_text
    streamed = collect_stream(litellm.completion(**ask("[[fake:rewrite]]"), stream=True, **kw))
    # Streamed deltas cannot be taken back: the stream shows the snapshots up to "The answer is 4",
    # then nothing of the rewrite ("The answer is four." does not extend what was shown), and its
    # last chunk says the final text.
    assert streamed["content"] == "The answer is 4"
    final_fields = streamed["fields"][-1]
    assert final_fields["rewritten"] is True
    assert final_fields["final_content"] == expected.final_text


def test_late_terminal_status_alone_ends_after_settle(kw, conol_fake):
    expected = BUILTINS["late_terminal"]
    response = litellm.completion(**ask("[[fake:late_terminal]]"), settle_window=0.3, **kw)
    assert response.choices[0].message.content == expected.final_text
    record = conol_fake.last_session
    assert record.terminal_at is not None
    # nothing is committed: the terminal status ends the answer once the settle window passed
    assert response.choices[0].message.provider_specific_fields["ended_by"] == "status terminal, settled"


# --- request mapping reaches conol ----------------------------------------------------------------


def test_whole_conversation_is_rendered(kw, conol_fake):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Echo this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "[[fake:echo]]"},
            ],
        },
    ]
    response = litellm.completion(model=MODEL, messages=messages, **kw)
    body = conol_fake.last_session.messages
    assert body == [
        "[System]\nBe brief.",
        "Hi",
        "[Assistant]\nHello!",
        "Echo this\n[[fake:echo]]",
    ]
    assert response.choices[0].message.content == "Echo this\n[[fake:echo]]"


@pytest.mark.parametrize(
    "extra, effort",
    [
        ({}, "low"),
        ({"reasoning_effort": "minimal"}, "low"),
        ({"reasoning_effort": "medium"}, "medium"),
        ({"reasoning_effort": "high"}, "high"),
        ({"reasoning_effort": "xhigh"}, "high"),  # the top of claude-haiku-4-5's ladder
        ({"reasoning": {"effort": "high"}}, "high"),
        ({"extra_body": {"reasoning_effort": "medium"}}, "medium"),
    ],
)
def test_reasoning_effort_maps_to_agent_effort(kw, conol_fake, extra, effort):
    litellm.completion(**ask("Hi [[fake:done]]"), **extra, **kw)
    assert conol_fake.last_session.effort == effort


def test_timezone_from_kwarg_extra_body_and_env(kw, conol_fake, monkeypatch):
    litellm.completion(**ask("[[fake:done]]"), timezone="Europe/Kyiv", **kw)
    assert conol_fake.last_session.timezone == "Europe/Kyiv"
    litellm.completion(**ask("[[fake:done]]"), extra_body={"timezone": "Asia/Tokyo"}, **kw)
    assert conol_fake.last_session.timezone == "Asia/Tokyo"
    monkeypatch.setenv("CONOL_TIMEZONE", "America/Lima")
    litellm.completion(**ask("[[fake:done]]"), **kw)
    assert conol_fake.last_session.timezone == "America/Lima"
    monkeypatch.delenv("CONOL_TIMEZONE")
    litellm.completion(**ask("[[fake:done]]"), **kw)
    assert conol_fake.last_session.timezone == "UTC"


def test_raw_agent_model_form_is_accepted(kw, conol_fake):
    litellm.completion(
        model="conol/deepseek/deepseek-v4-pro", messages=[{"role": "user", "content": "[[fake:done]]"}], **kw
    )
    assert conol_fake.last_session.model == "deepseek/deepseek-v4-pro"


def test_credential_and_base_from_environment(conol_fake, monkeypatch):
    monkeypatch.setenv("CONOL_SESSION_TOKEN", conol_fake.token)
    monkeypatch.setenv("CONOL_API_BASE", conol_fake.base_url)
    response = litellm.completion(**ask("[[fake:done]]"))
    assert response.choices[0].message.content == BUILTINS["done"].final_text


# --- refusals before any network call -----------------------------------------------------------


def test_no_credential_is_401_before_any_request(conol_fake):
    with pytest.raises(litellm.AuthenticationError, match="CONOL_SESSION_TOKEN"):
        litellm.completion(**ask("Hi"), api_base=conol_fake.base_url)
    assert conol_fake.requests == []


def test_unknown_model_is_404_naming_it_before_any_session(kw, conol_fake):
    with pytest.raises(litellm.NotFoundError, match="'gpt-9000'.*litellm-conol models"):
        litellm.completion(model="conol/gpt-9000", messages=[{"role": "user", "content": "Hi"}], **kw)
    assert conol_fake.requests == []


def test_n_greater_than_one_is_refused(kw, conol_fake):
    with pytest.raises(litellm.BadRequestError, match="n=2"):
        litellm.completion(**ask("Hi"), n=2, **kw)
    assert conol_fake.requests == []


# --- response extras ----------------------------------------------------------------------------


def test_session_fields_and_estimated_usage(kw, conol_fake):
    response = litellm.completion(**ask("Hi"), **kw)
    fields = response.choices[0].message.provider_specific_fields
    record = conol_fake.last_session
    assert fields["session_id"] == record.id
    assert fields["effective_model"] == "claude-haiku-4-5"
    assert fields["model_downgraded"] is False
    assert fields["usage_estimated"] is True
    expected_completion = litellm.token_counter(
        text=BUILTINS["hello"].final_text + BUILTINS["hello"].final_reasoning, count_response_tokens=True
    )
    assert response.usage.completion_tokens == expected_completion
    assert response.usage.prompt_tokens == litellm.token_counter(messages=[{"role": "user", "content": "Hi"}])


def test_downgrade_is_surfaced_and_strict_model_refuses_it(kw):
    response = litellm.completion(**ask("[[fake:downgrade]]"), **kw)
    fields = response.choices[0].message.provider_specific_fields
    assert fields["model_downgraded"] is True
    assert fields["effective_model"] == "deepseek/deepseek-v4-flash"
    with pytest.raises(litellm.BadRequestError, match="downgraded.*strict_model") as info:
        litellm.completion(**ask("[[fake:downgrade]]"), strict_model=True, **kw)
    assert info.value.status_code == 400


def test_first_stream_chunk_carries_the_session(kw, conol_fake):
    chunks = list(litellm.completion(**ask("Hi"), stream=True, **kw))
    first_fields = next(
        c.provider_specific_fields for c in chunks if getattr(c, "provider_specific_fields", None)
    )
    assert first_fields["session_id"] == conol_fake.last_session.id


# --- errors and time bounds ---------------------------------------------------------------------


def test_error_event_raises_instead_of_answering(kw):
    with pytest.raises(litellm.InternalServerError, match="upstream model crashed"):
        litellm.completion(**ask("[[fake:error]]"), **kw)


async def test_error_event_mid_stream_raises_from_the_stream(kw):
    stream = await litellm.acompletion(**ask("Mid-stream [[fake:error]]"), stream=True, **kw)
    received = []
    # After the first chunk LiteLLM wraps any provider error in MidStreamFallbackError (as for openai/…),
    # keeping the original exception and its status for the Router.
    with pytest.raises(litellm.exceptions.MidStreamFallbackError, match="upstream model crashed") as info:
        async for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert isinstance(info.value.original_exception, litellm.InternalServerError)
    assert info.value.status_code == 500
    assert str(info.value.original_exception) == (
        f"litellm.InternalServerError: ConolException - conol agent error: {BUILTINS['error'].error}"
    )
    assert "".join(received) == "I will try to answer, but"


def test_timeout_is_honoured(kw, conol_fake):
    started = time.monotonic()
    with pytest.raises(litellm.Timeout):
        litellm.completion(**ask("[[fake:stall_before_first]]"), timeout=1.0, **kw)
    assert time.monotonic() - started < bound(10)


# --- connections ----------------------------------------------------------------------------------


async def test_closing_the_stream_early_closes_the_upstream_stream(kw, conol_fake):
    stream = await litellm.acompletion(**ask("[[fake:silence]]"), stream=True, **kw)
    async for chunk in stream:
        if chunk.choices[0].delta.content:
            break
    await stream.aclose()
    closed_at = time.time()
    assert await conol_fake.await_until(
        lambda: conol_fake.last_session.connections[-1].closed_at is not None, 2.0
    )
    assert conol_fake.last_session.connections[-1].closed_at - closed_at < bound(0.5)


async def test_connections_are_reused_across_requests(kw):
    from litellm_conol.client.pool import shared_client

    await litellm.acompletion(**ask("[[fake:done]]"), **kw)
    client = shared_client()
    await litellm.acompletion(**ask("[[fake:done]]"), **kw)
    assert shared_client() is client


def test_the_shared_client_closes_with_its_event_loop(kw):
    """Code that runs ``asyncio.run`` per request leaves no pooled connections behind."""
    from litellm_conol.client.aiohttp_stream import pooled_connections
    from litellm_conol.client.pool import shared_client

    async def one_request():
        response = await litellm.acompletion(**ask("[[fake:done]]"), **kw)
        assert response.choices[0].message.content == BUILTINS["done"].final_text
        client = shared_client()
        await client.get(f"{kw['api_base']}/api/models")  # (the event stream's connection is not reused)
        assert pooled_connections(client) == 1  # an idle keep-alive connection, while the loop runs
        return client

    client = asyncio.run(one_request())
    assert client.is_closed


async def test_cancelled_task_closes_the_upstream_stream(kw, conol_fake):
    async def consume():
        stream = await litellm.acompletion(**ask("[[fake:stall_mid]]"), stream=True, **kw)
        async for _ in stream:
            pass

    task = asyncio.create_task(consume())
    assert await conol_fake.await_until(
        lambda: bool(conol_fake.sessions) and bool(conol_fake.last_session.connections), 5.0
    )
    # cancel mid-answer: once the first event went out
    assert await conol_fake.await_until(lambda: bool(conol_fake.last_session.events), bound(5))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled_at = time.time()
    assert await conol_fake.await_until(
        lambda: conol_fake.last_session.connections[-1].closed_at is not None, 2.0
    )
    assert conol_fake.last_session.connections[-1].closed_at - cancelled_at < bound(0.5)
