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

if TYPE_CHECKING:  # for type checkers only: the names below, resolved as the runtime does
    from .provider import *  # noqa: F403

# The public names and where each lives: the one list (``__all__`` is its keys). Names resolve on
# first use, so importing a submodule (the pytest plugin, the fake server, the CLI) does not import
# litellm: tests and the CLI set LiteLLM's environment before it loads.
_PUBLIC: dict[str, str] = {
    "AgentFailed": ".core.errors",
    "AgentFailedPermanently": ".core.errors",
    "Assembler": ".core.answer.assembler",
    "AuthenticationFailed": ".core.errors",
    "BadRequest": ".core.errors",
    "BuiltinToolUse": ".core.answer.assembler",
    "Catalog": ".core.models.catalog",
    "CatalogModel": ".core.models.catalog",
    "ClientToolCall": ".core.answer.assembler",
    "ConolError": ".core.errors",
    "ConolLLM": ".provider",
    "ImageTooLarge": ".core.errors",
    "ImageTypeUnsupported": ".core.errors",
    "InvalidStructuredOutput": ".core.errors",
    "MissingCredential": ".core.errors",
    "ModelDowngraded": ".core.errors",
    "ModelNotFound": ".core.errors",
    "OutOfCredits": ".core.errors",
    "PROVIDER": ".provider",
    "PermissionDenied": ".core.errors",
    "RateLimited": ".core.errors",
    "ReasoningDelta": ".core.answer.assembler",
    "RequestTimeout": ".core.errors",
    "TextDelta": ".core.answer.assembler",
    "Timing": ".core.protocol.end_policy",
    "UpstreamError": ".core.errors",
    "UpstreamUnavailable": ".core.errors",
    "conol_llm": ".provider",
    "default_catalog": ".core.models.catalog",
    "load_catalog": ".core.models.catalog",
    "register": ".provider",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
