"""The proxy's pre-call hook: the operator's settings hold on every path into the handler.

LiteLLM runs a caller's ``fallbacks`` (and ``context_window_fallbacks``, ``content_policy_fallbacks``)
when the first attempt fails, and merges each dict entry into the retried call
(``kwargs.update(entry)``): past the body check in the handler, over the request snapshot, the
deployment's credentials and what auth wrote. So this hook refuses, before routing, with a 400 naming
the key, every such entry (at any depth: an entry may carry fallbacks of its own) that carries an
``operator`` or ``narrow`` option, or one of :data:`REFUSED_IN_FALLBACKS`. A plain model name, or an
entry with a model and per-request options, stays allowed (docs/configuration.md#who-sets-what).

It also reads who is calling as auth wrote it and leaves it with the call, where nothing merged
later can replace it (``provider/caller.py``); and it refuses, for a conol model, a percent-encoded
image the handler would refuse, before LiteLLM's error mapping writes the whole request out
(docs/images-and-discovery.md#what-the-bytes-say).

It is LiteLLM's own extension point (a ``CustomLogger`` with ``async_pre_call_hook`` in
``litellm.callbacks``), installed by whatever installs the provider: the proxy config line that names
``litellm_conol.conol_llm`` imports the handler, which installs it, and so does ``register()``. An
operator needs no second line. It applies to every request the proxy serves, whatever model it
names: a fallback may lead from any model to a conol one, and LiteLLM carries an entry's keys over to
every later hop.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import litellm
from litellm.integrations.custom_logger import CustomLogger

from ..core.config.boundary import caller_options, operator_refusal
from ..core.config.settings_table import SETTINGS
from ..core.errors import BadRequest
from ..core.request.images import long_percent_encoded, percent_encoded_refusal
from .caller import CAPTURED_KEY, CapturedCaller, caller_from_auth
from .deployment import PROXY_SERVER_MODULE, proxy_router
from .params_patch import PROVIDER
from .usage_fields import PAYLOAD_KEY

# What a fallbacks entry may never carry, besides the declared operator and narrow options: the
# request snapshot the handler reads the caller's body from, the credentials and address of the
# call (``base_url`` is LiteLLM's other name for ``api_base``), what auth wrote (the caller's
# identity) and the deployment the call was routed to.
REFUSED_IN_FALLBACKS = (
    "proxy_server_request",
    "api_key",
    "api_base",
    "base_url",
    "metadata",
    "litellm_metadata",
    "model_info",
)
FALLBACK_FIELDS = ("fallbacks", "context_window_fallbacks", "content_policy_fallbacks")
# Deeper than LiteLLM itself walks (twice its default ROUTER_MAX_FALLBACKS of 5).
MAX_FALLBACK_DEPTH = 10

log = logging.getLogger("litellm_conol.pre_call")


class ConolPreCallGuard(CustomLogger):  # type: ignore[misc]
    """The proxy pre-call hook of ``litellm-conol`` (one per process: :data:`pre_call_guard`)."""

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        check_fallbacks(data)
        check_payload_fields(data)
        check_images(data)
        capture_caller(data)
        return data


def check_payload_fields(data: Mapping[str, Any]) -> None:
    """A request may tag its spend logs (LiteLLM's ``spend_logs_metadata``), but never with conol's
    own key: the handler writes its fields there (docs/metrics.md#in-the-logging-payload), and a request
    that fails before the handler runs would otherwise log the caller's numbers as conol's."""
    for name in ("metadata", "litellm_metadata"):
        metadata = data.get(name)
        tags = metadata.get("spend_logs_metadata") if isinstance(metadata, Mapping) else None
        if isinstance(tags, Mapping) and PAYLOAD_KEY in tags:
            raise BadRequest(
                f"`spend_logs_metadata.{PAYLOAD_KEY}` is written by the conol provider, not per request"
            )


def check_images(data: Mapping[str, Any]) -> None:
    """A request for a conol model with a long percent-encoded image is refused here, as the handler
    would refuse it: LiteLLM maps an error the handler raises by first writing out the whole
    ``messages`` (24 MB of them held the event loop for 0.4 s), a refusal here costs nothing."""
    for where, url in image_urls(data):
        chars = long_percent_encoded(url)
        if chars is not None and routes_to_conol(data.get("model")):
            raise percent_encoded_refusal(chars, where)


def image_urls(data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each image URL of a chat, ``/v1/messages`` or ``/v1/responses`` request, with where it is."""
    for field in ("messages", "input"):
        items = data.get(field)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            content = item.get("content") if isinstance(item, Mapping) else None
            parts = content if isinstance(content, list) else [item]
            for part in parts:
                url = _image_url(part)
                if url is not None:
                    yield f"{field}[{index}].content", url


def _image_url(part: Any) -> Any:
    if not isinstance(part, Mapping):
        return None
    if part.get("type") in ("image_url", "input_image"):
        image = part.get("image_url")
        return image.get("url") if isinstance(image, Mapping) else image
    source = part.get("source") if part.get("type") == "image" else None
    return source.get("url") if isinstance(source, Mapping) else None


def routes_to_conol(model: Any) -> bool:
    """Whether ``model`` names a conol model or a proxy model group with a conol deployment."""
    if not isinstance(model, str):
        return False
    if model.startswith(PROVIDER + "/"):
        return True
    router = proxy_router()
    deployments = router.get_model_list(model_name=model) if router is not None else None
    return any(
        str((deployment.get("litellm_params") or {}).get("model", "")).startswith(PROVIDER + "/")
        for deployment in deployments or ()
    )


def check_fallbacks(data: Mapping[str, Any]) -> None:
    """A 400 naming the first key a caller's fallback entry may not carry; nothing otherwise."""
    for entry in fallback_entries(data):
        for name, _ in caller_options(entry):  # first: the refusal names the option the entry carried
            setting = SETTINGS[name]
            if setting.scope == "operator" or not setting.param:
                raise operator_refusal(setting, " (here in a fallbacks entry)")
            if setting.scope == "narrow":
                raise BadRequest(
                    f"`{name}` is not allowed in a fallbacks entry: it can only be tightened per request, at "
                    "the top level of the request (LiteLLM would apply an entry's value to the retried call)"
                )
        for key in REFUSED_IN_FALLBACKS:
            if key in entry:
                raise BadRequest(
                    f"`{key}` is not allowed in a fallbacks entry: an entry names a model and may carry "
                    "per-request options only, never credentials, identity, the request or the deployment"
                )


def fallback_entries(data: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every dict a fallback may merge into the call, as LiteLLM reads the three fields: from the
    request, and from the per-request router settings a body may carry."""
    override = data.get("router_settings_override")
    for source in (data, override):
        if isinstance(source, Mapping):
            for field in FALLBACK_FIELDS:
                yield from _entries(source.get(field), 0)


def _entries(value: Any, depth: int) -> Iterator[Mapping[str, Any]]:
    if depth > MAX_FALLBACK_DEPTH:
        raise BadRequest(f"fallbacks are nested more than {MAX_FALLBACK_DEPTH} levels deep")
    if not isinstance(value, list):
        return
    for item in value:
        if not isinstance(item, Mapping):
            continue  # a model name
        values = list(item.values())
        if not values or not all(isinstance(v, list) for v in values):
            yield item  # a target (``{"model": …, …}``), not ``{"group": [targets]}``
        if isinstance(item.get("model"), str):
            for field in FALLBACK_FIELDS:
                yield from _entries(item.get(field), depth + 1)
        else:
            for targets in values:
                yield from _entries(targets, depth + 1)


def capture_caller(data: dict[str, Any]) -> None:
    """Leave the caller auth wrote (in the dict LiteLLM's Router also reads: ``litellm_metadata``
    where the request has one, else ``metadata``) with the call, as a :class:`CapturedCaller`."""
    name = "litellm_metadata" if isinstance(data.get("litellm_metadata"), dict) else "metadata"
    auth = data.get(name)
    if isinstance(auth, dict):
        auth[CAPTURED_KEY] = CapturedCaller(caller_from_auth(auth, data))


pre_call_guard = ConolPreCallGuard()


def install_pre_call_guard() -> bool:
    """Put the hook in ``litellm.callbacks`` when this process is a LiteLLM proxy (the module that
    runs one is loaded: an SDK user's calls never run proxy hooks, and pay nothing for one);
    idempotent. Whether it had to be (re)installed."""
    if PROXY_SERVER_MODULE not in sys.modules:
        return False
    callbacks = litellm.callbacks
    if any(isinstance(callback, ConolPreCallGuard) for callback in callbacks):
        return False
    callbacks.append(pre_call_guard)
    return True


def ensure_pre_call_guard() -> None:
    """Install the hook if it is missing when a proxied call reaches the handler: ``litellm.callbacks``
    was replaced after it was installed (a proxy config whose ``callbacks`` is one name, not a list,
    does that), or the provider was imported before the proxy started. The handler's own checks held
    for the calls before this one."""
    if install_pre_call_guard():
        log.warning(
            "litellm-conol's pre-call guard was not in litellm.callbacks: installed it now (requests "
            "before this one were checked by the handler alone)"
        )
