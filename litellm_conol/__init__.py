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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and the API reference only: what ``_PUBLIC`` resolves at run time
    from .core.errors import AccountResting as AccountResting
    from .core.errors import AgentFailed as AgentFailed
    from .core.errors import AgentFailedPermanently as AgentFailedPermanently
    from .core.errors import AuthenticationFailed as AuthenticationFailed
    from .core.errors import BadRequest as BadRequest
    from .core.errors import ConolError as ConolError
    from .core.errors import ImageTooLarge as ImageTooLarge
    from .core.errors import ImageTypeUnsupported as ImageTypeUnsupported
    from .core.errors import InvalidStructuredOutput as InvalidStructuredOutput
    from .core.errors import MissingCredential as MissingCredential
    from .core.errors import ModelDowngraded as ModelDowngraded
    from .core.errors import ModelNotFound as ModelNotFound
    from .core.errors import OutOfCredits as OutOfCredits
    from .core.errors import PermissionDenied as PermissionDenied
    from .core.errors import RateLimited as RateLimited
    from .core.errors import RequestTimeout as RequestTimeout
    from .core.errors import UpstreamError as UpstreamError
    from .core.errors import UpstreamUnavailable as UpstreamUnavailable
    from .fake._records import FakeConfig as FakeConfig
    from .fake._replay import load_recording as load_recording
    from .fake._replay import replay_scenario as replay_scenario
    from .fake._runner import FakeConol as FakeConol
    from .fake._scenarios import Scenario as Scenario
    from .ops.record import record_session as record_session
    from .provider.handler import ConolLLM as ConolLLM
    from .provider.handler import conol_llm as conol_llm
    from .provider.params_patch import PROVIDER as PROVIDER
    from .provider.registration import register as register

# The public names and the module defining each: the one list (``__all__`` is its keys; the
# TYPE_CHECKING imports above mirror it, tests/unit/test_public_api.py keeps them equal). Names
# resolve on first use, so importing the package or a submodule (the pytest plugin, the fake server,
# the CLI) does not import litellm: tests and the CLI set LiteLLM's environment before it loads.
_PUBLIC: dict[str, str] = {
    # the provider
    "register": ".provider.registration",
    "conol_llm": ".provider.handler",
    "ConolLLM": ".provider.handler",
    "PROVIDER": ".provider.params_patch",
    # the errors (docs/errors-and-limits.md)
    "ConolError": ".core.errors",
    "BadRequest": ".core.errors",
    "ImageTooLarge": ".core.errors",
    "ImageTypeUnsupported": ".core.errors",
    "ModelDowngraded": ".core.errors",
    "MissingCredential": ".core.errors",
    "AuthenticationFailed": ".core.errors",
    "PermissionDenied": ".core.errors",
    "ModelNotFound": ".core.errors",
    "RequestTimeout": ".core.errors",
    "RateLimited": ".core.errors",
    "AgentFailed": ".core.errors",
    "AgentFailedPermanently": ".core.errors",
    "OutOfCredits": ".core.errors",
    "AccountResting": ".core.errors",
    "UpstreamError": ".core.errors",
    "UpstreamUnavailable": ".core.errors",
    "InvalidStructuredOutput": ".core.errors",
    # the fake conol (docs/testing-with-the-fake.md)
    "FakeConol": ".fake._runner",
    "FakeConfig": ".fake._records",
    "Scenario": ".fake._scenarios",
    # record and replay (docs/when-conol-changes.md)
    "record_session": ".ops.record",
    "load_recording": ".fake._replay",
    "replay_scenario": ".fake._replay",
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
