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

The proxy's pre-call hook (``provider/pre_call.py``) reads that identity right after auth, before
routing, and leaves it in the auth dict as a :class:`CapturedCaller`: an object no request body can
spell, so what LiteLLM later merges into the call (a ``fallbacks`` entry's ``metadata``) cannot
replace it. Without one (a route that runs no pre-call hook) the auth dict is read as above, the
route taken from the request's path with the proxy's root path removed, as LiteLLM's auth does.

The end user comes from the body by nature, and only ever narrows the scope under the caller's key:
an end user can never select another key's scope. Inside a proxy a caller without a key hash (a
proxy with no master key) has no scope of its own, so its sessions are never continued
(:attr:`Caller.reusable`). Without the proxy (the SDK, a Router in code) the caller is the ``user``
argument, if any. The identity leaves this module only as a digest.
"""

from __future__ import annotations

import hashlib
import json
import os
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
# The key of the auth dict where the pre-call hook leaves the caller it read.
CAPTURED_KEY = "conol_caller"
# The proxy's root path (one prefix) and per-request root paths (comma-separated), as LiteLLM reads them.
ROOT_PATH_ENV = "SERVER_ROOT_PATH"
ROOT_PATHS_ENV = "SERVER_ROOT_PATHS"


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

    @property
    def reusable(self) -> bool:
        """Whether this caller's sessions may be continued: behind a proxy only under a key."""
        return not self.proxied or self.key_hash is not None


class CapturedCaller(str):
    """The caller the pre-call hook read from auth, as its digest (a string, so LiteLLM's logging
    writes it as one); the :class:`Caller` itself in ``caller``. Only code can make one."""

    caller: Caller

    def __new__(cls, caller: Caller) -> CapturedCaller:
        captured = super().__new__(cls, caller.digest())
        captured.caller = caller
        return captured

    def __reduce__(self) -> tuple[Any, ...]:  # a copy (LiteLLM deep-copies metadata) stays one
        return (CapturedCaller, (self.caller,))


def caller_of(kwargs: Mapping[str, Any]) -> Caller:
    """The caller of one handler call, from the kwargs LiteLLM passes a ``CustomLLM``."""
    litellm_params = kwargs.get("litellm_params")
    litellm_params = litellm_params if isinstance(litellm_params, Mapping) else {}
    server_request = litellm_params.get("proxy_server_request")
    if not isinstance(server_request, Mapping):
        return Caller(proxied=False, end_user=_text(getattr(kwargs.get("logging_obj"), "user", None)))
    captured = captured_caller(litellm_params)
    if captured is not None:
        return captured
    auth = litellm_params.get(auth_metadata_name(server_request.get("url")))
    return caller_from_auth(auth, server_request.get("body"))


def caller_from_auth(auth: Any, body: Any) -> Caller:
    """The proxied caller as auth wrote it (``auth``: its metadata dict) and the body's ``user``."""
    auth = auth if isinstance(auth, Mapping) else {}
    key_hash, team_id, user_id, end_user = (_text(auth.get(name)) for name in AUTH_FIELDS)
    if end_user is None and isinstance(body, Mapping):
        end_user = _text(body.get("user"))  # the OpenAI field, when auth did not read one
    return Caller(proxied=True, key_hash=key_hash, team_id=team_id, user_id=user_id, end_user=end_user)


def captured_caller(litellm_params: Mapping[str, Any]) -> Caller | None:
    """The caller the pre-call hook captured for this call, if it ran."""
    for name in ("litellm_metadata", "metadata"):
        auth = litellm_params.get(name)
        captured = auth.get(CAPTURED_KEY) if isinstance(auth, Mapping) else None
        if isinstance(captured, CapturedCaller):
            return captured.caller
    return None


def auth_metadata_name(url: Any, environ: Mapping[str, str] | None = None) -> str:
    """The ``litellm_params`` key holding what the proxy's auth wrote for a request to ``url``."""
    route = request_route(urlsplit(url).path if isinstance(url, str) else "", environ)
    return "litellm_metadata" if any(part in route for part in LITELLM_METADATA_ROUTES) else "metadata"


def request_route(path: str, environ: Mapping[str, str] | None = None) -> str:
    """``path`` without the proxy's root path, as LiteLLM's auth routes it: the longest
    ``SERVER_ROOT_PATHS`` entry, else ``SERVER_ROOT_PATH``, removed on whole path segments only."""
    environ = os.environ if environ is None else environ
    roots = [root.strip().rstrip("/") for root in environ.get(ROOT_PATHS_ENV, "").split(",")]
    candidates = sorted((r for r in roots if r.startswith("/")), key=len, reverse=True)
    candidates.append(environ.get(ROOT_PATH_ENV, "").strip().rstrip("/"))
    for root in candidates:
        if root and (path == root or path.startswith(root + "/")):
            return path[len(root) :] or "/"
    return path


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value) if isinstance(value, str | int | float) else None
    return text or None
