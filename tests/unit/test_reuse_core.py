"""History matching, the turn boundary and binding lifecycle: pure, with property tests for the
canonical history (every rewrite we accept maps to the same key; every change of content does not)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from litellm_conol import BadRequest
from litellm_conol.core.config.boundary import settings_of
from litellm_conol.core.config.reuse_options import ReuseOptions
from litellm_conol.core.config.reuse_options import reuse_options as options_of
from litellm_conol.core.protocol.stage_marks import SessionHistory, StageMark
from litellm_conol.core.request.render import render_messages
from litellm_conol.reuse.fingerprint import Binding, history_digest, split_new_turn
from litellm_conol.reuse.store import MemoryBindings, UpstreamMemory
from litellm_conol.reuse.turns import Ask, Continue, Fresh, plan_turn, render_turn, why_not_bound

words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=8
)
texts = st.lists(words, min_size=1, max_size=6)
ends = st.sampled_from(["", " ", "\n", " \n ", "\t"])
args = st.dictionaries(st.sampled_from(["city", "n", "path"]), st.one_of(st.integers(), words), max_size=3)


def conversation(user: list[str], answer: list[str], arguments: dict) -> list[dict]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "\n".join(user)},
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
@given(user=texts, answer=texts, arguments=args, end=ends, data=st.data())
def test_accepted_rewrites_map_to_the_same_key(user, answer, arguments, end, data):
    """What clients rewrite when they resend (tests/unit/test_request_pairs.py has recorded ones):
    line endings, trailing space, space at either end, parts vs a string, split answers, reasoning."""
    original = conversation(user, answer, arguments)
    rewritten = conversation(user, answer, arguments)
    rewritten[0] = {"role": "developer", "content": [{"type": "text", "text": "You are helpful."}]}
    crlf = "".join(word + end.replace("\n", "") + "\r\n" for word in user)
    rewritten[1]["content"] = [{"type": "text", "text": "  \n" + crlf + end}]
    assistant = rewritten[2]
    pretty = json.dumps(arguments, indent=data.draw(st.sampled_from([None, 2])), sort_keys=True)
    split_text = {"role": "assistant", "content": " ".join(answer) + end, "reasoning_content": "hmm"}
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


@settings(max_examples=100, deadline=None)
@given(user=texts, answer=texts, arguments=args, which=st.integers(0, 2))
def test_whitespace_inside_a_message_and_images_are_content(user, answer, arguments, which):
    """Indentation is code; an image differs by its bytes (both change the digest)."""
    assume(which != 1 or len(user) > 1)
    original = conversation(user, answer, arguments)
    changed = conversation(user, answer, arguments)
    if which == 0:
        changed[1]["content"] = "\n".join("    " + word for word in user)  # indented
    elif which == 1:
        changed[1]["content"] = " ".join(user)  # the lines joined into one
    else:
        for messages, data in ((original, "iVBORw0KGgo"), (changed, "iVBORw0KGgA")):
            image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}}
            messages[1]["content"] = [{"type": "text", "text": messages[1]["content"]}, image]
    assert digest(changed) != digest(original)


def test_image_forms_by_content():
    url = "data:image/png;base64,AAAA"
    as_url = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    as_input = [{"role": "user", "content": [{"type": "input_image", "image_url": url}]}]
    other = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url + "BB"}}]}]
    none = [{"role": "user", "content": []}]
    assert digest(as_url) == digest(as_input)  # the same bytes, however the part names them
    assert len({digest(as_url), digest(other), digest(none)}) == 3


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
    assert [p.content for p in parts] == ["[Tool result #c1: get_weather({})]: sun"]
    with pytest.raises(BadRequest, match="no text"):
        render_turn(history, [{"role": "user", "content": ""}])


def _gemini_call(path: str) -> dict:
    """A call as LiteLLM's generateContent adapter hands it on: named ``call_<name>``, whatever id it had."""
    arguments = json.dumps({"file_path": path})
    return {
        "id": "call_read_file",
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }


def _gemini_result(text: str) -> dict:
    return {"role": "tool", "tool_call_id": "call_read_file", "content": text}


GEMINI_LOOP = [
    {"role": "user", "content": "read a.py, then b.py and c.py"},
    {"role": "assistant", "tool_calls": [_gemini_call("a.py")]},
    _gemini_result("A"),
    {"role": "assistant", "tool_calls": [_gemini_call("b.py"), _gemini_call("c.py")]},
    _gemini_result("B"),
    _gemini_result("C"),
]


def test_results_sharing_an_id_answer_the_latest_calls_with_it_in_order():
    """Gemini CLI through LiteLLM: every read_file call is call_read_file; each result still names its
    own call (the whole transcript, and a follow-up's turn alike)."""
    texts = [part.content for part in render_messages(GEMINI_LOOP)]
    assert texts[2] == '[Tool result #call_read_file: read_file({"file_path": "a.py"})]: A'
    assert texts[4:] == [
        '[Tool result #call_read_file: read_file({"file_path": "b.py"})]: B',
        '[Tool result #call_read_file: read_file({"file_path": "c.py"})]: C',
    ]
    turn = render_turn(GEMINI_LOOP[:4], GEMINI_LOOP[4:])
    assert [part.content for part in turn] == texts[4:]


