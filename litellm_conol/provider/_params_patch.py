"""The one LiteLLM patch: let the OpenAI params we handle reach the ``conol`` handler.

LiteLLM checks a custom provider's OpenAI params against a generic list without
``reasoning_effort``: it raises UnsupportedParamsError unless the call names the param in
``allowed_openai_params``. We handle ``reasoning_effort`` and Anthropic's ``thinking`` (both →
``agentEffort``; the proxy's ``/v1/messages`` passes ``thinking`` on for ``conol/claude-…``), so for
the ``conol`` provider only we add them to ``allowed_openai_params`` — exactly what a user would
pass by hand. LiteLLM looks ``get_optional_params`` up on ``litellm.main`` at call time, so
wrapping it there covers the SDK and the proxy (which imports ``litellm_conol.conol_llm``, and so
this module). Every other provider's call passes through untouched (tests/unit/test_params_patch.py
proves identical results and errors with and without the wrap).

LiteLLM also folds ``max_completion_tokens`` into ``max_tokens`` (the latter is lost when both are
given); the wrapper hands both to the handler as the caller sent them, which enforces the smaller.
"""

from __future__ import annotations

import functools
from typing import Any

import litellm.main

PROVIDER = "conol"
ALLOWED_EXTRA_PARAMS = ("reasoning_effort", "thinking")
TOKEN_LIMIT_PARAMS = ("max_tokens", "max_completion_tokens")
_WRAPPED = "_litellm_conol_wrapped"


def allow_extra_params() -> None:
    """Let ``reasoning_effort`` reach the ``conol`` handler instead of being refused. Idempotent."""
    original = litellm.main.get_optional_params
    if getattr(original, _WRAPPED, False):
        return

    @functools.wraps(original)
    def get_optional_params(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("custom_llm_provider") != PROVIDER:
            return original(*args, **kwargs)
        allowed = list(kwargs.get("allowed_openai_params") or [])
        kwargs["allowed_openai_params"] = allowed + [p for p in ALLOWED_EXTRA_PARAMS if p not in allowed]
        optional_params = original(*args, **kwargs)
        if isinstance(optional_params, dict):
            for name in TOKEN_LIMIT_PARAMS:
                optional_params.pop(name, None)
                if kwargs.get(name) is not None:
                    optional_params[name] = kwargs[name]
        return optional_params

    setattr(get_optional_params, _WRAPPED, True)
    litellm.main.get_optional_params = get_optional_params
