"""A stream holds no copy of the conversation once its answer has begun (``provider/transcript.py``):
the create body's rendered transcript is let go, in the request and in the run, while the session
was created with all of it. Before the answer, a retry with a new full session still has it (a
refused follow-up: ``tests/integration/test_reuse_sdk.py``, the reuse differential test)."""

from __future__ import annotations

import litellm
import pytest

import litellm_conol
from litellm_conol.fake import FakeConol
from litellm_conol.provider import exchange as exchange_module
from litellm_conol.reuse.store import clear_stores

litellm.suppress_debug_info = True
litellm_conol.register()

MODEL = "conol/claude-haiku-4-5"
pytestmark = pytest.mark.timeout(60)
EARLIER = [("user", "a" * 2000), ("assistant", "b" * 2000), ("user", "c" * 2000), ("assistant", "d" * 2000)]


@pytest.fixture
def conol():
    clear_stores()
    with FakeConol() as fake:
        yield fake
    clear_stores()


@pytest.fixture
def exchanges(monkeypatch):
    """Every Exchange made meanwhile."""
    made: list[exchange_module.Exchange] = []
    real = exchange_module.Exchange.__post_init__

    def noting(self: exchange_module.Exchange) -> None:
        real(self)
        made.append(self)

    monkeypatch.setattr(exchange_module.Exchange, "__post_init__", noting)
    return made


async def test_the_rendered_conversation_is_let_go_once_the_answer_begins(conol, exchanges):
    messages = [{"role": role, "content": text} for role, text in EARLIER]
    messages.append({"role": "user", "content": "[[fake:echo]] and now?"})
    stream = await litellm.acompletion(
        model=MODEL, messages=messages, stream=True, api_base=conol.base_url, api_key=conol.token
    )
    held, text = [], []  # at each piece of text: (parts the request holds, parts the run holds)
    async for chunk in stream:
        content = chunk.choices[0].delta.content if chunk.choices else None
        if content:
            (exchange,) = exchanges
            held.append((len(exchange.request.body.messages), len(exchange.last.body.messages)))
        text.append(content or "")
    assert "".join(text) == "[[fake:echo]] and now?"
    # let go right after the first text went out (not on its way): from the second piece on
    assert len(held) >= 2 and held[1:] == [(0, 0)] * (len(held) - 1)
    (create,) = [r.body for r in conol.requests if r.method == "POST" and r.path == "/api/sessions"]
    assert [part["content"] for part in create["messages"]] == [
        "a" * 2000,
        "[Assistant]\n" + "b" * 2000,
        "c" * 2000,
        "[Assistant]\n" + "d" * 2000,
        "[[fake:echo]] and now?",
    ]
