"""Who is calling: the caller identity that scopes session bindings, uploaded images and the failure
memory under one conol credential (docs/session-reuse.md#whose-sessions).

A team shares one conol token, so the token alone cannot tell two members apart. Behind the proxy
the caller is what LiteLLM's auth wrote for this request: the virtual key's hash, its team, its
user, and the end user (``user_api_key_end_user_id``: the body's ``user``, ``litellm_metadata.user``
or anthropic ``metadata.user_id``, or a customer header). Auth writes these into one metadata dict
per route: ``litellm_metadata`` on ``/v1/messages``, ``/v1/responses`` (and LiteLLM's other
``LITELLM_METADATA_ROUTES``), ``metadata`` everywhere else; there the caller's own ``metadata``
(anthropic ``metadata.user_id``, OpenAI Responses ``metadata``) is the caller's to fill, so it is
never read. Before writing, auth strips every ``user_api_key_*`` field a caller put in either dict,
and on a ``metadata`` route it drops a caller's ``litellm_metadata`` (tests/unit/test_caller.py holds
what a real proxy passed the handler on each route).

The end user comes from the body by nature, and only ever narrows the scope under the caller's key:
an end user can never select another key's scope. Without the proxy (the SDK, a Router in code) the
caller is the ``user`` argument, if any. The identity leaves this module only as a digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# Where LiteLLM 1.108's proxy auth writes a request's identity (its ``metadata_variable_name_for_route``):
# ``litellm_metadata`` on routes holding one of these, ``metadata`` on the others.
LITELLM_METADATA_ROUTES = ("batches", "bedrock", "/v1/messages", "responses", "files", "thread", "assistant")
AUTH_FIELDS = (
    "user_api_key_hash",
    "user_api_key_team_id",
    "user_api_key_user_id",
    "user_api_key_end_user_id",
)


@dataclass(frozen=True)
class Caller:
    """One request's caller: the proxy key (hash), team, user and end user; ``None`` where unknown."""

    proxied: bool
    key_hash: str | None = None
    team_id: str | None = None
    user_id: str | None = None
    end_user: str | None = None

    def digest(self) -> str:
        """The opaque scope of this caller (``""``: the SDK without ``user``, the credential alone)."""
        if not self.proxied and self.end_user is None:
            return ""
        identity = [
            "proxy" if self.proxied else "sdk",
            self.key_hash,
            self.team_id,
            self.user_id,
            self.end_user,
        ]
        return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


def caller_of(kwargs: Mapping[str, Any]) -> Caller:
    """The caller of one handler call, from the kwargs LiteLLM passes a ``CustomLLM``."""
    litellm_params = kwargs.get("litellm_params")
    litellm_params = litellm_params if isinstance(litellm_params, Mapping) else {}
    server_request = litellm_params.get("proxy_server_request")
    if not isinstance(server_request, Mapping):
        return Caller(proxied=False, end_user=_text(getattr(kwargs.get("logging_obj"), "user", None)))
    auth = litellm_params.get(auth_metadata_name(server_request.get("url")))
    auth = auth if isinstance(auth, Mapping) else {}
    key_hash, team_id, user_id, end_user = (_text(auth.get(name)) for name in AUTH_FIELDS)
    body = server_request.get("body")
    if end_user is None and isinstance(body, Mapping):
        end_user = _text(body.get("user"))  # the OpenAI field, when auth did not read one
    return Caller(proxied=True, key_hash=key_hash, team_id=team_id, user_id=user_id, end_user=end_user)


def auth_metadata_name(url: Any) -> str:
    """The ``litellm_params`` key holding what the proxy's auth wrote for a request to ``url``."""
    route = urlsplit(url).path if isinstance(url, str) else ""
    return "litellm_metadata" if any(part in route for part in LITELLM_METADATA_ROUTES) else "metadata"


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value) if isinstance(value, str | int | float) else None
    return text or None
