"""Making LiteLLM route ``conol/…`` to our handler (SDK use; the proxy reads ``custom_provider_map``
from its config and imports ``litellm_conol.conol_llm``)."""

from __future__ import annotations

import litellm
import litellm.utils

from .handler import conol_llm
from .model_map import register_model_map
from .params_patch import PROVIDER, allow_extra_params
from .pre_call import install_pre_call_guard


def register() -> None:
    """Register the ``conol`` provider for SDK use, and the catalog's models (metadata, estimated
    prices) in LiteLLM's model map; inside a LiteLLM proxy, its pre-call hook too. Idempotent."""
    entries = [e for e in litellm.custom_provider_map if e.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*entries, {"provider": PROVIDER, "custom_handler": conol_llm}]
    litellm.utils.custom_llm_setup()
    allow_extra_params()
    register_model_map()
    install_pre_call_guard()
