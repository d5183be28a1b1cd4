"""The model catalog: which LiteLLM ids conol knows, loaded from ``models.json`` (data, not code).

conol accepts any ``agentModel`` and silently runs a cheaper model for ids it does not know, so an
unknown id must be refused here, before a session is created.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ._errors import ModelNotFound


@dataclass(frozen=True, slots=True)
class CatalogModel:
    id: str
    agent_model: str
    supports_vision: bool | None = None  # None: the catalog does not say (images are sent)
    efforts: tuple[str, ...] | None = None  # the model's effort ladder, when a discovery wrote it


@dataclass(frozen=True, slots=True)
class Catalog:
    models: tuple[CatalogModel, ...]

    def extended(self, extra: Catalog) -> Catalog:
        """This catalog plus ``extra``'s models; an ``extra`` model with a known id replaces it."""
        replacing = {model.id: model for model in extra.models}
        kept = tuple(replacing.pop(model.id, model) for model in self.models)
        return Catalog(models=kept + tuple(replacing.values()))

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
    return Catalog(models=models)


def _model(line: dict[str, Any]) -> CatalogModel:
    vision, efforts = line.get("supports_vision"), line.get("efforts")
    return CatalogModel(
        id=line["id"],
        agent_model=line["agent_model"],
        supports_vision=vision if isinstance(vision, bool) else None,
        efforts=tuple(map(str, efforts)) if isinstance(efforts, list) else None,
    )


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
