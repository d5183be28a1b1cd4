"""History matching, the turn boundary and binding lifecycle: pure, with property tests for the
canonical history (every rewrite we accept maps to the same key; every change of content does not)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litellm_conol.client._bindings import MemoryBindings, UpstreamMemory
from litellm_conol.core import (
    BadRequest,
    Binding,
    Continue,
    Fresh,
    ReuseOptions,
    TurnBoundary,
    bind_refusal,
    decide,
    history_digest,
    parse_event,
    render_turn,
    settings_of,
    split_new_turn,
)
from litellm_conol.core._reuse import reuse_options as options_of

words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=8
)
texts = st.lists(words, min_size=1, max_size=6)
spaces = st.sampled_from([" ", "  ", "\n", "\t", " \n "])
args = st.dictionaries(st.sampled_from(["city", "n", "path"]), st.one_of(st.integers(), words), max_size=3)


def conversation(user: list[str], answer: list[str], arguments: dict) -> list[dict]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": " ".join(user)},
        {
            "role": "assistant",
            "content": " ".join(answer),
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "f", "arguments": json.dumps(arguments)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]


def digest(messages) -> str:
    return history_digest("scope", "settings", messages)


@settings(max_examples=150, deadline=None)
@given(user=texts, answer=texts, arguments=args, space=spaces, data=st.data())
def test_accepted_rewrites_map_to_the_same_key(user, answer, arguments, space, data):
    original = conversation(user, answer, arguments)
    rewritten = conversation(user, answer, arguments)
    rewritten[0] = {"role": "developer", "content": [{"type": "text", "text": "You are helpful."}]}
    rewritten[1]["content"] = [{"type": "text", "text": space + space.join(user) + space}]
    assistant = rewritten[2]
    pretty = json.dumps(arguments, indent=data.draw(st.sampled_from([None, 2])), sort_keys=True)
    split_text = {"role": "assistant", "content": space.join(answer), "reasoning_content": "hmm"}
    split_calls = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "signed"}],
        "tool_calls": [{**assistant["tool_calls"][0], "function": {"name": "f", "arguments": pretty}}],
    }
    rewritten[2:3] = [split_text, split_calls]
    assert digest(rewritten) == digest(original)


@settings(max_examples=150, deadline=None)
@given(user=texts, answer=texts, arguments=args, which=st.integers(0, 4), extra=words)
def test_a_change_of_content_changes_the_key(user, answer, arguments, which, extra):
    original = conversation(user, answer, arguments)
    changed = conversation(user, answer, arguments)
    if which == 0:
        changed[1]["content"] += " " + extra
    elif which == 1:
        changed[2]["content"] = extra + " " + changed[2]["content"]
    elif which == 2:
        changed[2]["tool_calls"][0]["function"]["arguments"] = json.dumps({**arguments, "added": extra})
    elif which == 3:
        changed[3]["content"] = "ok " + extra
    else:
        changed[2]["tool_calls"][0]["id"] = "call_x" + extra
    assert digest(changed) != digest(original)


def test_role_order_and_scope_are_part_of_the_key():
    base = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert digest(base) != digest(list(reversed(base)))
    assert history_digest("one", "s", base) != history_digest("two", "s", base)
    assert history_digest("one", "s", base) != history_digest("one", "t", base)


def test_split_new_turn():
    user = {"role": "user", "content": "a"}
    assistant = {"role": "assistant", "content": "b"}
    tool = {"role": "tool", "tool_call_id": "1", "content": "r"}
    assert split_new_turn([user]) is None  # nothing earlier
    assert split_new_turn([user, assistant]) is None  # nothing new
    assert split_new_turn([user, assistant, tool, user]) == ([user, assistant], [tool, user])
    assert split_new_turn([user, assistant, {"role": "system", "content": "x"}]) is None


def test_render_turn_names_the_tool_from_the_history():
    history = [
        {"role": "user", "content": "w?"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
    ]
    parts = render_turn(history, [{"role": "tool", "tool_call_id": "c1", "content": "sun"}])
    assert [p.content for p in parts] == ["[Tool result #c1 (get_weather)]: sun"]
    with pytest.raises(BadRequest, match="no text"):
        render_turn(history, [{"role": "user", "content": ""}])


def reuse_options(params):
    return options_of(settings_of(params))


def test_options():
    assert reuse_options({}) == ReuseOptions()
    assert reuse_options({"session_reuse": False}).mode == "off"  # YAML `off`
    assert reuse_options({"session_reuse": "OFF", "model_pinning": "pin"}).pinning == "pin"
    assert (
        reuse_options({"redis_host": "r", "redis_port": 7, "redis_password": "pw"}).redis_url
        == "redis://:pw@r:7"
    )
    assert (  # a password is URL-encoded, so any character in it is taken as it is
        reuse_options({"redis_host": "r", "redis_password": "p@ss:w/rd"}).redis_url
        == "redis://:p%40ss%3Aw%2Frd@r:6379"
    )
    # the call's own Redis settings as a group before the environment's
    env = {"REDIS_URL": "redis://env:1"}
    assert options_of(settings_of({"redis_host": "dep"}, env)).redis_url == "redis://dep:6379"
    assert options_of(settings_of({}, env)).redis_url == "redis://env:1"
    with pytest.raises(BadRequest, match="session_reuse must be one of 'auto', 'off', got 'sometimes'"):
        reuse_options({"session_reuse": "sometimes"})
    with pytest.raises(
        BadRequest,
        match="session_reuse_ttl must be a number of seconds more than 0 and at most 604800, got 0",
    ):
        reuse_options({"session_reuse_ttl": 0})


BINDING = Binding("s1", "m", "low", ("a",), 1, pinned=True)


def test_decide():
    on = ReuseOptions()
    kw = {
        "options": on,
        "model": "m",
        "effort": "low",
        "continuable": True,
        "upstream_refused": False,
        "pinning": False,
    }
    assert decide(BINDING, **kw) == Continue(BINDING, repin=False)
    assert decide(None, **kw) == Fresh("no session holds this history")
    assert decide(BINDING, **{**kw, "options": ReuseOptions(mode="off")}) == Fresh("session_reuse is off")
    assert decide(BINDING, **{**kw, "continuable": False}) == Fresh("no earlier turn to continue")
    assert decide(BINDING, **{**kw, "upstream_refused": True}) == Fresh(
        "this upstream refused a follow-up recently"
    )
    assert decide(BINDING, **{**kw, "model": "other"}) == Fresh("the model or effort changed")
    assert decide(BINDING, **{**kw, "effort": "high", "pinning": True}) == Continue(BINDING, repin=True)


def test_bind_refusal():
    assert bind_refusal(runs=1, cut=False, structured=False, finished=True) is None
    assert bind_refusal(runs=2, cut=False, structured=False, finished=True) == "a repair turn ran"
    assert (
        bind_refusal(runs=1, cut=True, structured=False, finished=True)
        == "the answer was cut (stop / max_tokens)"
    )
    assert bind_refusal(runs=1, cut=False, structured=True, finished=True).startswith("structured output")
    assert bind_refusal(runs=1, cut=False, structured=False, finished=False) == "the turn did not finish"


def test_binding_json_round_trip_and_garbage():
    assert Binding.from_json(BINDING.to_json()) == BINDING
    assert Binding.from_json(b"not json") is None
    assert Binding.from_json('{"model": "m"}') is None
    assert "token" not in BINDING.to_json()


# --- the new-turn boundary -------------------------------------------------------------------------


def delta(*stages) -> bytes:
    return json.dumps({"type": "history_delta", "stages": list(stages)}).encode()


def stage(sid, logs=(), preview=()):
    return {"id": sid, "logs": list(logs), "preview": list(preview)}


OLD_ANSWER = {"role": "assistant", "type": "message", "content": "old"}


def test_the_replayed_past_is_dropped_until_the_new_turn_shows():
    boundary = TurnBoundary(frozenset({"old"}), "what next?")
    assert boundary.filter(parse_event(delta(stage("old", [OLD_ANSWER], [OLD_ANSWER])))) is None
    assert boundary.filter(parse_event(b'{"type": "done"}')) is None
    assert boundary.filter(parse_event(b'{"type": "error", "message": "old failure"}')) is None
    assert not boundary.started
    new = parse_event(
        delta(stage("old", [OLD_ANSWER]), stage("new", [], [{"type": "message", "content": "hi"}]))
    )
    kept = boundary.filter(new)
    assert boundary.started
    assert [s.id for s in kept.stages] == ["new"]
    assert boundary.filter(parse_event(b'{"type": "done"}')) is not None


def test_a_new_turn_in_a_known_stage_starts_at_its_user_log():
    boundary = TurnBoundary(frozenset({"main"}), "what next?")
    user = {"role": "user", "type": "message", "content": "<system-reminder>…</system-reminder>\nwhat  next?"}
    new_answer = {"role": "assistant", "type": "message", "content": "new"}
    kept = boundary.filter(parse_event(delta(stage("main", [OLD_ANSWER, user, new_answer]))))
    assert boundary.started
    assert [log.content for log in kept.stages[0].logs] == ["new"]
    later = boundary.filter(parse_event(delta(stage("main", [new_answer]))))
    assert later is not None  # the stage is the new turn's from then on


# --- binding lifecycle -------------------------------------------------------------------------------


async def test_memory_bindings_peek_keep_take_once_expire_and_cap():
    store = MemoryBindings(cap=2)
    await store.put("k", BINDING, ttl=60)
    assert await store.peek("k") == BINDING
    assert await store.peek("k") == BINDING  # a peek leaves it: a request that goes fresh keeps it
    assert await store.take("k", BINDING) == BINDING
    assert (
        await store.take("k", BINDING) is None
    )  # taken: a concurrent request for the same history gets none
    assert await store.peek("k") is None
    await store.put("old", BINDING, ttl=-1)
    assert await store.peek("old") is None  # expired
    for key in ("a", "b", "c"):
        await store.put(key, BINDING, ttl=60)
    assert len(store) == 2
    assert await store.peek("a") is None  # the oldest went first
    assert await store.take("c", BINDING) == BINDING


async def test_a_take_fails_when_the_binding_was_replaced_after_the_peek():
    store = MemoryBindings(cap=4)
    await store.put("k", BINDING, ttl=60)
    peeked = await store.peek("k")
    other = Binding(session_id="s-other", model=BINDING.model, effort=BINDING.effort)
    await store.put("k", other, ttl=60)  # another request continued it and bound its own session
    assert peeked is not None and await store.take("k", peeked) is None
    assert await store.peek("k") == other  # left as it is


def test_a_binding_survives_its_json_round_trip_exactly():
    """``take`` compares the stored JSON with the peeked binding's: the round trip must be exact."""
    raw = BINDING.to_json()
    parsed = Binding.from_json(raw)
    assert parsed is not None and parsed.to_json() == raw


def test_upstream_memory():
    memory = UpstreamMemory()
    assert not memory.refused("u")
    memory.refuse("u", 60)
    assert memory.refused("u") and not memory.refused("v")
    assert memory.create_honours("u", "m") is None
    memory.learn("u", "m", False)
    assert memory.create_honours("u", "m") is False
