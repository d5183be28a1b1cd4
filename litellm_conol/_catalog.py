"""The model catalog: which LiteLLM ids conol knows, loaded from ``models.json`` (data, not code).

conol accepts any ``agentModel`` and silently runs a cheaper model for ids it does not know, so an
unknown id must be refused here, before a session is created.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ._errors import ModelNotFound


@dataclass(frozen=True, slots=True)
class CatalogModel:
    id: str
    agent_model: str


@dataclass(frozen=True, slots=True)
class Catalog:
    models: tuple[CatalogModel, ...]

    def resolve(self, model: str) -> CatalogModel:
        """Map a LiteLLM model name (``conol/`` prefix optional, either id form) to a known model."""
        name = model.removeprefix("conol/")
        for entry in self.models:
            if name in (entry.id, entry.agent_model):
                return entry
        known = ", ".join(m.id for m in self.models)
        raise ModelNotFound(
            f"conol model {name!r} is not in the catalog (conol would silently run another model). "
            f"Known models: {known}. List them with `litellm-conol models`; add new ones to the "
            f"catalog file (CONOL_MODELS_FILE)."
        )


def load_catalog(path: str | Path | None = None) -> Catalog:
    if path is None:
        text = resources.files(__package__).joinpath("models.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    raw = json.loads(text)
    models = tuple(CatalogModel(id=m["id"], agent_model=m["agent_model"]) for m in raw["models"])
    return Catalog(models=models)


@cache
def _cached_catalog(path: str | None) -> Catalog:
    return load_catalog(path)


def default_catalog(path: str | None = None) -> Catalog:
    """The packaged catalog, or the file named by ``path`` (e.g. from ``CONOL_MODELS_FILE``); read once."""
    return _cached_catalog(path)
