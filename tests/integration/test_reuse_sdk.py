"""Session reuse through LiteLLM's SDK against the fake: the follow-up carries only the new turn, the
answer is exactly what a new full session gives, and every fallback gives that same answer."""

from __future__ import annotations

import asyncio
import base64
import hashlib

import litellm
import pytest
from support.weather import OPENAI_TOOL as WEATHER

import litellm_conol
from litellm_conol.fake import FakeConol
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def fake():
    with FakeConol() as server:
        yield server


@pytest.fixture
def conol(fake):
    fake.reset()
    clear_stores()
    yield fake
    clear_stores()


async def ask(fake: FakeConol, messages, **extra):
    kw = {"api_base": fake.base_url, "api_key": fake.token, "model": MODEL, "messages": messages}
    if extra.pop("stream", False):
        stream = await litellm.acompletion(**kw, stream=True, **extra)
        text, fields, calls = [], {}, []
        async for chunk in stream:
            delta = chunk.choices[0].delta
            text.append(delta.content or "")
            calls += delta.tool_calls or []
            fields.update(getattr(chunk, "provider_specific_fields", None) or {})
        return {"role": "assistant", "content": "".join(text)}, fields
    response = await litellm.acompletion(**kw, **extra)
    message = response.choices[0].message
    out = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls
        ]
    return out, response.choices[0].message.provider_specific_fields or {}


