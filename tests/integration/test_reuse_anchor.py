"""Session reuse anchored on the turn we posted (docs/session-reuse.md#where-the-new-turn-starts): one
regression test per finding of the review, through LiteLLM's SDK against the fake under the reading
that showed it. Each failed on the code before the anchor (an empty, stale, borrowed or hanging
answer, a turn posted twice, reuse switched off for the fleet, a binding the client does not hold).

1. a slow first token under a lagging status: the previous turn's ``completed`` (or ``failed``) is
   not this turn's end;
2. a turn taken, then answered 5xx: the retry reads it (one POST), never posts it again;
3. what conol writes after we stop reading (a note, a tool call, more answer) is never the next
   answer; a tail the client does not hold stops the binding;
4. turns without stages are not bound; follow-ups without stages fail safe (a retryable error, the
   upstream's follow-ups unverified for a while);
5. a preview still showing the previous message when the new turn opens in the same stage is not
   streamed as the new answer;
6. a turn repeated word for word, on an upstream that neither replays nor stamps its user logs, is
   placed at the end of the history, not at the earlier turn;
7. an expired image asset refused with 404 is that conversation's, not "no follow-ups" for all;
9. a rewritten streamed answer is not bound; our own refusal after a post leaves no reattach.
"""

from __future__ import annotations

import base64
from typing import Any

import litellm
import pytest
from support.timing import bound
from support.weather import OPENAI_TOOL as WEATHER

import litellm_conol
from litellm_conol.fake import FakeConol
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(120)
# quick polls; a stall ends in seconds (the anchor's budget is first_event_timeout)
FAST = {"status_poll_interval": 0.05, "first_event_timeout": bound(6), "idle_timeout": bound(6)}


@pytest.fixture(scope="module")
def server():
    with FakeConol() as fake:
        yield fake


@pytest.fixture
def fake(server):
    server.reset()
    clear_stores()
    yield server
    clear_stores()


async def ask(fake: FakeConol, messages: list[dict[str, Any]], *, stream: bool = False, **extra: Any):
    """The answer's text and ``provider_specific_fields``."""
    call = {"model": MODEL, "api_base": fake.base_url, "api_key": fake.token, "messages": messages}
    call |= {**FAST, "timeout": bound(30), "num_retries": 0, **extra}
    if not stream:
        response = await litellm.acompletion(**call)
        message = response.choices[0].message
        return message.content or "", message.provider_specific_fields or {}
    text, fields = [], {}
    async for chunk in await litellm.acompletion(**call, stream=True):
        text.append(chunk.choices[0].delta.content or "")
        fields.update(getattr(chunk, "provider_specific_fields", None) or {})
    return "".join(text), fields


