"""Work done once per distinct input (``litellm_conol.core.memo``): the digest of a plain JSON value
and the bounded memory by digest."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest

from litellm_conol.core.memo import DigestMemo, json_digest

pytestmark = pytest.mark.timeout(30)


def test_the_digest_is_the_value_not_its_key_order_or_its_copy():
    value = {"b": [1, {"x": "é"}], "a": None}
    assert json_digest(value) == json_digest({"a": None, "b": [1, {"x": "é"}]})
    assert json_digest(json.loads(json.dumps(value))) == json_digest(value)


@pytest.mark.parametrize(
    ("one", "other"),
    [({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1.0}), ({"a": "1"}, {"a": 1}), ({"a": [1]}, {"a": [[1]]})],
)
def test_values_json_tells_apart_have_other_digests(one, other):
    assert json_digest(one) != json_digest(other)


@pytest.mark.parametrize(
    "value",
    [
        {"required": ("a",)},  # JSON writes a tuple as the list's text
        OrderedDict(a=1),  # a subclass
        {1: "a"},  # JSON writes the key as "1"
        {"a": object()},
        {"a": b"bytes"},
    ],
    ids=["tuple", "subclass", "int-key", "object", "bytes"],
)
def test_what_is_not_plain_json_has_no_digest(value):
    assert json_digest(value) is None


def test_a_value_nested_deeper_than_python_recurses_has_no_digest():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert json_digest(deep) is None


def test_the_memory_keeps_the_most_recently_used():
    memo: DigestMemo[int] = DigestMemo(size=3)
    for n in range(3):
        memo.put(f"d{n}", n)
    assert memo.get("d0") == 0  # used: now the most recent
    memo.put("d3", 3)
    assert len(memo) == 3
    assert [memo.get(f"d{n}") for n in range(4)] == [0, None, 2, 3]
    memo.clear()
    assert len(memo) == 0
