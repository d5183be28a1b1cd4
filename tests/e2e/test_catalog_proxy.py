"""A deployment's agent_model makes a model the catalog does not know usable through the real proxy."""

from __future__ import annotations

import pytest

import litellm_conol
from litellm_conol.fake import DOWNGRADE_MODEL

pytestmark = pytest.mark.timeout(60)


litellm_conol.register()


def test_a_deployment_agent_model_through_the_real_proxy(proxy_fake_and_client):
    fake, client = proxy_fake_and_client
    response = client.chat.completions.create(
        model="private-model", messages=[{"role": "user", "content": "[[fake:echo]] private"}]
    )
    assert response.choices[0].message.content == "[[fake:echo]] private"
    assert fake.last_session.model == "vendor/private-1"
    fields = response.choices[0].message.model_extra["provider_specific_fields"]
    # the fake does not know vendor/private-1 either: conol's downgrade shows, as for any model
    assert fields["model_downgraded"] is True and fields["effective_model"] == DOWNGRADE_MODEL