async def talk(fake: FakeConol, turns: list[str], **extra: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """A text conversation: each turn's answer and fields."""
    messages: list[dict[str, Any]] = []
    answers, fields = [], []
    for text in turns:
        messages.append({"role": "user", "content": text})
        answer, field = await ask(fake, messages, **extra)
        messages.append({"role": "assistant", "content": answer})
        answers.append(answer)
        fields.append(field)
    return answers, fields


def turn_posts(fake: FakeConol) -> list[int | None]:
    return [r.status for r in fake.requests if r.method == "POST" and r.path.endswith("/messages")]


ECHO = ["[[fake:echo]] one", "two", "three"]


@pytest.mark.parametrize(
    ("replayed_end", "lag", "first_token"), [("none", 0.3, 1.5), ("error", 1.5, 2.5)], ids=["none", "error"]
)
async def test_item_1_a_slow_first_token_under_a_lagging_status_gets_its_answer(
    fake, replayed_end, lag, first_token
):
    """The echo of our turn arrives at once, the first word ``first_token`` s later, and for ``lag``
    s after the post the status still says the previous turn's end: ``completed``, or ``failed``
    when each earlier turn is replayed as failed after its answer."""
    fake.configure(first_token_delay=first_token, followup_status_lag=lag, followup_replayed_end=replayed_end)
    answers, fields = await talk(fake, ECHO)
    assert answers == ECHO
    assert [f["session_reused"] for f in fields] == [False, True, True]


async def test_item_2_a_turn_taken_then_answered_5xx_is_read_never_posted_again(fake):
    """conol takes turn 2 but its gateway answers 500; the turn starts late (turn 1's late note is
    still being written), while the status still says turn 1's ``completed``. The retry reads the
    turn the first attempt posted."""
    fake.configure(late_events="note", late_after=2.5)
    history = [{"role": "user", "content": ECHO[0]}]
    first, _ = await ask(fake, history)
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": "two"}]
    fake.configure(followup_taken_status=500)
    with pytest.raises(litellm.InternalServerError):
        await ask(fake, history)
    fake.configure(followup_taken_status=None)
    answer, fields = await ask(fake, history)  # the client's retry
    assert answer == "two"
    assert fields["session_reuse_reason"] == "history matched, reading the turn an earlier attempt posted"
    assert turn_posts(fake) == [500]
    assert len(fake.sessions) == 1 and fake.last_session.turns == 2


@pytest.mark.parametrize(
    ("late", "builtins", "bound_after_turn_2"),
    [
        ("note", "hide", True),
        ("tool_call", "hide", True),
        ("tool_call", "expose", False),
        ("answer", "hide", False),
    ],
)
async def test_item_3_what_conol_writes_after_the_client_stopped_is_never_the_next_answer(
    fake, late, builtins, bound_after_turn_2
):
    """conol writes a note, runs a tool or says more 0.5 s after each turn's end. The next turn's
    answer is its own; a tail the client does not hold (text, a call it would have got) stops the
    binding, conol's hidden runs do not."""
    fake.configure(late_events=late, late_after=0.5)
    answers, fields = await talk(fake, ECHO, builtin_tools=builtins)
    assert answers == ECHO
    assert [f["builtin_tools"] for f in fields] == [[], [], []]
    assert fields[1]["session_reused"] is True
    if bound_after_turn_2:
        assert "session_not_bound" not in fields[1]
        assert fields[2]["session_reused"] is True
    else:
        assert fields[1]["session_not_bound"].startswith("conol holds more than the client: it ")
        assert fields[2]["session_reuse_reason"] == "no session holds this history"


async def test_item_4_a_turn_whose_events_carry_no_stages_is_not_bound(fake):
    fake.configure(stageless_turns="all")
    answers, fields = await talk(fake, ECHO)
    assert answers == ECHO
    assert fields[0]["session_not_bound"] == (
        "conol sent the answer without stages (no boundary for the next turn)"
    )
    assert [f["session_reused"] for f in fields] == [False, False, False]
    assert len(fake.sessions) == 3


async def test_item_4_fail_safe_a_follow_up_stream_without_the_turn_is_a_retryable_error(fake, caplog):
    """Follow-up turns come without stages, so their stream never shows the turn we posted: the
    request gets a retryable error (no second post), reuse is off for that upstream (a log line
    says why), and the client's retry is answered by a new session."""
    fake.configure(stageless_turns="follow-ups")
    history = [{"role": "user", "content": ECHO[0]}]
    first, _ = await ask(fake, history)
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": "two"}]
    with pytest.raises(litellm.ServiceUnavailableError, match="never showed the turn we posted"):
        await ask(fake, history)
    assert turn_posts(fake) == [202]
    assert "follow-ups stay off for this upstream" in caplog.text
    answer, fields = await ask(fake, history)
    assert answer == "two"
    assert fields["session_reused"] is False
    assert fields["session_reuse_reason"].startswith("follow-ups on this upstream are unverified (")
    assert turn_posts(fake) == [202]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_item_5_a_preview_kept_from_the_previous_turn_is_not_the_new_answer(fake, stream):
    """The new turn continues the previous turn's stage, whose message preview still shows the
    previous answer in the event that brings the new user log."""
    fake.configure(followup_stage="same", followup_previews="kept")
    answers, fields = await talk(fake, ECHO, stream=stream)
    assert answers == ECHO
    assert [f["session_reused"] for f in fields] == [False, True, True]


async def test_item_6_a_turn_repeated_word_for_word_is_placed_at_the_end_of_the_history(fake):
    """Same stage, logs as deltas, no replay, user logs without a time: "continue" twice echoes the
    same log, and the echo scenario answers it with the same text."""
    fake.configure(followup_stage="same", followup_replay=False, user_log_time="none")
    turns = ["[[fake:echo]] go", "continue", "continue", "continue"]
    answers, fields = await talk(fake, turns)
    assert answers == turns
    assert [f["session_reused"] for f in fields] == [False, True, True, True]


PNG = b"\x89PNG\r\n\x1a\n" + b"anchor-test"


def with_image(text: str) -> dict[str, Any]:
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}],
    }


async def test_item_7_an_expired_image_asset_is_this_conversations_only(fake):
    """conol answers a turn naming an expired asset with 404 while the session is there: that
    conversation gets a new session (its image uploaded again); follow-ups stay on for everyone."""
    fake.configure(unknown_asset_status=404)
    history = [with_image("[[fake:echo]] look")]
    first, _ = await ask(fake, history)
    history += [{"role": "assistant", "content": first}, with_image("again")]
    fake.expire_assets()
    answer, fields = await ask(fake, history)
    assert answer == "again"
    assert fields["session_reuse_reason"] == "follow-up refused (asset_gone, HTTP 404): new session"
    other, other_fields = await talk(fake, ["[[fake:echo]] other", "more"])
    assert other == ["[[fake:echo]] other", "more"]
    assert other_fields[1]["session_reused"] is True


async def test_item_9_a_rewritten_streamed_answer_is_not_bound(fake):
    """The client got "The answer is 4"; conol's answer became "The answer is four."."""
    answers, fields = await talk(fake, ["[[fake:rewrite]] what is 2+2?", "and 3+3?"], stream=True)
    assert answers[0] == "The answer is 4"
    assert fields[0]["session_not_bound"] == (
        "the streamed answer was rewritten after it was sent (the client holds other text)"
    )
    assert fields[1]["session_reused"] is False


async def test_item_9_our_own_refusal_after_a_post_leaves_no_reattach(fake):
    """``tool_choice: required`` unmet on a follow-up: conol holds the whole turn, the client got a
    400. The session is forgotten: no later request reads that turn as its own."""
    history = [{"role": "user", "content": ECHO[0]}]
    first, _ = await ask(fake, history, tools=[WEATHER])
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": "two"}]
    with pytest.raises(litellm.BadRequestError, match="tool_choice is 'required'"):
        await ask(fake, history, tools=[WEATHER], tool_choice="required")
    answer, fields = await ask(fake, history, tools=[WEATHER])
    assert answer == "two"
    assert (fields["session_reused"], fields["session_reuse_reason"]) == (
        False,
        "no session holds this history",
    )
