"""conol.ai as a first-class LiteLLM provider: ``conol/<model>``.

In code::

    import litellm, litellm_conol
    litellm_conol.register()
    litellm.completion(model="conol/claude-haiku-4-5", messages=[...])

In a proxy config::

    litellm_settings:
      custom_provider_map:
        - {provider: conol, custom_handler: litellm_conol.conol_llm}

The public API is ``__all__`` (docs/api.md renders it): the provider (``register``,
``conol_llm``, ``ConolLLM``, ``PROVIDER``), the errors a caller can catch (``ConolError`` and its
subclasses), the fake conol (``FakeConol``, ``FakeConfig``, ``Scenario``; the pytest fixtures
``conol_fake`` and ``conol_fake_session`` come with the ``litellm_conol.pytest_plugin`` plugin,
registered on install) and record/replay (``record_session``, ``load_recording``,
``replay_scenario``). Everything else is internal and may change in any release.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and the API reference only: what ``_PUBLIC`` resolves at run time
    from .core._errors import AgentFailed as AgentFailed
    from .core._errors import AgentFailedPermanently as AgentFailedPermanently
    from .core._errors import AuthenticationFailed as AuthenticationFailed
    from .core._errors import BadRequest as BadRequest
    from .core._errors import ConolError as ConolError
    from .core._errors import ImageTooLarge as ImageTooLarge
    from .core._errors import ImageTypeUnsupported as ImageTypeUnsupported
    from .core._errors import InvalidStructuredOutput as InvalidStructuredOutput
    from .core._errors import MissingCredential as MissingCredential
    from .core._errors import ModelDowngraded as ModelDowngraded
    from .core._errors import ModelNotFound as ModelNotFound
    from .core._errors import OutOfCredits as OutOfCredits
    from .core._errors import PermissionDenied as PermissionDenied
    from .core._errors import RateLimited as RateLimited
    from .core._errors import RequestTimeout as RequestTimeout
    from .core._errors import UpstreamError as UpstreamError
    from .core._errors import UpstreamUnavailable as UpstreamUnavailable
    from .fake._records import FakeConfig as FakeConfig
    from .fake._replay import load_recording as load_recording
    from .fake._replay import replay_scenario as replay_scenario
    from .fake._runner import FakeConol as FakeConol
    from .fake._scenarios import Scenario as Scenario
    from .ops._record import record_session as record_session
    from .provider._handler import ConolLLM as ConolLLM
    from .provider._handler import conol_llm as conol_llm
    from .provider._params_patch import PROVIDER as PROVIDER
    from .provider._registration import register as register

# The public names and the module defining each: the one list (``__all__`` is its keys; the
# TYPE_CHECKING imports above mirror it, tests/unit/test_public_api.py keeps them equal). Names
# resolve on first use, so importing the package or a submodule (the pytest plugin, the fake server,
# the CLI) does not import litellm: tests and the CLI set LiteLLM's environment before it loads.
_PUBLIC: dict[str, str] = {
    # the provider
    "register": ".provider._registration",
    "conol_llm": ".provider._handler",
    "ConolLLM": ".provider._handler",
    "PROVIDER": ".provider._params_patch",
    # the errors (docs/errors-and-limits.md)
    "ConolError": ".core._errors",
    "BadRequest": ".core._errors",
    "ImageTooLarge": ".core._errors",
    "ImageTypeUnsupported": ".core._errors",
    "ModelDowngraded": ".core._errors",
    "MissingCredential": ".core._errors",
    "AuthenticationFailed": ".core._errors",
    "PermissionDenied": ".core._errors",
    "ModelNotFound": ".core._errors",
    "RequestTimeout": ".core._errors",
    "RateLimited": ".core._errors",
    "AgentFailed": ".core._errors",
    "AgentFailedPermanently": ".core._errors",
    "OutOfCredits": ".core._errors",
    "UpstreamError": ".core._errors",
    "UpstreamUnavailable": ".core._errors",
    "InvalidStructuredOutput": ".core._errors",
    # the fake conol (docs/testing-with-the-fake.md)
    "FakeConol": ".fake._runner",
    "FakeConfig": ".fake._records",
    "Scenario": ".fake._scenarios",
    # record and replay (docs/when-conol-changes.md)
    "record_session": ".ops._record",
    "load_recording": ".fake._replay",
    "replay_scenario": ".fake._replay",
}

# Names that left the public API: they resolve for one more release, with a DeprecationWarning
# (CHANGELOG.md, "Deprecated"). Each maps to the module that defines it.
_DEPRECATED: dict[str, str] = {
    "Assembler": ".core._assembler",
    "BuiltinToolUse": ".core._assembler",
    "ClientToolCall": ".core._assembler",
    "ReasoningDelta": ".core._assembler",
    "TextDelta": ".core._assembler",
    "Timing": ".core._end_policy",
    "Catalog": ".core._catalog",
    "CatalogModel": ".core._catalog",
    "default_catalog": ".core._catalog",
    "load_catalog": ".core._catalog",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str) -> Any:
    leaving = _DEPRECATED.get(name)
    if leaving is not None:
        warnings.warn(
            f"litellm_conol.{name} is internal and leaves the public API in the next release; "
            f"import it from litellm_conol{leaving} if you must",
            DeprecationWarning,
            stacklevel=2,
        )
        # not cached in globals(): every access warns
        return getattr(importlib.import_module(leaving, __name__), name)
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
