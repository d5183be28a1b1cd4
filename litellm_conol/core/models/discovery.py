"""``GET /api/agent-servers`` (docs/protocol.md#discovery) read tolerantly: the account's models, which take
images (``inputModalities``) and their effort ladders; and the catalog file written from it.

Shapes read: a list of servers, or one under ``agentServers`` / ``servers`` / ``data``; each server's
``capabilities.agents[].models[]`` (or ``agents`` on the server itself); a model as an object or a
bare name string. A server's ``apiKey`` is a secret: nothing here keeps it (only the fields named
below are copied out), so no :class:`Discovered` can log, store or return it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..settings import Settings
from .catalog import Catalog, CatalogModel


@dataclass(frozen=True, slots=True)
class DiscoveredModel:
    name: str  # the agentModel conol takes
    display_name: str | None = None
    efforts: tuple[str, ...] | None = None  # None: not reported; (): a model without a ladder
    input_modalities: tuple[str, ...] | None = None  # None: not reported

    @property
    def supports_vision(self) -> bool | None:
        return None if self.input_modalities is None else "image" in self.input_modalities


@dataclass(frozen=True, slots=True)
class Discovered:
    """What the account's agent servers offer; ``None`` answers mean "not reported", not "no"."""

    models: tuple[DiscoveredModel, ...]

    def model(self, agent_model: str) -> DiscoveredModel | None:
        return next((m for m in self.models if m.name == agent_model), None)

    def supports_vision(self, agent_model: str) -> bool | None:
        found = self.model(agent_model)
        return found.supports_vision if found is not None else None

    def effort_ladder(self, agent_model: str) -> tuple[str, ...] | None:
        """The discovered effort ladder of ``agent_model`` (``None``: unknown), for the effort clamp."""
        found = self.model(agent_model)
        return found.efforts if found is not None else None


DiscoveryMode = Literal["off", "startup", "interval"]
DEFAULT_DISCOVERY_INTERVAL = 3600.0
MIN_DISCOVERY_INTERVAL = 60.0


def discovery_settings(settings: Settings) -> tuple[DiscoveryMode, float]:
    """The deployment's ``discovery`` (off | startup | interval) and ``discovery_interval``."""
    mode: DiscoveryMode = settings["discovery"]
    return mode, settings["discovery_interval"]


class DiscoveryUnreadable(ValueError):
    """The answer is not a shape this reader knows; the message names what it saw (never values)."""


def parse_agent_servers(data: Any) -> Discovered:
    servers = _servers(data)
    models: dict[str, DiscoveredModel] = {}
    for server in servers:
        for agent in _agents(server):
            for raw in _list(agent.get("models")):
                model = _model(raw)
                if model is not None:
                    models.setdefault(model.name, model)  # the first server's reading wins
    return Discovered(models=tuple(models.values()))


