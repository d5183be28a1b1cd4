"""The fake's ``stop``/``max_tokens`` scenarios say what they send (the SDK and proxy tests rely on it)."""

from __future__ import annotations

import litellm
import pytest
from support.limits import longest_prefix_within

import litellm_conol
from litellm_conol.fake import BUILTINS, long_text
from litellm_conol.fake._library import STOP_SEQUENCE, STOP_SPLIT_ANSWER

litellm.suppress_debug_info = True


litellm_conol.register()


pytestmark = pytest.mark.timeout(60)


LIMIT = 60


def test_the_scenarios_say_what_they_send():
    assert BUILTINS["stop_split"].final_text.startswith(STOP_SPLIT_ANSWER + STOP_SEQUENCE)
    assert BUILTINS["long_writer"].final_text == long_text(20000)
    assert litellm.token_counter(model="claude-haiku-4-5", text=longest_prefix_within(LIMIT)) == LIMIT
