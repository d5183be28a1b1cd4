"""LiteLLM's generateContent entry points (``litellm.google_genai``: what the proxy's Gemini routes call)
on ``conol/…`` models, in process against the fake: they answer through LiteLLM's generateContent →
completion adapter with the shim of ``provider/litellm_compat.py``, and fail as the proxy's 500 did
without it, on each LiteLLM line that needs it (docs/litellm-versions.md#the-generatecontent-shim)."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest
from litellm.google_genai import agenerate_content, agenerate_content_stream
from litellm.google_genai.main import GenerateContentHelper

import litellm_conol
from litellm_conol.fake import BUILTINS
from litellm_conol.provider import litellm_compat as compat

litellm_conol.register()

pytestmark = pytest.mark.timeout(60)

MODEL = "conol/claude-haiku-4-5"
HELLO = BUILTINS["hello"]
CONTENTS = [{"role": "user", "parts": [{"text": "Hi"}]}]


@pytest.fixture
def kw(conol_fake) -> dict[str, Any]:
    return {"api_base": conol_fake.base_url, "api_key": conol_fake.token}


async def test_generate_content_answers_through_litellms_adapter(kw):
    response = await agenerate_content(model=MODEL, contents=CONTENTS, **kw)
    assert response["candidates"][0]["content"] == {"parts": [{"text": HELLO.final_text}], "role": "model"}


async def test_generate_content_stream_answers_through_litellms_adapter(kw):
    stream = await agenerate_content_stream(model=MODEL, contents=CONTENTS, **kw)
    events = [json.loads(chunk.decode().removeprefix("data: ")) async for chunk in stream]
    texts = [part.get("text", "") for e in events for part in e["candidates"][0]["content"]["parts"]]
    assert "".join(texts) == HELLO.final_text
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"


async def test_without_the_shim_litellm_refuses_a_custom_provider(kw, conol_fake, monkeypatch):
    """Where the shim is needed: LiteLLM's own generateContent set-up, unshimmed, raises before any
    request (the proxy answers it with a 500), and no conol session is spent."""
    assert compat.generate_content_refuses_custom_providers()
    bare = GenerateContentHelper.setup_generate_content_call.__wrapped__
    monkeypatch.setattr(GenerateContentHelper, "setup_generate_content_call", staticmethod(bare))
    with pytest.raises(litellm.APIConnectionError, match="'conol' is not a valid LlmProviders"):
        await agenerate_content(model=MODEL, contents=CONTENTS, **kw)
    assert conol_fake.sessions == {}
