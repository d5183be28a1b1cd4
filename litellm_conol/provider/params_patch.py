"""The LiteLLM params patch: let the OpenAI params we handle reach the ``conol`` handler.

LiteLLM checks a custom provider's OpenAI params against a generic list without
``reasoning_effort``: it raises UnsupportedParamsError unless the call names the param in
``allowed_openai_params``. We handle ``reasoning_effort`` and Anthropic's ``thinking`` (both →
``agentEffort``; the proxy's ``/v1/messages`` passes ``thinking`` on for ``conol/claude-…``), so for
the ``conol`` provider only we add them to ``allowed_openai_params`` — exactly what a user would
pass by hand. LiteLLM looks ``get_optional_params`` up on ``litellm.main`` at call time, so
wrapping it there (and on its public names, for direct callers) covers the SDK and the proxy
(which imports ``litellm_conol.conol_llm``, and so this module). Every other provider's call
passes through untouched (tests/unit/test_params_patch.py proves identical results and errors
with and without the wrap).

LiteLLM also folds ``max_completion_tokens`` into ``max_tokens`` (the latter is lost when both are
given); the wrapper hands both to the handler as the caller sent them, which enforces the smaller.

``get_supported_openai_params`` for ``conol`` also lists them, so LiteLLM's public
``get_optional_params`` (which checks against that list) accepts ``reasoning_effort`` too, and
clients that ask LiteLLM what a conol model takes are told. Where LiteLLM keeps those functions is
``provider.litellm_compat``'s business.
"""

from __future__ import annotations

import functools
from typing import Any

from .litellm_compat import extend_supported_params, is_wrapped, mark_wrapped, optional_params_modules

PROVIDER = "conol"
"""The LiteLLM provider name: models are addressed as ``conol/<model>``."""
ALLOWED_EXTRA_PARAMS = ("reasoning_effort", "thinking")
TOKEN_LIMIT_PARAMS = ("max_tokens", "max_completion_tokens")


def allow_extra_params() -> None:
    """Let ``reasoning_effort`` reach the ``conol`` handler instead of being refused. Idempotent."""
    extend_supported_params(PROVIDER, ALLOWED_EXTRA_PARAMS)
    modules = optional_params_modules()
    original = modules[0].get_optional_params
    if is_wrapped(original):
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

    mark_wrapped(get_optional_params)
    for module in modules:
        setattr(module, "get_optional_params", get_optional_params)  # noqa: B010  (litellm: no stubs)