def tool_result(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


async def echo_conversation(fake, turns: list[str], **extra):
    """A text conversation of the `echo` scenario (each answer is the last message): the answers and fields."""
    messages: list[dict] = []
    answers, fields = [], []
    for text in turns:
        messages.append({"role": "user", "content": text})
        answer, field = await ask(fake, messages, **extra)
        messages.append(answer)
        answers.append(answer["content"])
        fields.append(field)
    return answers, fields


TURNS = ["[[fake:echo]] first", "second", "third"]


async def test_a_text_conversation_continues_one_session(conol):
    answers, fields = await echo_conversation(conol, TURNS)
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert [f["session_reused"] for f in fields] == [False, True, True]
    assert len(conol.sessions) == 1
    session = conol.last_session
    assert session.turns == 3
    turn_posts = [r for r in conol.requests if r.method == "POST" and r.path.endswith("/messages")]
    assert [r.body["messages"] for r in turn_posts] == [
        [{"type": "text", "content": "second"}],
        [{"type": "text", "content": "third"}],
    ]


async def test_reuse_off_gives_the_same_answers_with_a_session_per_turn(conol):
    answers, fields = await echo_conversation(conol, TURNS, extra_body={"session_reuse": "off"})
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert {f["session_reused"] for f in fields} == {False}
    assert fields[1]["session_reuse_reason"] == "session_reuse is off"
    assert len(conol.sessions) == 3


async def test_streamed_follow_up_streams_only_the_new_turn(conol):
    answers, fields = await echo_conversation(conol, TURNS, stream=True)
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert fields[2]["session_reused"] is True
    assert len(conol.sessions) == 1


async def test_a_tool_loop_continues_with_the_tool_result(conol):
    messages = [{"role": "user", "content": "[[fake:tool_loop]] What is the weather in Paris?"}]
    first, fields1 = await ask(conol, messages, tools=[WEATHER])
    call = first["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    messages += [first, tool_result(call["id"], "18°C and sunny")]
    second, fields2 = await ask(conol, messages, tools=[WEATHER])
    assert second["content"] == "The weather in Paris is 18°C and sunny."
    assert (fields1["session_reused"], fields2["session_reused"]) == (False, True)
    assert len(conol.sessions) == 1
    conol.reset()
    clear_stores()
    alone, _ = await ask(conol, messages, tools=[WEATHER], extra_body={"session_reuse": "off"})
    assert alone["content"] == second["content"]


async def test_rewritten_history_still_matches(conol):
    messages = [{"role": "user", "content": "[[fake:tool_loop]] weather?"}]
    first, _ = await ask(conol, messages, tools=[WEATHER])
    call = first["tool_calls"][0]
    rewritten = {
        "role": "assistant",
        "content": None,  # "" as None
        "tool_calls": [{**call, "function": {**call["function"], "arguments": '{ "city" :  "Paris" }'}}],
        "reasoning_content": "whatever the client kept of the thinking",
    }
    user = {"role": "user", "content": [{"type": "text", "text": "\r\n[[fake:tool_loop]] weather? \r\n"}]}
    _, fields = await ask(conol, [user, rewritten, tool_result(call["id"], "rain")], tools=[WEATHER])
    assert fields["session_reused"] is True


async def test_changed_history_starts_a_new_session(conol):
    answers, _ = await echo_conversation(conol, TURNS[:1])
    messages = [
        {"role": "user", "content": TURNS[0]},
        {"role": "assistant", "content": answers[0] + " (edited)"},
        {"role": "user", "content": "second"},
    ]
    answer, fields = await ask(conol, messages)
    assert answer["content"] == "second"
    assert fields["session_reused"] is False
    assert fields["session_reuse_reason"] == "no session holds this history"
    assert len(conol.sessions) == 2


@pytest.mark.parametrize(
    ("status", "kind"),
    [(404, "unsupported"), (405, "unsupported"), (410, "gone"), (409, "busy"), (422, "rejected")],
)
async def test_a_refused_follow_up_falls_back_to_the_same_answer(conol, status, kind):
    """Refusals by meaning: only an upstream without follow-ups turns them off for
    everyone; a gone, busy or refused turn falls back for that conversation alone."""
    conol.configure(followup_status=status)
    answers, fields = await echo_conversation(conol, TURNS)
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert fields[1]["session_reused"] is False
    assert fields[1]["session_reuse_reason"] == f"follow-up refused ({kind}, HTTP {status}): new session"
    upstream_wide = kind == "unsupported"
    if upstream_wide:  # turn 3 does not try
        assert fields[2]["session_reuse_reason"] == "this upstream does not take follow-ups"
    else:  # turn 3 tries its own session's follow-up, and falls back again
        assert fields[2]["session_reuse_reason"] == fields[1]["session_reuse_reason"]
    assert len(conol.sessions) == 3  # a refused follow-up costs no session: one per turn, as with reuse off
    posts = [r for r in conol.requests if r.method == "POST" and r.path.endswith("/messages")]
    assert len(posts) == (1 if upstream_wide else 2)


@pytest.mark.parametrize("status", [404, 410])
async def test_a_session_gone_mid_conversation_falls_back(conol, status):
    conol.configure(gone_status=status)
    answers, _ = await echo_conversation(conol, TURNS[:2])
    conol.expire_sessions()
    messages = [{"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": answers[0]}]
    messages += [{"role": "user", "content": TURNS[1]}, {"role": "assistant", "content": answers[1]}]
    messages.append({"role": "user", "content": "third"})
    answer, fields = await ask(conol, messages)
    assert answer["content"] == "third"
    assert fields["session_reused"] is False
    assert fields["session_reuse_reason"] == f"follow-up refused (gone, HTTP {status}): new session"


@pytest.mark.parametrize("stream", [False, True])
async def test_replay_garbage_and_a_lingering_terminal_status_are_not_the_answer(conol, stream):
    conol.configure(followup_garbage=True, followup_status_lag=1.2)
    answers, fields = await echo_conversation(conol, TURNS, stream=stream)
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert [f["session_reused"] for f in fields] == [False, True, True]


async def test_a_stream_without_the_replay_works_too(conol):
    conol.configure(followup_replay=False)
    answers, fields = await echo_conversation(conol, TURNS)
    assert answers == ["[[fake:echo]] first", "second", "third"]
    assert fields[2]["session_reused"] is True


async def test_concurrent_requests_for_one_history_do_not_share_the_session(conol):
    answers, _ = await echo_conversation(conol, TURNS[:1])
    messages = [{"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": answers[0]}]
    results = await asyncio.gather(
        ask(conol, [*messages, {"role": "user", "content": "left"}]),
        ask(conol, [*messages, {"role": "user", "content": "right"}]),
    )
    assert sorted(r[0]["content"] for r in results) == ["left", "right"]
    assert sorted(r[1]["session_reused"] for r in results) == [False, True]
    assert len(conol.sessions) == 2


async def test_an_answer_cut_by_stop_is_not_continued(conol):
    messages = [{"role": "user", "content": "[[fake:echo]] alpha beta gamma"}]
    first, _ = await ask(conol, messages, stop=["gamma"])
    assert first["content"] == "[[fake:echo]] alpha beta "
    _, fields = await ask(conol, [*messages, first, {"role": "user", "content": "next"}])
    assert fields["session_reused"] is False
    assert len(conol.sessions) == 2


async def test_pinning_gets_the_model_create_ignores(conol):
    conol.configure(create_model="ignore")
    answer, fields = await ask(
        conol, [{"role": "user", "content": "[[fake:echo]] hi"}], extra_body={"model_pinning": "pin"}
    )
    assert answer["content"] == "[[fake:echo]] hi"
    session = conol.last_session
    assert session.effective_model == "claude-haiku-4-5"
    assert session.model_calls == [
        {"agentModel": "claude-haiku-4-5", "agentEffort": None},
        {"agentEffort": "low"},
    ]
    assert fields["model_downgraded"] is False


async def test_pinning_auto_learns_that_create_honours_the_model(conol):
    extra = {"extra_body": {"model_pinning": "auto"}}
    await ask(conol, [{"role": "user", "content": "[[fake:echo]] one"}], **extra)
    assert conol.last_session.model_calls == []  # create honoured it: no /model
    await ask(conol, [{"role": "user", "content": "[[fake:echo]] two"}], **extra)
    creates = [r for r in conol.requests if r.method == "POST" and r.path == "/api/sessions"]
    assert [bool(r.body["messages"]) for r in creates] == [False, True]  # learnt: one create from then on


async def test_pinning_auto_pins_when_create_ignores_the_model(conol):
    conol.configure(create_model="ignore")
    extra = {"extra_body": {"model_pinning": "auto"}}
    _, fields = await ask(conol, [{"role": "user", "content": "[[fake:echo]] one"}], **extra)
    assert conol.last_session.effective_model == "claude-haiku-4-5"
    assert fields["model_downgraded"] is False


async def test_a_pinned_session_is_re_pinned_when_the_effort_changes(conol):
    pin = {"model_pinning": "pin"}
    first = [{"role": "user", "content": "[[fake:echo]] one"}]
    answer, _ = await ask(conol, first, extra_body=pin)
    second, fields = await ask(
        conol, [*first, answer, {"role": "user", "content": "two"}], extra_body=pin, reasoning_effort="high"
    )
    assert second["content"] == "two"
    assert (fields["session_reused"], fields["session_reuse_reason"]) == (
        True,
        "history matched, model re-pinned",
    )
    assert len(conol.sessions) == 1
    assert conol.last_session.model_calls[-2:] == [
        {"agentModel": "claude-haiku-4-5", "agentEffort": None},
        {"agentEffort": "high"},
    ]
    assert conol.last_session.effort == "high"


async def test_an_effort_change_without_pinning_starts_a_new_session(conol):
    first = [{"role": "user", "content": "[[fake:echo]] one"}]
    answer, _ = await ask(conol, first)
    _, fields = await ask(
        conol, [*first, answer, {"role": "user", "content": "two"}], reasoning_effort="high"
    )
    assert (fields["session_reused"], fields["session_reuse_reason"]) == (
        False,
        "the model or effort changed",
    )
    assert len(conol.sessions) == 2


PNG_ONE = b"\x89PNG\r\n\x1a\n" + b"reuse-one"
PNG_TWO = b"\x89PNG\r\n\x1a\n" + b"reuse-two"


def image_message(text: str, data: bytes) -> dict:
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}],
    }


