"""The model catalog: which LiteLLM ids conol knows, loaded from ``models.json`` (data, not code).

conol accepts any ``agentModel`` and silently runs a cheaper model for ids it does not know, so an
unknown id must be refused here, before a session is created.

Each entry may also carry what LiteLLM's model map holds for a model (context window, max output,
``supports_*`` flags, an estimated price per token): the provider registers it with LiteLLM, so
``completion_cost``, ``supports_function_calling`` and the proxy's ``/model/info`` know conol models.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import ModelNotFound
from ..protocol.wire import Effort
from .effort import DEFAULT_LADDER, check_ladder

# The model-map fields a catalog entry may carry, with the type LiteLLM expects of each (bool before
# int matters: a JSON ``true`` is no token count). Any other key is refused: a typo must not pass as data.
INFO_FIELDS: dict[str, type] = {
    "max_input_tokens": int,
    "max_output_tokens": int,
    "input_cost_per_token": float,
    "output_cost_per_token": float,
    "supports_function_calling": bool,
    "supports_tool_choice": bool,
    "supports_response_schema": bool,
    "supports_reasoning": bool,
    "supports_vision": bool,
}


@dataclass(frozen=True, slots=True)
class CatalogModel:
    id: str
    agent_model: str
    # the model-map fields of INFO_FIELDS, as (name, value) pairs: hashable, like the rest of the entry
    info: tuple[tuple[str, Any], ...] = ()
    # the model's effort ladder as discovery reported it (``efforts`` in a refreshed catalog file);
    # ``_effort_ladder`` in ``core/config/options.py`` (via ``reported_ladder``) turns it into
    # conol's words for the clamp
    efforts: tuple[str, ...] | None = None

    def model_info(self) -> dict[str, Any]:
        """What LiteLLM's model map should say of ``conol/<id>`` (only the fields the catalog gives)."""
        return dict(self.info)

    @property
    def supports_vision(self) -> bool | None:
        """Whether the model takes images; ``None``: the catalog does not say (images are sent)."""
        value = dict(self.info).get("supports_vision")
        return value if isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class Catalog:
    models: tuple[CatalogModel, ...]
    # model id -> the agentEffort steps it runs at, lowest first (``effort_ladders`` in models.json)
    effort_ladders: Mapping[str, tuple[Effort, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def extended(self, extra: Catalog) -> Catalog:
        """This catalog plus ``extra``'s models and ladders; an ``extra`` model (or ladder) with a
        known id replaces it."""
        replacing = {model.id: model for model in extra.models}
        kept = tuple(replacing.pop(model.id, model) for model in self.models)
        ladders = MappingProxyType({**self.effort_ladders, **extra.effort_ladders})
        return Catalog(models=kept + tuple(replacing.values()), effort_ladders=ladders)

    def ladder(self, model_id: str) -> tuple[Effort, ...]:
        """The efforts conol runs ``model_id`` at; ``low…max`` for a model with no ladder
        (docs/protocol.md#effort-words)."""
        return self.effort_ladders.get(model_id, DEFAULT_LADDER)

    def resolve(self, model: str) -> CatalogModel:
        """Map a LiteLLM model name (``conol/`` prefix optional, either id form) to a known model."""
        name = model.removeprefix("conol/")
        for entry in self.models:
            if name in (entry.id, entry.agent_model):
                return entry
        known = ", ".join(m.id for m in self.models)
        raise ModelNotFound(
            f"conol model {name!r} is not in the catalog (conol would silently run another model). "
            f"Known models: {known}. List them with `litellm-conol models`; add new ones in a file "
            f"named by CONOL_MODELS_EXTRA, or give the deployment an agent_model."
        )


def load_catalog(path: str | Path | None = None) -> Catalog:
    if path is None:
        text = resources.files(__package__).joinpath("models.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    raw = json.loads(text)
    models = tuple(_model(m) for m in raw["models"])
    return Catalog(models=models, effort_ladders=_ladders(raw.get("effort_ladders")))


def _model(line: dict[str, Any]) -> CatalogModel:
    # ``efforts`` is what ``models --refresh`` writes: discovery's words, read tolerantly
    efforts = line.get("efforts")
    return CatalogModel(
        id=line["id"],
        agent_model=line["agent_model"],
        info=_info({k: v for k, v in line.items() if k != "efforts"}),
        efforts=tuple(map(str, efforts)) if isinstance(efforts, list) else None,
    )


def _ladders(raw: Any) -> Mapping[str, tuple[Effort, ...]]:
    if raw is None:
        return MappingProxyType({})
    if not isinstance(raw, dict):
        raise ValueError("effort_ladders must be an object: model id -> list of effort words")
    # keys starting with "_" are comments (JSON has none)
    return MappingProxyType({k: check_ladder(k, v) for k, v in raw.items() if not k.startswith("_")})


def _info(entry: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    pairs = []
    for name, value in entry.items():
        if name in ("id", "agent_model"):
            continue
        wanted = INFO_FIELDS.get(name)
        if wanted is None:
            known = ", ".join(INFO_FIELDS)
            raise ValueError(f"catalog model {entry.get('id')!r}: unknown field {name!r} (known: {known})")
        # exact types: a JSON ``true`` is no token count, and ``1`` no flag
        ok = type(value) is wanted if wanted is not float else type(value) in (int, float)
        if not ok:
            raise ValueError(
                f"catalog model {entry.get('id')!r}: {name} must be {wanted.__name__}, not {value!r}"
            )
        pairs.append((name, float(value) if wanted is float else value))
    return tuple(pairs)


@cache
def _cached_catalog(path: str | None, extra: str | None) -> Catalog:
    catalog = load_catalog(path)
    for extra_path in (extra or "").split(os.pathsep):
        if extra_path.strip():
            catalog = catalog.extended(load_catalog(extra_path.strip()))
    return catalog


def default_catalog(path: str | None = None, extra: str | None = None) -> Catalog:
    """The packaged catalog, or the file named by ``path`` (``CONOL_MODELS_FILE``: it replaces the
    packaged one), extended by the files named in ``extra`` (``CONOL_MODELS_EXTRA``, separated by
    ``os.pathsep``: their models are added, and replace packaged ones with the same id). Read once."""
    return _cached_catalog(path, extra)
