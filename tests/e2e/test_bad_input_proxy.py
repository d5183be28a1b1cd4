"""Bad requests are refused through the real proxy (shared proxy of ``e2e/conftest.py``, shipped
config) with a clear 400/404 before any session is created (SDK: integration/test_bad_input_sdk.py)."""

from __future__ import annotations

import httpx
import litellm
import pytest
from support.bad_input import CASES, HI
from support.chat import MODEL
from support.proxyproc import MASTER_KEY

import litellm_conol

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


IDS = [case[0] for case in CASES]


# Shapes LiteLLM's own message validation trips over before any provider sees the request: the
# SDK raises LiteLLM's APIConnectionError (its AttributeError/TypeError wrapped, not a 400), the
# proxy answers 400 (its request-format check caught it) or 500 (it did not). A LiteLLM limitation
# a provider cannot fix; but never a session.
LITELLM_FIRST = [
    ("message not an object", {"messages": ["Hi"]}, 400),
    ("content a number", {"messages": [{"role": "user", "content": 42}]}, 500),
]


def request_fields(fields: dict) -> dict:
    return {"model": MODEL, "messages": HI, **fields}


@pytest.mark.parametrize("name, fields, status, mentions", CASES, ids=IDS)
def test_proxy_refuses_before_any_session(
    proxy_fake_and_client, shipped_proxy, name, fields, status, mentions
):
    fake, _ = proxy_fake_and_client  # the shared proxy's fake conol, reset for this test
    response = httpx.post(
        f"{shipped_proxy.base_url}/v1/chat/completions",
        json=request_fields(fields),
        headers={"Authorization": f"Bearer {MASTER_KEY}"},
        timeout=60,
    )
    assert response.status_code == status, response.text[:500]
    assert mentions in response.json()["error"]["message"]
    assert not [r for r in fake.requests if r.method == "POST"], "a session was created"


@pytest.mark.parametrize("name, fields, status", LITELLM_FIRST, ids=[case[0] for case in LITELLM_FIRST])
async def test_shapes_litellm_refuses_first_never_create_a_session(
    conol_fake, proxy_fake_and_client, shipped_proxy, name, fields, status
):
    with pytest.raises(litellm.APIConnectionError):
        await litellm.acompletion(
            **request_fields(fields), api_base=conol_fake.base_url, api_key=conol_fake.token
        )
    assert conol_fake.requests == []
    response = httpx.post(
        f"{shipped_proxy.base_url}/v1/chat/completions",
        json=request_fields(fields),
        # LiteLLM's 500 for these would be retried with backoff: once is enough to see it
        headers={"Authorization": f"Bearer {MASTER_KEY}", "x-litellm-num-retries": "0"},
        timeout=60,
    )
    assert response.status_code in (400, 500), response.text[:500]
    assert response.status_code == status, response.text[:500]
    assert not [r for r in proxy_fake_and_client[0].requests if r.method == "POST"]
