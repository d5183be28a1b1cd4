"""``litellm.Router`` in code, sync, non-streamed and streamed, against the fake (the async Router:
test_router.py; clients through the real proxy: tests/e2e/test_clients.py)."""

from __future__ import annotations

import litellm
import pytest
from support.chat import MODEL, user

import litellm_conol
from litellm_conol.fake import BUILTINS

litellm_conol.register()


pytestmark = pytest.mark.timeout(120)


DONE = BUILTINS["done"]


# --- litellm.Router in code, sync (the async Router is in test_router.py) ------------------------


def test_router_in_code_sync_non_streamed_and_streamed(conol_fake):
    router = litellm.Router(
        model_list=[
            {
                "model_name": "conol-haiku",
                "litellm_params": {
                    "model": MODEL,
                    "api_base": conol_fake.base_url,
                    "api_key": conol_fake.token,
                },
            }
        ]
    )
    response = router.completion(model="conol-haiku", messages=user("[[fake:done]]"))
    assert response.choices[0].message.content == DONE.final_text
    chunks = list(router.completion(model="conol-haiku", messages=user("[[fake:done]]"), stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == DONE.final_text
    assert len({c.id for c in chunks}) == 1
    assert conol_fake.last_session.model == "claude-haiku-4-5"
