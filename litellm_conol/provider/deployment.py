"""The operator's own settings for a proxied call: the deployment's ``litellm_params`` in the Router.

The handler receives the deployment's ``litellm_params`` already merged with the caller's body
keys, so the operator's values are read from the deployment itself (the proxy's Router, found by
the ``model_info.id`` LiteLLM passes with every routed call; ``docs/configuration.md#who-sets-what``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

# The module that holds the running proxy's Router (LiteLLM 1.108–1.110). It is looked up, never
# imported: an SDK user has no proxy, and importing it would start one's worth of set-up.
PROXY_SERVER_MODULE = "litellm.proxy.proxy_server"


def deployment_params(litellm_params: Any) -> dict[str, Any] | None:
    """The ``litellm_params`` of the deployment this call was routed to, ``None`` when not found."""
    if not isinstance(litellm_params, Mapping):
        return None
    model_info = litellm_params.get("model_info")
    model_id = model_info.get("id") if isinstance(model_info, Mapping) else None
    router = getattr(sys.modules.get(PROXY_SERVER_MODULE), "llm_router", None)
    if router is None or not isinstance(model_id, str):
        return None
    deployment = router.get_deployment(model_id=model_id)
    params = getattr(deployment, "litellm_params", None)
    if params is None:
        return None
    dumped = params.model_dump(exclude_none=True) if hasattr(params, "model_dump") else params
    return dict(dumped) if isinstance(dumped, Mapping) else None