def test_the_fingerprint_follows_results_not_ids():
    """The ids we returned, renamed by the client (LiteLLM's generateContent adapter), leave the history
    as we bound it; results moved to other calls of one function make it another history."""
    calls = GEMINI_LOOP[3]["tool_calls"]
    answer = {"role": "assistant", "tool_calls": [{**call, "id": f"c{n}"} for n, call in enumerate(calls)]}
    bound = [*GEMINI_LOOP[:3], answer]
    assert history_digest("s", "t", bound) == history_digest("s", "t", GEMINI_LOOP[:4])
    swapped = [*GEMINI_LOOP[:4], _gemini_result("C"), _gemini_result("B")]
    assert history_digest("s", "t", swapped) != history_digest("s", "t", GEMINI_LOOP)


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


BINDING = Binding(
    "s1",
    "m",
    "low",
    SessionHistory((StageMark("a", 2, "d1", 0, "d1"),), frozenset({"c1"})),
    1,
    pinned=True,
    effective_model="m2",
)
ASK = Ask("m", "low", turn="t")


def test_decide():
    on = ReuseOptions()
    kw = {"options": on, "continuable": True, "upstream_refused": False, "pinning": False}
    assert plan_turn(BINDING, ASK, **kw) == Continue(BINDING, repin=False)
    assert plan_turn(None, ASK, **kw) == Fresh("no session holds this history")
    assert plan_turn(BINDING, ASK, **{**kw, "options": ReuseOptions(mode="off")}) == Fresh(
        "session_reuse is off"
    )
    assert plan_turn(BINDING, ASK, **{**kw, "continuable": False}) == Fresh("no earlier turn to continue")
    assert plan_turn(BINDING, ASK, **{**kw, "upstream_refused": True}) == Fresh(
        "this upstream does not take follow-ups"
    )
    assert plan_turn(BINDING, replace(ASK, model="other"), **kw) == Fresh("the model or effort changed")
    assert plan_turn(BINDING, replace(ASK, effort="high"), **{**kw, "pinning": True}) == Continue(
        BINDING, repin=True
    )


def test_decide_continues_only_what_the_session_waits_on():
    """conol's agent waits on exactly the calls it made."""
    kw = {"options": ReuseOptions(), "continuable": True, "upstream_refused": False, "pinning": False}
    waiting = replace(BINDING, pending_calls=("call_1", "call_2"))
    both = replace(ASK, answered=frozenset({"call_1", "call_2"}))
    assert plan_turn(waiting, both, **kw) == Continue(waiting, repin=False)
    missing = Fresh("the new turn does not answer the tool calls conol waits on")
    assert plan_turn(waiting, replace(ASK, answered=frozenset({"call_1"})), **kw) == missing
    assert plan_turn(waiting, ASK, **kw) == missing  # a user message instead of the results
    assert plan_turn(BINDING, both, **kw) == missing  # results for calls conol never made


def test_decide_after_a_post_of_unknown_fate():
    """After a post of unknown fate, only the retry of that very turn continues (reading it, not posting it)."""
    kw = {"options": ReuseOptions(), "continuable": True, "upstream_refused": False, "pinning": False}
    pending = replace(BINDING, pending_turn="t")
    assert plan_turn(pending, ASK, **kw) == Continue(pending, repin=False, reattach=True)
    assert plan_turn(pending, replace(ASK, turn="other"), **kw) == Fresh(
        "conol may hold another turn on that session (an earlier post timed out)"
    )


def test_bind_refusal():
    assert why_not_bound(runs=1, cut=False, structured=False, finished=True) is None
    assert why_not_bound(runs=2, cut=False, structured=False, finished=True) == "a repair turn ran"
    assert (
        why_not_bound(runs=1, cut=True, structured=False, finished=True)
        == "the answer was cut (stop / max_tokens)"
    )
    assert why_not_bound(runs=1, cut=False, structured=True, finished=True).startswith("structured output")
    assert why_not_bound(runs=1, cut=False, structured=False, finished=False) == "the turn did not finish"
    assert why_not_bound(runs=1, cut=False, structured=False, finished=True, withheld_calls=True) == (
        "conol made tool calls the client did not get (parallel_tool_calls / tool_choice)"
    )
    assert why_not_bound(runs=1, cut=False, structured=False, finished=True, unnamed_stages=True) == (
        "conol's stages carry no ids (no boundary for the next turn)"
    )


def test_binding_json_round_trip_and_garbage():
    assert Binding.from_json(BINDING.to_json()) == BINDING
    assert Binding.from_json(b"not json") is None
    assert Binding.from_json('{"model": "m"}') is None
    old_format = json.loads(BINDING.to_json()) | {"v": 1}
    assert Binding.from_json(json.dumps(old_format)) is None  # another format: no binding
    assert Binding.from_json(BINDING.to_json().replace('"d1"', "7")) is None
    assert Binding.from_json(BINDING.to_json().replace('"c1"', "7")) is None
    assert "token" not in BINDING.to_json()


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
