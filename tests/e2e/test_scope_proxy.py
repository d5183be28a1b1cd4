"""Callers, remembered validation failures and the usage log, through the real LiteLLM proxy (the
shared one of tests/e2e/conftest.py: one worker, the shipped config with the usage-log callback)
against the fake.

* Two end users (``user`` on chat, anthropic ``metadata.user_id`` on ``/v1/messages``) sending word
  for word the same two-turn conversation, interleaved, never continue each other's session; and
  identity fields a caller writes into the body's ``metadata`` / ``litellm_metadata`` select nothing.
  (Virtual keys and teams need the proxy's database, which cannot run here: end users are the
  callers these tests can make.)
* Four identical requests that never validate cost two rounds of sessions: the openai SDK sees a
  502 each time, from the second on with ``x-should-retry: false`` and a message saying why.
* The usage log line of each: sessions created, follow-up turns, reuse, and what refused a request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from support.proxyproc import MASTER_KEY
from support.usage_log import usage_rows

from litellm_conol.fake import Done, FakeConol, Preview, Scenario, ScenarioContext, SetStatus

pytestmark = pytest.mark.timeout(180)

MODEL = "claude-haiku-4-5"
ROUND = 3  # sessions per round: the first turn and max_repair_turns=2 repair turns
PERSON = {
    "type": "json_schema",
    "json_schema": {
        "name": "Person",
        "schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
        },
    },
}


@pytest.fixture
def fake(proxy_fake, shipped_proxy) -> FakeConol:
    proxy_fake.reset()
    return proxy_fake


@pytest.fixture
def oai(shipped_proxy) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60) as c:
        yield c


@pytest.fixture
def claude(shipped_proxy) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=shipped_proxy.base_url, api_key=MASTER_KEY, max_retries=0, timeout=60
    ) as c:
        yield c


def new_rows(usage_log: Path, before: int, count: int) -> list[dict[str, Any]]:
    rows = usage_rows(usage_log, before + count)[before:]
    assert len(rows) == count, rows
    return rows


# --- two callers, one conversation -------------------------------------------------------------


def test_two_end_users_with_the_same_conversation_never_share_a_session_on_chat(oai, fake, usage_log):
    before = len(usage_rows(usage_log, 0))
    histories: dict[str, list[dict[str, Any]]] = {"alice": [], "bob": []}
    reused: dict[str, list[bool]] = {"alice": [], "bob": []}
    for text in ("[[fake:echo]] the same words", "and the same reply"):
        for user in ("alice", "bob"):  # interleaved: bob's turn 1 comes after alice's
            histories[user].append({"role": "user", "content": text})
            message = (
                oai.chat.completions.create(model=MODEL, messages=histories[user], user=user)
                .choices[0]
                .message
            )
            histories[user].append({"role": "assistant", "content": message.content})
            reused[user].append(message.provider_specific_fields["session_reused"])
    assert histories["alice"] == histories["bob"]
    assert reused == {"alice": [False, True], "bob": [False, True]}
    assert len(fake.sessions) == 2
    assert sorted(s.turns for s in fake.sessions.values()) == [2, 2]
    rows = new_rows(usage_log, before, 4)
    assert [(r["user"], r["sessions_created"], r["followup_turns"], r["session_reused"]) for r in rows] == [
        ("alice", 1, 0, False),
        ("bob", 1, 0, False),
        ("alice", 0, 1, True),
        ("bob", 0, 1, True),
    ]
    assert {r["key_hash"] for r in rows} == {"litellm_proxy_master_key"}  # LiteLLM's name for it
    # each follow-up went to its own user's session
    sessions_of = {r["user"]: {x["session_id"] for x in rows if x["user"] == r["user"]} for r in rows}
    assert all(len(ids) == 1 for ids in sessions_of.values()) and sessions_of["alice"] != sessions_of["bob"]


def test_two_end_users_with_the_same_conversation_never_share_a_session_on_messages(claude, fake, usage_log):
    """anthropic ``metadata.user_id`` is the end user on /v1/messages (LiteLLM's auth reads it)."""
    before = len(usage_rows(usage_log, 0))
    histories: dict[str, list[dict[str, Any]]] = {"carol": [], "dave": []}
    for text in ("[[fake:echo]] claude words", "claude reply"):
        for user_id in ("carol", "dave"):
            histories[user_id].append({"role": "user", "content": text})
            message = claude.messages.create(
                model=MODEL, max_tokens=1000, messages=histories[user_id], metadata={"user_id": user_id}
            )
            answer = "".join(b.text for b in message.content if b.type == "text")
            histories[user_id].append({"role": "assistant", "content": answer})
    assert histories["carol"] == histories["dave"]
    assert [m["content"] for m in histories["carol"]][1::2] == ["[[fake:echo]] claude words", "claude reply"]
    # shared, carol's second turn would have taken dave's session: three sessions, turns [1, 2, 1]
    assert sorted(s.turns for s in fake.sessions.values()) == [2, 2]
    rows = new_rows(usage_log, before, 4)
    assert [(r["user"], r["sessions_created"], r["followup_turns"]) for r in rows] == [
        ("carol", 1, 0),
        ("dave", 1, 0),
        ("carol", 0, 1),
        ("dave", 0, 1),
    ]
    assert rows[0]["session_id"] == rows[2]["session_id"] != rows[1]["session_id"] == rows[3]["session_id"]


def test_identity_fields_in_the_body_select_no_other_callers_scope(oai, claude, fake):
    """mallory copies alice's conversation and writes alice's identity into every metadata dict a
    body has: she is still mallory (auth strips those fields and writes its own)."""
    turn_one = [{"role": "user", "content": "[[fake:echo]] private words"}]
    answer = oai.chat.completions.create(model=MODEL, messages=turn_one, user="alice").choices[0].message
    history = [
        *turn_one,
        {"role": "assistant", "content": answer.content},
        {"role": "user", "content": "go on"},
    ]
    alice = {"user_api_key_end_user_id": "alice", "user_api_key_hash": "litellm_proxy_master_key"}
    forged = (
        oai.chat.completions.create(
            model=MODEL,
            messages=history,
            user="mallory",
            extra_body={"metadata": alice, "litellm_metadata": alice},
        )
        .choices[0]
        .message
    )
    assert forged.provider_specific_fields["session_reused"] is False
    assert len(fake.sessions) == 2
    # the same on /v1/messages: alice's identity in the body's litellm_metadata and metadata
    forged_claude = claude.messages.create(
        model=MODEL,
        max_tokens=1000,
        messages=history,
        metadata={"user_id": "mallory"},
        extra_body={"litellm_metadata": alice},
    )
    assert forged_claude.content[-1].text == "go on"
    assert len(fake.sessions) == 3
    # and alice herself continues her session
    mine = oai.chat.completions.create(model=MODEL, messages=history, user="alice").choices[0].message
    assert mine.provider_specific_fields["session_reused"] is True
    assert len(fake.sessions) == 3


# --- a request that never validates ------------------------------------------------------------


def test_four_identical_never_valid_requests_cost_two_rounds(oai, fake, usage_log):
    before = len(usage_rows(usage_log, 0))
    request = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Who? proxy [[fake:json_never_valid]]"}],
        "response_format": PERSON,
        "extra_headers": {"x-litellm-num-retries": "0"},  # each attempt is the client's own
    }
    errors: list[openai.APIStatusError] = []
    sessions = []
    for _ in range(4):
        with pytest.raises(openai.APIStatusError) as caught:
            oai.chat.completions.create(**request)
        errors.append(caught.value)
        sessions.append(len(fake.sessions))
    assert sessions == [ROUND, 2 * ROUND, 2 * ROUND, 2 * ROUND]
    assert [e.status_code for e in errors] == [502] * 4
    # the proxy passes a provider's headers on prefixed (docs/effort-and-retries.md): the SDKs read
    # only the bare name, so through the proxy the status decides their retries; each costs nothing
    headers = [e.response.headers for e in errors]
    assert [h.get("llm_provider-x-should-retry") for h in headers] == [None, "false", "false", "false"]
    assert [h.get("x-should-retry") for h in headers] == [None] * 4
    messages = [e.message for e in errors]
    assert "the answer failed validation (3 turn(s), max_repair_turns=2; sessions " in messages[0]
    assert "in a row" not in messages[0]
    assert "the same request failed validation in 2 rounds in a row, the one before " in messages[1]
    for message in messages[2:]:
        assert "refused without starting a conol session: the answer failed validation" in message
        assert "refused without a conol session for the next 300 s; not retried) (" in message
    rows = new_rows(usage_log, before, 4)
    assert [(r["outcome"], r["sessions_created"], r["refused_by"]) for r in rows] == [
        ("failure", ROUND, None),
        ("failure", ROUND, None),
        ("failure", 0, "failure_memory"),
        ("failure", 0, "failure_memory"),
    ]


