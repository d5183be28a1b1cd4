"""The bound on status polls in flight comes from the environment and is checked."""

from __future__ import annotations

import re

import pytest

from litellm_conol import BadRequest
from litellm_conol.core.config.options import build_request
from litellm_conol.core.config.settings_table import DEFAULT_MAX_CONCURRENT_POLLS

pytestmark = pytest.mark.timeout(30)


# --- status polls in flight -------------------------------------------------------------------------


def test_max_concurrent_polls_comes_from_the_environment_and_is_checked(monkeypatch):
    def limit() -> int:
        return build_request(
            model="claude-haiku-4-5",
            messages=[{"role": "user", "content": "Hi"}],
            api_key="t",
            api_base="http://127.0.0.1:1",
            optional_params={},
            timeout=None,
        ).max_concurrent_polls

    assert limit() == DEFAULT_MAX_CONCURRENT_POLLS == 16
    monkeypatch.setenv("CONOL_MAX_CONCURRENT_POLLS", "3")
    assert limit() == 3
    for bad in ("0", "-2", "many", "1.5"):
        monkeypatch.setenv("CONOL_MAX_CONCURRENT_POLLS", bad)
        with pytest.raises(BadRequest, match=f"CONOL_MAX_CONCURRENT_POLLS .* got '{re.escape(bad)}'"):
            limit()