async def test_a_follow_up_carries_the_new_turns_image_as_an_uploaded_asset(conol):
    messages = [image_message("[[fake:echo]] first", PNG_ONE)]
    first, fields1 = await ask(conol, messages)
    messages += [first, image_message("second", PNG_TWO)]
    second, fields2 = await ask(conol, messages)
    assert (first["content"], second["content"]) == ("[[fake:echo]] first", "second")
    assert (fields1["session_reused"], fields2["session_reused"]) == (False, True)
    assert len(conol.sessions) == 1
    # each image uploaded once: the first one's upload is remembered, not repeated for turn 2
    assert [a.sha256 for a in conol.assets.values()] == [
        hashlib.sha256(d).hexdigest() for d in (PNG_ONE, PNG_TWO)
    ]
    turn_posts = [r for r in conol.requests if r.method == "POST" and r.path.endswith("/messages")]
    assert [r.body["messages"] for r in turn_posts] == [
        [
            {"type": "text", "content": "second"},
            {"type": "image", "content": "/api/assets/asset_2", "mediaType": "image/png"},
        ]
    ]


# --- refusals by meaning, what both sides hold, the effective model -------------------------------


async def test_a_rate_limited_follow_up_is_retryable_and_keeps_reuse_on(conol):
    """A 429 on one follow-up is the caller's usual retryable error; the retry
    continues the same session, and reuse stays on for other conversations."""
    answers, _ = await echo_conversation(conol, TURNS[:1])
    messages = [{"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": answers[0]}]
    messages.append({"role": "user", "content": "second"})
    conol.configure(followup_status=429)
    with pytest.raises(litellm.RateLimitError):
        await ask(conol, messages, num_retries=0)
    conol.configure(followup_status=None)
    answer, fields = await ask(conol, messages)  # the client's retry
    assert (answer["content"], fields["session_reused"]) == ("second", True)
    other, other_fields = await echo_conversation(conol, ["[[fake:echo]] other", "again"])
    assert other == ["[[fake:echo]] other", "again"]
    assert other_fields[1]["session_reused"] is True
    assert len(conol.sessions) == 2  # one per conversation: the 429 cost no session


