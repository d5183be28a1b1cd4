"""The binding key of a conversation kept as a hash state (``reuse/fingerprint.py``
``DigestOfHistory``) instead of a copy of the conversation: always the digest ``canonical_digest``
gives the whole canonical history, for any history and any answer after it."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litellm_conol.reuse.fingerprint import DigestOfHistory, canonical_digest, canonical_history

pytestmark = pytest.mark.timeout(60)
EXAMPLES = int(os.environ.get("CONOL_FUZZ_EXAMPLES", "150"))

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
item = st.tuples(
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.text(),
    st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8), json_value).map(list), max_size=2),
    st.text(max_size=8),
).map(list)


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(history=st.lists(item, max_size=6), more=st.lists(item, max_size=3), split=st.integers(0, 6))
def test_the_hash_state_gives_the_digest_of_the_whole_history(history, more, split):
    digest = DigestOfHistory("scope", "settings", history[:split])
    assert digest.followed_by([]) == canonical_digest("scope", "settings", history[:split])
    digest.feed(history[split:])
    assert digest.followed_by(more) == canonical_digest("scope", "settings", history + more)
    assert digest.followed_by([]) == canonical_digest("scope", "settings", history)  # unchanged by the above


def test_a_recorded_shape_keys_alike():
    messages = [
        {"role": "system", "content": "You are terse.\r\n"},
        {"role": "user", "content": [{"type": "text", "text": "Hi  "}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    canonical = canonical_history(messages)
    answer = canonical_history([{"role": "assistant", "content": "Done."}])
    assert DigestOfHistory("s", "t", canonical).followed_by(answer) == canonical_digest(
        "s", "t", canonical + answer
    )
