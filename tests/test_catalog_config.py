"""The catalog beyond the packaged file: CONOL_MODELS_EXTRA, a deployment's agent_model, and
``litellm-conol models --check`` (conol's downgrade flag per model, against the fake)."""

from __future__ import annotations

import json

import litellm
import pytest

import litellm_conol
from litellm_conol import cli
from litellm_conol.core._catalog import Catalog, CatalogModel, default_catalog
from litellm_conol.fake import DOWNGRADE_MODEL, KNOWN_MODELS, FakeConol

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


def test_an_extra_model_works_through_the_sdk(conol_fake, tmp_path, monkeypatch):
    extra = _write_catalog(tmp_path / "extra.json", ("brand-new", "vendor/brand-new"))
    monkeypatch.setenv("CONOL_MODELS_EXTRA", str(extra))
    response = litellm.completion(
        model="conol/brand-new",
        messages=[{"role": "user", "content": "[[fake:echo]] ping"}],
        api_base=conol_fake.base_url,
        api_key=conol_fake.token,
    )
    assert response.choices[0].message.content == "[[fake:echo]] ping"
    assert conol_fake.last_session.model == "vendor/brand-new"


def test_a_bad_agent_model_is_a_400_naming_it(conol_fake):
    with pytest.raises(litellm.BadRequestError, match="agent_model must be a non-empty string"):
        litellm.completion(
            model="conol/anything",
            messages=[{"role": "user", "content": "hi"}],
            api_base=conol_fake.base_url,
            api_key=conol_fake.token,
            agent_model=" ",
        )
    assert conol_fake.requests == []


def test_a_deployment_agent_model_through_the_real_proxy(e2e):
    fake, client = e2e
    response = client.chat.completions.create(
        model="private-model", messages=[{"role": "user", "content": "[[fake:echo]] private"}]
    )
    assert response.choices[0].message.content == "[[fake:echo]] private"
    assert fake.last_session.model == "vendor/private-1"
    fields = response.choices[0].message.model_extra["provider_specific_fields"]
    # the fake does not know vendor/private-1 either: conol's downgrade shows, as for any model
    assert fields["model_downgraded"] is True and fields["effective_model"] == DOWNGRADE_MODEL


def test_models_check_marks_what_conol_downgrades(capsys):
    allowed = KNOWN_MODELS - {"moonshotai/kimi-k2.7-code"}
    with FakeConol(known_models=allowed) as fake:
        code = cli.main(["models", "--check", "--token", fake.token, "--api-base", fake.base_url])
        created = [r.body["agentModel"] for r in fake.requests if r.path == "/api/sessions"]
    out, err = capsys.readouterr()
    assert code == 1 and fake.token not in out + err
    lines = {line.split()[0]: line.split(None, 2)[2] for line in out.splitlines()}
    assert len(lines) == len(default_catalog().models) == len(created)
    assert sorted(created) == sorted(m.agent_model for m in default_catalog().models)
    assert lines["conol/kimi-k2.7-code"] == f"FAILS: downgraded: conol runs {DOWNGRADE_MODEL} instead"
    assert {verdict for model, verdict in lines.items() if model != "conol/kimi-k2.7-code"} == {"works"}


def test_models_check_passes_when_every_model_runs_as_asked(conol_fake, capsys):
    code = cli.main(["models", "--check", "--token", conol_fake.token, "--api-base", conol_fake.base_url])
    assert code == 0
    assert capsys.readouterr().out.count(" works\n") == len(default_catalog().models)


def test_models_check_needs_a_token(monkeypatch, capsys):
    monkeypatch.delenv("CONOL_SESSION_TOKEN", raising=False)
    assert cli.main(["models", "--check"]) == 2
    assert "litellm-conol models: no token" in capsys.readouterr().err
