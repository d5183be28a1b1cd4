"""The prompt's usage estimate (``provider/prompt_tokens.py``): LiteLLM's count of the conversation,
each message counted once as the conversation grows, and attachments never fetched nor decoded.

On vs off: the estimate is compared with ``litellm.token_counter(messages=…)`` on every request the
recorded clients sent (Claude Code, Codex, the openai and anthropic SDKs: text, thinking, tool calls
and results, a data: URL image at detail auto), cold and with every message already remembered.
Where the counter would fetch, decode or raise (an image at detail high, a part it does not know)
the estimate is the text's count plus a fixed size per attachment, and says how many.
"""

from __future__ import annotations

import json
from typing import Any

import litellm
import litellm.litellm_core_utils.token_counter as litellm_counter
import pytest
from support.recorded_pairs import handler_messages

from litellm_conol.provider import prompt_tokens
from litellm_conol.provider.prompt_tokens import (
    GLANCED_IMAGE,
    PromptEstimate,
    estimate_prompt,
)

pytestmark = pytest.mark.timeout(60)

DEFAULT_IMAGE = 250  # LiteLLM's DEFAULT_IMAGE_TOKEN_COUNT


RECORDED = handler_messages()


@pytest.fixture(autouse=True)
def forgotten():
    prompt_tokens.MESSAGE_TOKENS.clear()
    yield
    prompt_tokens.MESSAGE_TOKENS.clear()


@pytest.fixture
def counter_calls(monkeypatch):
    """The messages LiteLLM's counter is asked to count, one list per call."""
    calls: list[list[Any]] = []
    real = litellm.token_counter

    def counting(*args, **kwargs):
        calls.append(kwargs.get("messages"))
        return real(*args, **kwargs)

    monkeypatch.setattr(litellm, "token_counter", counting)
    return calls


@pytest.fixture
def never_looked_at(monkeypatch):
    """LiteLLM's only way to an image's size (a GET of the URL, or decoding the data) fails the test."""

    def looked(data: str) -> tuple[int, int]:
        raise AssertionError(f"the image was fetched or decoded: {data[:40]}")

    monkeypatch.setattr(litellm_counter, "get_image_dimensions", looked)


def _without_images(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The messages without their image parts (the recordings have them at detail auto), and how many."""
    out, images = [], 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            kept = [part for part in content if part.get("type") not in ("image_url", "image")]
            images += len(content) - len(kept)
            message = {**message, "content": kept}
        out.append(message)
    return out, images


@pytest.mark.parametrize(("name", "messages"), RECORDED, ids=[name for name, _ in RECORDED])
def test_the_estimate_is_litellms_count_of_the_recorded_conversations(name, messages):
    """LiteLLM's count of the text, and 85 tokens per image at detail auto (LiteLLM 1.108's own
    count of it; 1.110's counter reads an inline image's size, which the estimate never does)."""
    text_only, images = _without_images(messages)
    expected = litellm.token_counter(messages=text_only) + images * GLANCED_IMAGE
    if images == 0:
        assert litellm.token_counter(messages=messages) == expected
    assert estimate_prompt(messages) == PromptEstimate(expected, images)  # every message counted
    assert estimate_prompt(messages) == PromptEstimate(expected, images)  # every message remembered


def test_each_message_is_counted_once_as_the_conversation_grows(counter_calls):
    longest = max((m for name, m in RECORDED if name.startswith("claude-code")), key=len)
    assert len(longest) >= 9
    first, grown = longest[:-2], longest
    estimate_prompt(first)
    assert len(counter_calls) == len(first)
    counter_calls.clear()
    again = json.loads(json.dumps(grown))  # the next request: equal messages, new objects
    text_only, images = _without_images(grown)
    assert estimate_prompt(again).tokens == litellm.token_counter(messages=text_only) + images * GLANCED_IMAGE
    assert counter_calls[:2] == [[grown[-2]], [grown[-1]]]  # only the two new messages
    assert len(counter_calls) == 3  # and the reference count above


HIGH_URL = {"type": "image_url", "image_url": {"url": "http://127.0.0.1:9/a.png", "detail": "high"}}
HIGH_PERCENT = {  # percent-encoded data: LiteLLM's base64 decode raises "Incorrect padding"
    "type": "image_url",
    "image_url": {"url": "data:image/png,%89PNG%0D%0A%1A%0A", "detail": "high"},
}
AUTO = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
ODD_DETAIL = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "x"}}
AUDIO = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
TEXT = {"type": "text", "text": "What are these?"}


@pytest.mark.parametrize(
    ("parts", "glanced", "other"),
    [
        ([TEXT, HIGH_URL], 0, 1),
        ([TEXT, HIGH_PERCENT], 0, 1),
        ([TEXT, AUTO, HIGH_URL, ODD_DETAIL, AUDIO], 1, 3),
    ],
    ids=["high-url", "high-percent-encoded", "mixed"],
)
def test_attachments_are_counted_at_a_fixed_size_never_looked_at(never_looked_at, parts, glanced, other):
    messages = [{"role": "user", "content": parts}]
    text_only = litellm.token_counter(messages=[{"role": "user", "content": [TEXT]}])
    assert estimate_prompt(messages) == PromptEstimate(
        text_only + glanced * GLANCED_IMAGE + other * DEFAULT_IMAGE, glanced + other
    )
    with pytest.raises((AssertionError, ValueError)):
        litellm.token_counter(messages=messages)  # what it did before: fetch, decode or raise


def test_an_image_in_a_tool_result_is_counted_without_its_text_lost(never_looked_at):
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [TEXT, HIGH_URL]}
    messages = [{"role": "user", "content": [result]}]
    text_only = [{"role": "user", "content": [{**result, "content": [TEXT]}]}]
    expected = litellm.token_counter(messages=text_only) + DEFAULT_IMAGE
    assert estimate_prompt(messages) == PromptEstimate(expected, 1)


def test_a_message_the_counter_cannot_read_is_estimated_not_failed():
    broken = {"role": "assistant", "content": "ok", "tool_calls": [{"id": "c1", "type": "function"}]}
    with pytest.raises(ValueError, match="must contain a function key"):
        litellm.token_counter(messages=[broken])
    text = json.dumps(broken, ensure_ascii=False)
    assert estimate_prompt([broken]) == PromptEstimate(3 + len(text) // 4, 0)


def test_the_counter_switched_off_counts_nothing(monkeypatch):
    monkeypatch.setattr(litellm, "disable_token_counter", True)
    assert estimate_prompt([{"role": "user", "content": "Hi"}]) == PromptEstimate(0, 0)
