"""The operator's own settings for a proxied call: the deployment's ``litellm_params`` in the Router.

The handler receives the deployment's ``litellm_params`` already merged with the caller's body
keys, so the operator's values are read from the deployment itself: the proxy's Router, found by
the ``model_info`` LiteLLM passes with every routed call (``docs/configuration.md#who-sets-what``).
A call that carries client-side credentials runs on a copy of the deployment LiteLLM makes for it,
with an id of its own and the original's in ``model_info.original_model_id``: that original is the
operator's. Nothing found means nothing of the operator's is known: the callers of this module fail
closed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

# The module that holds the running proxy's Router (LiteLLM 1.108–1.110). It is looked up, never
# imported: an SDK user has no proxy, and importing it would start one's worth of set-up.
PROXY_SERVER_MODULE = "litellm.proxy.proxy_server"


def proxy_router() -> Any:
    """The running proxy's Router; ``None`` outside a proxy (or in one without a model list)."""
    return getattr(sys.modules.get(PROXY_SERVER_MODULE), "llm_router", None)


def in_proxy() -> bool:
    """Whether this process is a LiteLLM proxy serving a model list (where every routed call carries
    the proxy's request snapshot, and one without it did not come from the proxy's own routing)."""
    return proxy_router() is not None


def deployment_id(litellm_params: Any) -> str | None:
    """The id of the operator's deployment this call was routed to (the original's, for a
    client-side-credential copy)."""
    model_info = litellm_params.get("model_info") if isinstance(litellm_params, Mapping) else None
    if not isinstance(model_info, Mapping):
        return None
    for key in ("original_model_id", "id"):
        value = model_info.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def is_client_side_copy(litellm_params: Any) -> bool:
    """Whether this call runs on the copy LiteLLM makes of a deployment for client-side credentials."""
    model_info = litellm_params.get("model_info") if isinstance(litellm_params, Mapping) else None
    return isinstance(model_info, Mapping) and bool(model_info.get("original_model_id"))


def deployment_params(litellm_params: Any) -> dict[str, Any] | None:
    """The ``litellm_params`` of the deployment this call was routed to, ``None`` when not found."""
    model_id = deployment_id(litellm_params)
    router = proxy_router()
    if router is None or model_id is None:
        return None
    deployment = router.get_deployment(model_id=model_id)
    params = getattr(deployment, "litellm_params", None)
    if params is None:
        return None
    dumped = params.model_dump(exclude_none=True) if hasattr(params, "model_dump") else params
    return dict(dumped) if isinstance(dumped, Mapping) else None


def operator_connection(
    operator: Mapping[str, Any] | None, api_key: str | None, api_base: str | None
) -> tuple[str | None, str | None]:
    """The token and base URL a proxied call may use: the deployment's own (else the environment's,
    ``None``), never a value the merge brought. A deployment whose credentials LiteLLM fills in from
    a named credential (``litellm_credential_name``) keeps what LiteLLM passed."""
    if operator is None:
        return None, None
    if operator.get("litellm_credential_name"):
        return api_key, api_base
    key, base = operator.get("api_key"), operator.get("api_base")
    return (key if isinstance(key, str) else None), (base if isinstance(base, str) else None)
