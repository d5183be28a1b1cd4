"""The other clients' readings end to end in process: LiteLLM's SDK → the handler → the fake over
loopback, under each framing, with and without ``contextUsage``, and the account checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import litellm
import pytest

import litellm_conol
from litellm_conol import AuthenticationFailed, UpstreamError
from litellm_conol.client.pool import shared_client
from litellm_conol.client.transport import Transport
from litellm_conol.core.protocol.endpoint import COOKIE_NAME, Endpoint
from litellm_conol.fake import BUILTINS, FakeConol
from litellm_conol.fake._library import CREDIT_ERROR
from litellm_conol.reuse.accounts import forget_accounts

litellm.suppress_debug_info = True
litellm_conol.register()
pytestmark = pytest.mark.timeout(90)

MODEL = "conol/claude-haiku-4-5"
FRAMINGS = ("sse", "ndjson", "message")
SHAPES = ("hello", "stream_events", "assistant_final", "window_reset", "done_flag")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeConol]:
    with FakeConol() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(fake: FakeConol) -> Iterator[None]:
    fake.reset()
    forget_accounts()  # an account out of credits rests (in this process's memory) until its refill
    yield
    fake.reset()
    forget_accounts()


def ask(fake: FakeConol, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": text}],
        "api_base": fake.base_url,
        "api_key": fake.token,
        **extra,
    }


async def streamed(fake: FakeConol, text: str) -> tuple[str, str, dict[str, Any]]:
    content, reasoning, fields = [], [], {}
    async for chunk in await litellm.acompletion(**ask(fake, text), stream=True):
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        reasoning.append(getattr(delta, "reasoning_content", None) or "")
        fields |= getattr(chunk, "provider_specific_fields", None) or {}
    return "".join(content), "".join(reasoning), fields


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("shape", SHAPES)
async def test_every_event_shape_under_every_framing_streams_the_exact_answer(fake, framing, shape):
    fake.configure(framing=framing)
    content, reasoning, fields = await streamed(fake, f"[[fake:{shape}]]")
    expected = BUILTINS[shape]
    assert (content, reasoning) == (expected.final_text, expected.final_reasoning)
    # each ends on a signal of its own (not the request's timeout): done_flag on the {"done": true}
    assert fields["ended_by"] == "done event" if shape == "done_flag" else fields["ended_by"]
    assert fields.get("window_resets", 0) == (1 if shape == "window_reset" else 0)


async def test_the_done_flag_ends_the_answer_at_once(fake):
    response = await litellm.acompletion(**ask(fake, "[[fake:done_flag]]"))
    fields = response.choices[0].message.provider_specific_fields
    assert fields["ended_by"] == "done event" and fake.last_session.status == "running"


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_usage_is_reported_from_context_usage(fake, framing):
    fake.configure(framing=framing, context_usage=True)
    response = await litellm.acompletion(**ask(fake, "[[fake:hello]] Hi"))
    fields = response.choices[0].message.provider_specific_fields
    used = fake.last_session.context_usage["usedTokens"]
    completion = litellm.token_counter(
        text=BUILTINS["hello"].final_text + BUILTINS["hello"].final_reasoning, count_response_tokens=True
    )
    assert (fields["usage"], fields["usage_estimated"], fields["context_used_tokens"]) == (
        "reported",
        False,
        used,
    )
    assert (response.usage.total_tokens, response.usage.completion_tokens) == (used, completion)
    assert response.usage.prompt_tokens == used - completion
    assert (fields["effective_model"], fields["model_downgraded"]) == ("claude-haiku-4-5", False)


async def test_usage_is_estimated_without_it_and_streamed_usage_says_the_same(fake):
    response = await litellm.acompletion(**ask(fake, "Hi"))
    fields = response.choices[0].message.provider_specific_fields
    prompt = litellm.token_counter(messages=[{"role": "user", "content": "Hi"}])
    assert (fields["usage"], fields["usage_estimated"], response.usage.prompt_tokens) == (
        "estimated",
        True,
        prompt,
    )
    fake.configure(context_usage=True)
    chunks = [
        c
        async for c in await litellm.acompletion(
            **ask(fake, "Hi"), stream=True, stream_options={"include_usage": True}
        )
    ]
    usage = next(c.usage for c in reversed(chunks) if getattr(c, "usage", None))
    assert usage.total_tokens == fake.last_session.context_usage["usedTokens"]


async def test_a_model_the_stream_reports_is_surfaced_and_strict_model_refuses_it(fake):
    fake.configure(context_usage=True, context_model="deepseek-v4-flash")
    response = await litellm.acompletion(**ask(fake, "[[fake:hello]]"))
    fields = response.choices[0].message.provider_specific_fields
    assert (fields["effective_model"], fields["model_reported"], fields["model_downgraded"]) == (
        "deepseek-v4-flash",
        "deepseek-v4-flash",
        True,
    )
    with pytest.raises(litellm.BadRequestError, match="reports running 'deepseek-v4-flash'.*strict_model"):
        await litellm.acompletion(**ask(fake, "[[fake:hello]]"), strict_model=True)


@pytest.mark.parametrize("stream", [False, True])
async def test_the_credit_error_preview_is_a_clear_error(fake, stream):
    fake.configure(balance="zero")
    # out of credits is a 429 (docs/team-deployment.md#several-accounts): another account may serve;
    # streamed too, as the first chunk waits for content and the preview comes before any (LiteLLM
    # wraps an error of a stream in its MidStreamFallbackError, the status kept)
    errors = (litellm.exceptions.RateLimitError, litellm.exceptions.MidStreamFallbackError)
    with pytest.raises(errors) as caught:
        response = await litellm.acompletion(**ask(fake, "Hi"), stream=stream)
        if stream:
            async for _ in response:
                pass
    assert CREDIT_ERROR in str(caught.value) and caught.value.status_code == 429
    assert "this account rests until its refill in" in str(caught.value)
    assert fake.token not in str(caught.value)


def test_a_pasted_cookie_header_works_as_the_api_key(fake):
    header = f"Cookie: theme=dark; {COOKIE_NAME}={fake.token}; consent=1"
    response = litellm.completion(**{**ask(fake, "[[fake:done]]"), "api_key": header})
    assert response.choices[0].message.content == BUILTINS["done"].final_text
    assert fake.requests[-1].authorized


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("dead_401", AuthenticationFailed, "conol rejected the session token"),
        ("dead_200", AuthenticationFailed, "conol knows no session for the token"),
        ("checkpoint", UpstreamError, "HTTP 200 but the body is not JSON"),
        ("rate_limited", litellm_conol.RateLimited, ""),
    ],
)
async def test_the_token_check_tells_dead_from_transient(fake, mode, error, message):
    fake.configure(auth=mode)
    transport = Transport(Endpoint(fake.base_url, fake.token), shared_client())
    with pytest.raises(error) as caught:
        await transport.check_token()
    assert message in caught.value.message and fake.token not in caught.value.message
    fake.configure(auth="ok")
    await transport.check_token()