def test_with_the_routers_retries_two_client_attempts_cost_two_rounds(oai, fake, usage_log):
    """The proxy's Router retries a 502 (num_retries: LiteLLM's default 2): the first client attempt
    runs a round, the Router's retry the second, its next retry is refused; so is the client's
    second attempt. The proxy runs failure callbacks once per request, at its first failing
    attempt: the usage line of a request whose Router retries all fail counts that attempt's
    sessions only (docs/team-deployment.md#usage-log-and-spend)."""
    before = len(usage_rows(usage_log, 0))
    request = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Who? with retries [[fake:json_never_valid]]"}],
        "response_format": PERSON,
    }
    for _ in range(2):
        with pytest.raises(openai.APIStatusError) as caught:
            oai.chat.completions.create(**request)
        assert caught.value.status_code == 502
        assert "refused without starting a conol session" in caught.value.message
    assert len(fake.sessions) == 2 * ROUND
    rows = new_rows(usage_log, before, 2)
    assert [(r["sessions_created"], r["refused_by"]) for r in rows] == [(ROUND, None), (0, "failure_memory")]


def valid_from_the_fourth_session() -> Scenario:
    created = []

    def steps(ctx: ScenarioContext) -> list[Any]:
        created.append(1)
        text = '{"name": "Ada Lovelace", "age": 36}' if len(created) >= 4 else "no JSON yet"
        return [Preview(text), SetStatus("completed"), Done()]

    return Scenario("valid_from_the_fourth", steps, description="not JSON in the first three sessions")


