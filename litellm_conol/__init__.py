"""conol.ai as a first-class LiteLLM provider: ``conol/<model>``.

In code::

    import litellm, litellm_conol
    litellm_conol.register()
    litellm.completion(model="conol/claude-haiku-4-5", messages=[...])

In a proxy config::

    litellm_settings:
      custom_provider_map:
        - {provider: conol, custom_handler: litellm_conol.conol_llm}
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._assembler import Assembler, BuiltinToolUse, ClientToolCall, ReasoningDelta, TextDelta
    from ._catalog import Catalog, CatalogModel, default_catalog, load_catalog
    from ._end_policy import Timing
    from ._errors import (
        AgentFailed,
        AuthenticationFailed,
        BadRequest,
        ConolError,
        MissingCredential,
        ModelDowngraded,
        ModelNotFound,
        PermissionDenied,
        RateLimited,
        RequestTimeout,
        UpstreamError,
        UpstreamUnavailable,
    )
    from ._handler import ConolLLM, conol_llm
    from ._registration import PROVIDER, register

__all__ = [
    "PROVIDER",
    "AgentFailed",
    "Assembler",
    "AuthenticationFailed",
    "BadRequest",
    "BuiltinToolUse",
    "Catalog",
    "CatalogModel",
    "ClientToolCall",
    "ConolError",
    "ConolLLM",
    "MissingCredential",
    "ModelDowngraded",
    "ModelNotFound",
    "PermissionDenied",
    "RateLimited",
    "ReasoningDelta",
    "RequestTimeout",
    "TextDelta",
    "Timing",
    "UpstreamError",
    "UpstreamUnavailable",
    "conol_llm",
    "default_catalog",
    "load_catalog",
    "register",
]

# Names resolve on first use, so importing a submodule (the pytest plugin, the fake server, the CLI)
# does not import litellm: tests and the CLI set LiteLLM's environment before it loads.
_LAZY = {
    "AgentFailed": "._errors",
    "Assembler": "._assembler",
    "AuthenticationFailed": "._errors",
    "BadRequest": "._errors",
    "BuiltinToolUse": "._assembler",
    "Catalog": "._catalog",
    "CatalogModel": "._catalog",
    "ClientToolCall": "._assembler",
    "ConolError": "._errors",
    "ConolLLM": "._handler",
    "MissingCredential": "._errors",
    "ModelDowngraded": "._errors",
    "ModelNotFound": "._errors",
    "PROVIDER": "._registration",
    "PermissionDenied": "._errors",
    "RateLimited": "._errors",
    "ReasoningDelta": "._assembler",
    "RequestTimeout": "._errors",
    "TextDelta": "._assembler",
    "Timing": "._end_policy",
    "UpstreamError": "._errors",
    "UpstreamUnavailable": "._errors",
    "conol_llm": "._handler",
    "default_catalog": "._catalog",
    "load_catalog": "._catalog",
    "register": "._registration",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
