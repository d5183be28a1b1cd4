"""Bad requests are refused through the SDK with a clear 400/404 before any session is created
(the same cases through the proxy: tests/e2e/test_bad_input_proxy.py)."""

from __future__ import annotations

import litellm
import pytest
from support.bad_input import CASES, HI
from support.chat import MODEL

import litellm_conol

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


IDS = [case[0] for case in CASES]


EXCEPTIONS = {400: litellm.BadRequestError, 404: litellm.NotFoundError}


def request_fields(fields: dict) -> dict:
    return {"model": MODEL, "messages": HI, **fields}


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("name, fields, status, mentions", CASES, ids=IDS)
async def test_sdk_refuses_before_any_session(conol_fake, name, fields, status, mentions, stream):
    with pytest.raises(EXCEPTIONS[status]) as info:
        response = await litellm.acompletion(
            **request_fields(fields), stream=stream, api_base=conol_fake.base_url, api_key=conol_fake.token
        )
        if stream:
            async for _ in response:
                pass
    assert info.value.status_code == status
    assert mentions in str(info.value)
    assert conol_fake.requests == [], "conol was called for a request that should have been refused"