def test_a_request_answered_on_the_routers_retry_logs_every_attempts_sessions(oai, fake, usage_log):
    fake.add_scenario(valid_from_the_fourth_session())
    before = len(usage_rows(usage_log, 0))
    message = (
        oai.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Who? [[fake:valid_from_the_fourth]]"}],
            response_format=PERSON,
        )
        .choices[0]
        .message
    )
    assert message.content == '{"name": "Ada Lovelace", "age": 36}'
    assert len(fake.sessions) == ROUND + 1  # a round, then the Router's retry answered at once
    # the proxy logs the failed attempt, then the answer: each line counts its own sessions
    rows = new_rows(usage_log, before, 2)
    assert [(r["outcome"], r["sessions_created"], r["followup_turns"]) for r in rows] == [
        ("failure", ROUND, 0),
        ("success", 1, 0),
    ]


def test_a_settings_boundary_refusal_is_logged_as_such(oai, fake, usage_log):
    before = len(usage_rows(usage_log, 0))
    with pytest.raises(openai.BadRequestError, match="is set by the proxy operator"):
        oai.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], extra_body={"first_event_timeout": 1}
        )
    assert fake.sessions == {}
    (row,) = new_rows(usage_log, before, 1)
    assert (row["outcome"], row["refused_by"], row["sessions_created"]) == ("failure", "settings_boundary", 0)


def test_streamed_and_responses_requests_log_their_sessions_and_turns(oai, fake, usage_log):
    before = len(usage_rows(usage_log, 0))
    items: list[Any] = [{"role": "user", "content": "[[fake:echo]] responses one"}]
    first = oai.responses.create(model=MODEL, input=items, user="erin")
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"role": "user", "content": "responses two"})
    assert oai.responses.create(model=MODEL, input=items, user="erin").output_text == "responses two"
    chat = [{"role": "user", "content": "[[fake:echo]] streamed one"}]
    stream = oai.chat.completions.create(model=MODEL, messages=chat, user="erin", stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    chat += [{"role": "assistant", "content": text}, {"role": "user", "content": "streamed two"}]
    stream = oai.chat.completions.create(model=MODEL, messages=chat, user="erin", stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "streamed two"
    rows = new_rows(usage_log, before, 4)
    assert [(r["stream"], r["sessions_created"], r["followup_turns"], r["session_reused"]) for r in rows] == [
        (False, 1, 0, False),
        (False, 0, 1, True),
        (True, 1, 0, False),
        (True, 0, 1, True),
    ]
    assert [r["session_reuse_reason"] for r in rows] == [
        "no earlier turn to continue",
        "history matched",
        "no earlier turn to continue",
        "history matched",
    ]
    assert {(r["user"], r["refused_by"]) for r in rows} == {("erin", None)}
    assert len(fake.sessions) == 2