def _servers(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        for key in ("agentServers", "servers", "data"):
            if isinstance(data.get(key), list):
                return list(data[key])
    raise DiscoveryUnreadable(f"expected a list of agent servers ({_shape(data)})")


def _agents(server: Any) -> list[Mapping[str, Any]]:
    if not isinstance(server, Mapping):
        return []
    capabilities = server.get("capabilities")
    holder = capabilities if isinstance(capabilities, Mapping) else server
    return [agent for agent in _list(holder.get("agents")) if isinstance(agent, Mapping)]


def _model(raw: Any) -> DiscoveredModel | None:
    if isinstance(raw, str):
        return DiscoveredModel(name=raw) if raw.strip() else None
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"].strip():
        return None
    display = raw.get("displayName")
    return DiscoveredModel(
        name=raw["name"].strip(),
        display_name=display if isinstance(display, str) else None,
        efforts=_words(raw.get("efforts"), lower=True),
        input_modalities=_words(raw.get("inputModalities"), lower=True),
    )


def _words(value: Any, *, lower: bool) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    words = (str(item).strip() for item in value if isinstance(item, str) and item.strip())
    return tuple(word.lower() if lower else word for word in words)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _shape(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object with keys " + (", ".join(sorted(map(str, value))[:8]) or "none")
    return f"a JSON {type(value).__name__}" if value is not None else "not JSON"


# --- the catalog file ----------------------------------------------------------------------------


def discovered_catalog(discovered: Discovered, packaged: Catalog) -> Catalog:
    """The discovered models as catalog entries: a packaged id where the packaged catalog knows the
    agentModel, else the name after its last ``/`` (``z-ai/glm-5.2`` → ``glm-5.2``)."""
    ids = {model.agent_model: model.id for model in packaged.models}
    return Catalog(
        models=tuple(
            CatalogModel(
                id=ids.get(model.name) or model.name.rsplit("/", 1)[-1],
                agent_model=model.name,
                info=() if model.supports_vision is None else (("supports_vision", model.supports_vision),),
                efforts=model.efforts,
            )
            for model in discovered.models
        )
    )


def catalog_json(catalog: Catalog) -> str:
    """``catalog`` in the format ``load_catalog`` (and ``CONOL_MODELS_EXTRA``) reads."""
    lines = [_model_line(model) for model in catalog.models]
    comment = (
        "Written by `litellm-conol models --refresh` from GET /api/agent-servers. Name this file in "
        "CONOL_MODELS_EXTRA to use it on top of the packaged catalog."
    )
    body = ",\n    ".join(lines)
    return f'{{\n  "_comment": {json.dumps(comment)},\n  "models": [\n    {body}\n  ]\n}}\n'


def _model_line(model: CatalogModel) -> str:
    line: dict[str, Any] = {"id": model.id, "agent_model": model.agent_model}
    if model.supports_vision is not None:
        line["supports_vision"] = model.supports_vision
    if model.efforts is not None:
        line["efforts"] = list(model.efforts)
    return json.dumps(line, ensure_ascii=False)


def catalog_diff(packaged: Catalog, refreshed: Catalog) -> list[str]:
    """One line per change from ``packaged`` to ``refreshed``: ``+`` offered and not packaged, ``-``
    packaged and not offered to this account, ``~`` a field that differs."""
    old = {model.agent_model: model for model in packaged.models}
    new = {model.agent_model: model for model in refreshed.models}
    lines = [
        f"+ conol/{m.id:<24} agentModel={m.agent_model}{_traits(m)}" for a, m in new.items() if a not in old
    ]
    lines += [
        f"- conol/{m.id:<24} agentModel={m.agent_model} (not offered)" for a, m in old.items() if a not in new
    ]
    for agent_model, model in new.items():
        before = old.get(agent_model)
        if before is None:
            continue
        changes = [
            f"{name}: {_value(was)} -> {_value(now)}"
            for name, was, now in (
                ("supports_vision", before.supports_vision, model.supports_vision),
                ("efforts", _packaged_efforts(packaged, before), model.efforts),
            )
            if now is not None and was != now
        ]
        if changes:
            lines.append(f"~ conol/{model.id:<24} " + "; ".join(changes))
    return lines


def _packaged_efforts(packaged: Catalog, model: CatalogModel) -> tuple[str, ...] | None:
    """A packaged model's ladder: its own ``efforts`` line, else models.json's ``effort_ladders``."""
    if model.efforts is not None:
        return model.efforts
    return packaged.effort_ladders.get(model.id)


def _traits(model: CatalogModel) -> str:
    traits = []
    if model.supports_vision is not None:
        traits.append("vision" if model.supports_vision else "text only")
    if model.efforts is not None:
        traits.append("efforts " + ("-".join(model.efforts) or "none"))
    return f" ({', '.join(traits)})" if traits else ""


def _value(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Iterable) and not isinstance(value, str):
        return "-".join(value) or "none"
    return str(value)
