"""Through the real proxy (the session ``proxy`` fixture, no database): the master key is required.

What LiteLLM 1.108.7 answers without a database (``DATABASE_URL`` unset), read in
``litellm/proxy/auth/user_api_key_auth.py``: any key other than the master key is taken for a virtual
key, which lives in the database, so a wrong key is refused with 400 ``no_db_connection`` rather than
401. Virtual keys (``/key/generate``) need the database. Whatever the refusal, nothing reaches conol.

The ``prisma`` Python package must be installed (our ``proxy`` extra has it): LiteLLM's error
handlers ``import prisma``, and without it a request with no key is a bare 500 instead of a 401.
"""

from __future__ import annotations

import httpx
import pytest
from support.faults import chat_body, creates
from support.proxyproc import MASTER_KEY

from litellm_conol.fake import BUILTINS, FakeConol

pytestmark = pytest.mark.timeout(60)

ANSWER = BUILTINS["done"].final_text
BODY = chat_body("conol/claude-haiku-4-5", "[[fake:done]]")


def chat(shipped_proxy, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{shipped_proxy.base_url}/v1/chat/completions", json=BODY, headers=headers, timeout=30)


@pytest.fixture
def fresh_proxy_fake(proxy_fake: FakeConol) -> FakeConol:
    proxy_fake.reset()
    return proxy_fake


def test_a_request_without_a_key_is_a_401(shipped_proxy, fresh_proxy_fake) -> None:
    response = chat(shipped_proxy, {})
    assert response.status_code == 401
    assert response.json()["error"] == {
        "message": "Authentication Error, No api key passed in.",
        "type": "auth_error",
        "param": "None",
        "code": "401",
    }
    assert creates(fresh_proxy_fake) == 0


def test_a_key_without_bearer_is_a_401(shipped_proxy, fresh_proxy_fake) -> None:
    response = chat(shipped_proxy, {"Authorization": MASTER_KEY})
    assert response.status_code == 401
    assert response.json()["error"]["message"] == (
        "Authentication Error, Malformed API Key passed in. Ensure Key has `Bearer ` prefix."
    )
    assert creates(fresh_proxy_fake) == 0


@pytest.mark.parametrize("key", ["sk-wrong", MASTER_KEY + "x", "not-even-sk"])
def test_a_wrong_key_is_refused_without_a_database(shipped_proxy, fresh_proxy_fake, key: str) -> None:
    response = chat(shipped_proxy, {"Authorization": f"Bearer {key}"})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "message": "No connected db.",
        "type": "no_db_connection",
        "param": None,
        "code": "400",
    }
    assert key not in response.text
    assert creates(fresh_proxy_fake) == 0


@pytest.mark.parametrize("header", ["Authorization", "x-litellm-api-key"])
def test_the_master_key_gets_the_exact_answer(shipped_proxy, fresh_proxy_fake, header: str) -> None:
    value = f"Bearer {MASTER_KEY}" if header == "Authorization" else MASTER_KEY
    response = chat(shipped_proxy, {header: value})
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == ANSWER
    assert creates(fresh_proxy_fake) == 1


def test_virtual_keys_need_the_database(shipped_proxy, fresh_proxy_fake) -> None:
    response = httpx.post(
        f"{shipped_proxy.base_url}/key/generate",
        json={"models": ["claude-haiku-4-5"], "max_budget": 1.0},
        headers={"Authorization": f"Bearer {MASTER_KEY}"},
        timeout=30,
    )
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "DB not connected. This endpoint needs a database; set DATABASE_URL" in message
    assert MASTER_KEY not in response.text
