"""LiteLLM's model map is one dict for the whole process, and a ``litellm.Router`` writes each
deployment's ``model_info`` into it, under the deployment's model name too: a Router built from the
team config gives ``conol/deepseek-v4-pro`` its 32,000 output tokens for every later test in the
worker. :func:`model_map_kept` puts the map back."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager

import litellm
import litellm.utils


@contextmanager
def model_map_kept() -> Iterator[None]:
    """LiteLLM's model map as it was before the block, and its lookups forgotten (they are cached)."""
    saved = copy.deepcopy(litellm.model_cost)
    try:
        yield
    finally:
        litellm.model_cost.clear()
        litellm.model_cost.update(saved)
        # LiteLLM's own invalidation (1.108 to 1.110): its case-insensitive index and cached lookups
        litellm.utils._invalidate_model_cost_lowercase_map()
