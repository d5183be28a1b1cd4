"""The catalog's model metadata and prices, told to LiteLLM's model map under ``conol/<id>``.

Then ``completion_cost``, ``litellm.supports_function_calling`` and friends, routers and the
proxy's ``/model/info`` know what a conol model can do and what it costs (an estimate: see
``price_source`` in ``core/models/models.json``). A deployment's ``model_info`` still overrides (the proxy
registers it under the deployment's id, which LiteLLM's cost lookup reads first).
"""

from __future__ import annotations

from typing import Any

from ..core.config.options import configured_catalog
from ..core.models.catalog import Catalog
from .litellm_compat import list_wildcard_models, register_models
from .params_patch import PROVIDER

# What conol cannot take, said explicitly: otherwise LiteLLM fills in a same-named model of another
# provider's flags (``claude-haiku-4-5`` would claim PDF input and prompt caching).
NOT_SUPPORTED = (
    "supports_pdf_input",
    "supports_audio_input",
    "supports_audio_output",
    "supports_video_input",
    "supports_prompt_caching",
    "supports_web_search",
    "supports_url_context",
    "supports_computer_use",
    "supports_assistant_prefill",  # a trailing assistant message is not continued (mid-stream fallback)
    "supports_tool_search",
)
FIXED_FIELDS: dict[str, Any] = {
    "litellm_provider": PROVIDER,
    "mode": "chat",
    "supports_system_messages": True,
    # conol bills no cached input: say so, rather than let LiteLLM warn on every registration
    "cache_creation_input_token_cost": 0.0,
    "cache_read_input_token_cost": 0.0,
}


def model_map_entries(catalog: Catalog) -> dict[str, dict[str, Any]]:
    """``conol/<id>`` → its model-map fields, for every catalog model that carries metadata."""
    entries: dict[str, dict[str, Any]] = {}
    for model in catalog.models:
        info = model.model_info()
        if not info:
            continue  # a CONOL_MODELS_EXTRA entry with no metadata: LiteLLM's defaults apply
        entry = dict.fromkeys(NOT_SUPPORTED, False) | FIXED_FIELDS | info
        if "max_output_tokens" in info:
            entry["max_tokens"] = info["max_output_tokens"]  # LiteLLM's older name for the same
        entries[f"{PROVIDER}/{model.id}"] = entry
    return entries


def register_model_map() -> None:
    """Register the configured catalog's models with LiteLLM (only keys it does not have). Idempotent."""
    register_models(model_map_entries(configured_catalog()))
    list_wildcard_models(PROVIDER, _model_names)


def _model_names() -> list[str]:
    return [f"{PROVIDER}/{model.id}" for model in configured_catalog().models]