async def test_a_server_error_on_a_follow_up_is_retried_on_that_session_only(conol):
    """After a 500 conol may have taken the turn; a retry of that very turn reads
    the session (never a second full session), and another turn on that history starts afresh."""
    answers, _ = await echo_conversation(conol, TURNS[:1])
    history = [{"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": answers[0]}]
    conol.configure(followup_status=500)
    with pytest.raises(litellm.InternalServerError):
        await ask(conol, [*history, {"role": "user", "content": "second"}], num_retries=0)
    conol.configure(followup_status=None)
    answer, fields = await ask(conol, [*history, {"role": "user", "content": "another"}])
    assert (answer["content"], fields["session_reused"]) == ("another", False)
    assert fields["session_reuse_reason"] == (
        "conol may hold another turn on that session (an earlier post timed out)"
    )
    assert len(conol.sessions) == 2


async def test_calls_the_client_did_not_get_are_never_bound(conol):
    """parallel_tool_calls=false keeps one of two calls; conol waits on both, so
    the session is not continued with one result."""
    messages = [{"role": "user", "content": "[[fake:multi_tool]] weather in two cities"}]
    first, fields = await ask(conol, messages, tools=[WEATHER], parallel_tool_calls=False)
    assert len(first["tool_calls"]) == 1
    assert fields["session_not_bound"] == (
        "conol made tool calls the client did not get (parallel_tool_calls / tool_choice)"
    )
    call = first["tool_calls"][0]
    _, second = await ask(conol, [*messages, first, tool_result(call["id"], "sunny")], tools=[WEATHER])
    assert second["session_reused"] is False
    assert len(conol.sessions) == 2


async def test_parallel_calls_to_one_tool_are_told_apart_in_a_follow_up(conol):
    """Each result names its call by name, arguments and order, as conol saw it."""
    messages = [{"role": "user", "content": "[[fake:multi_tool]] weather in two cities"}]
    first, _ = await ask(conol, messages, tools=[WEATHER])
    paris, tokyo = first["tool_calls"]
    results = [tool_result(paris["id"], "sunny"), tool_result(tokyo["id"], "rainy")]
    _, fields = await ask(conol, [*messages, first, *results], tools=[WEATHER])
    assert fields["session_reused"] is True
    assert conol.last_session.messages[-2:] == [
        f'[Tool result #{paris["id"]}: get_weather({{"city": "Paris"}})]: sunny',
        f'[Tool result #{tokyo["id"]}: get_weather({{"city": "Tokyo"}})]: rainy',
    ]


async def test_a_follow_up_reports_the_model_conol_runs(conol):
    """The binding keeps the effective model; a follow-up reports it."""
    conol.configure(create_model="ignore")
    _, fields = await echo_conversation(conol, TURNS[:2])
    assert [f["session_reused"] for f in fields] == [False, True]
    assert [(f["effective_model"], f["model_downgraded"]) for f in fields] == [
        ("deepseek/deepseek-v4-flash", True),
        ("deepseek/deepseek-v4-flash", True),
    ]


async def test_what_conol_does_is_learnt_for_every_caller(conol):
    """Bindings are per caller; that an upstream has no follow-ups is the upstream's, whoever found it."""
    conol.configure(followup_status=405)
    _, first = await echo_conversation(conol, TURNS[:2], user="alice")
    assert first[1]["session_reuse_reason"] == "follow-up refused (unsupported, HTTP 405): new session"
    _, second = await echo_conversation(conol, ["[[fake:echo]] bob's", "next"], user="bob")
    assert second[1]["session_reuse_reason"] == "this upstream does not take follow-ups"
