"""The trust boundary between a proxy's operator and its callers (``docs/configuration.md#who-sets-what``).

LiteLLM merges a caller's body keys (top level and ``extra_body``) over the deployment's
``litellm_params``, and the handler receives only the merge. So the caller's keys are read from the
body the proxy received, and the operator's values from the deployment itself. An ``operator``
option in the body is refused (an environment-only one too), a ``narrow`` one is refused when the
value the call would use widens the deployment's, and the operator's values replace whatever the
merge holds for every option a caller may not set, so a caller's key that reached the merge some
other way (a ``fallbacks`` entry LiteLLM merged in) changes nothing. When the deployment cannot be
found, nothing in the merge is taken for any option that is not the caller's (fail closed). All of
it before any network I/O.

Outside a proxy (``caller_body`` is ``None``) the code's author is the operator: nothing is refused.
The provider decides when that applies: inside a proxy process a call without the proxy's request
snapshot never gets here as "the code's author" (``provider/handler.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import BadRequest
from ..settings import Setting, Settings, read_settings
from .settings_table import NEVER_OPENED, SETTINGS

# LiteLLM's proxy passes a raw ``extra_body`` key on as a kwarg, and its guard descends one level;
# an ``extra_body`` inside it is refused as deep as this, which is deeper than any reader looks.
MAX_EXTRA_BODY_DEPTH = 4
# Where conol is and its token: LiteLLM hands them to the handler as arguments of their own, and the
# provider takes them from the deployment in a proxy (``provider/deployment.py``).
CONNECTION = ("api_key", "api_base")


def flat_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with its ``extra_body`` keys over its own: the one flattening every reader uses.

    Only one level: an ``extra_body`` inside ``extra_body`` is dropped, never lifted, so flattening
    twice reads the same options as once (and no option hides two levels down)."""
    flat = {key: value for key, value in params.items() if key != "extra_body"}
    extra_body = params.get("extra_body")
    if isinstance(extra_body, Mapping):
        flat.update((key, value) for key, value in extra_body.items() if key != "extra_body")
    return flat


def settings_of(params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Settings:
    """Every declared option of one call (``params`` flattened), else the environment, else defaults."""
    return read_settings(SETTINGS, flat_params(params), os.environ if environ is None else environ)


def setting_value(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One process-wide option (its environment variable, else its default), checked."""
    declared = {name: SETTINGS[name]}
    return read_settings(declared, {}, os.environ if environ is None else environ)[name]


def caller_options(body: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each declared option the caller's body names: top level, then each nested ``extra_body``."""
    level: Any = body
    for _ in range(MAX_EXTRA_BODY_DEPTH + 1):
        if not isinstance(level, Mapping):
            return
        for key, value in level.items():
            if key in SETTINGS:
                yield key, value
        level = level.get("extra_body")
    if isinstance(level, Mapping):
        raise BadRequest(f"extra_body is nested more than {MAX_EXTRA_BODY_DEPTH} levels deep")


def operator_refusal(setting: Setting, where: str = "") -> BadRequest:
    """The 400 for an ``operator`` option a caller named (``where``: e.g. " in a fallbacks entry")."""
    if not setting.param:
        return BadRequest(
            f"`{setting.name}` is set by the proxy operator, not per request{where}: it is read from the "
            f"environment ({setting.env}) only; remove it from the request"
        )
    return BadRequest(
        f"`{setting.name}` is set by the proxy operator, not per request{where}: remove it from the "
        "request (a deployment can open it to callers with caller_options)"
    )


def settle_params(
    optional_params: Mapping[str, Any],
    caller_body: Mapping[str, Any] | None,
    operator_params: Mapping[str, Any] | None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The params the handler may read: the merge (flattened once), with the boundary enforced (a
    400 naming the option when a caller oversteps). ``operator_params``: the deployment's
    ``litellm_params`` (``None`` when it cannot be found: then a ``narrow`` option from the body is
    refused and no option that is not the caller's is taken from the merge)."""
    merged = flat_params(optional_params)
    if caller_body is None:
        return merged
    operator = flat_params(operator_params) if operator_params is not None else None
    environ = os.environ if environ is None else environ
    opened = _opened(operator) if operator is not None else frozenset()
    caller_set: set[str] = set()
    for name, _ in caller_options(caller_body):
        setting = SETTINGS[name]
        if setting.scope == "request":
            continue
        if name not in opened:
            if setting.scope == "operator" or not setting.param:
                raise operator_refusal(setting)
            if operator is None:
                raise BadRequest(
                    f"`{name}` can only be tightened per request, and this deployment's own value could "
                    "not be read: remove it from the request"
                )
        if name in merged:  # what the call will use; one deeper than the merge reads is not taken
            caller_set.add(name)
    for name in caller_set - opened:
        _check_narrow(SETTINGS[name], merged[name], operator or {}, environ)
    _operator_values_win(merged, operator or {}, caller_set)
    return merged


def _opened(params: Mapping[str, Any]) -> frozenset[str]:
    names: tuple[str, ...] = SETTINGS["caller_options"].coerce(params.get("caller_options"))
    for name in names:
        if name not in SETTINGS or name in NEVER_OPENED:
            raise BadRequest(f"caller_options names {name!r}, which is not an option a caller can be given")
    return frozenset(names)


def _check_narrow(
    setting: Setting, value: Any, operator: Mapping[str, Any], environ: Mapping[str, str]
) -> None:
    """``value`` (what the call will use) at or below what the deployment allows, else a 400."""
    name = setting.name
    asked = setting.coerce(value, name)
    allowed = read_settings({name: setting}, operator, environ)[name]
    if _rank(setting, asked) > _rank(setting, allowed):
        raise BadRequest(
            f"`{name}` can only be tightened per request: this deployment allows {allowed!r}, "
            f"the request asked for {asked!r}"
        )


def _rank(setting: Setting, value: Any) -> float:
    if setting.ranks is not None:
        return setting.ranks[value]
    return float(value)


def _operator_values_win(merged: dict[str, Any], operator: Mapping[str, Any], callers: set[str]) -> None:
    """Every option that is not the caller's takes the deployment's value (or none: the environment's).
    The connection (``api_key``, ``api_base``) is never read from params: the provider passes it."""
    for name, setting in SETTINGS.items():
        if setting.scope == "request" or not setting.param or name in callers:
            continue
        if name in operator and name not in CONNECTION:
            merged[name] = operator[name]
        else:
            merged.pop(name, None)
