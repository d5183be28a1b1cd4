"""The catalog beyond the packaged file, offline: CONOL_MODELS_EXTRA and CONOL_MODELS files, and
``litellm-conol models --check`` without a token."""

from __future__ import annotations

import json

import pytest

import litellm_conol
from litellm_conol import cli
from litellm_conol.core.models.catalog import Catalog, CatalogModel, default_catalog

pytestmark = pytest.mark.timeout(60)


litellm_conol.register()


def _write_catalog(path, *models: tuple[str, str]):
    path.write_text(json.dumps({"models": [{"id": i, "agent_model": a} for i, a in models]}))
    return path


def test_extending_adds_models_and_replaces_those_with_the_same_id():
    base = Catalog((CatalogModel("a", "x/a"), CatalogModel("b", "x/b")))
    extra = Catalog((CatalogModel("c", "y/c"), CatalogModel("a", "y/a2")))
    assert base.extended(extra).models == (
        CatalogModel("a", "y/a2"),
        CatalogModel("b", "x/b"),
        CatalogModel("c", "y/c"),
    )


def test_models_lists_the_extra_files_after_the_packaged_catalog(tmp_path, monkeypatch, capsys):
    one = _write_catalog(tmp_path / "one.json", ("brand-new", "vendor/brand-new"))
    two = _write_catalog(tmp_path / "two.json", ("glm-5.2", "z-ai/glm-5.2-0601"))
    monkeypatch.setenv("CONOL_MODELS_EXTRA", f"{one}:{two}")
    assert cli.main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(default_catalog().models) + 1
    assert lines[-1].split() == ["conol/brand-new", "agentModel=vendor/brand-new"]
    assert "conol/glm-5.2                  agentModel=z-ai/glm-5.2-0601" in lines


def test_a_models_file_replaces_the_packaged_catalog(tmp_path, monkeypatch, capsys):
    only = _write_catalog(tmp_path / "only.json", ("solo", "vendor/solo"))
    monkeypatch.setenv("CONOL_MODELS_FILE", str(only))
    assert cli.main(["models"]) == 0
    assert capsys.readouterr().out.split() == ["conol/solo", "agentModel=vendor/solo"]


def test_models_check_needs_a_token(monkeypatch, capsys):
    monkeypatch.delenv("CONOL_SESSION_TOKEN", raising=False)
    assert cli.main(["models", "--check"]) == 2
    assert "litellm-conol models: no token" in capsys.readouterr().err
