"""The catalog beyond the packaged file against the fake: an extra model through the SDK, a bad
agent_model, and ``litellm-conol models --check`` (conol's downgrade flag per model)."""

from __future__ import annotations

import json

import litellm
import pytest

import litellm_conol
from litellm_conol import cli
from litellm_conol.core.models.catalog import default_catalog
from litellm_conol.fake import DOWNGRADE_MODEL, KNOWN_MODELS, FakeConol

pytestmark = pytest.mark.timeout(60)


litellm_conol.register()


def _write_catalog(path, *models: tuple[str, str]):
    path.write_text(json.dumps({"models": [{"id": i, "agent_model": a} for i, a in models]}))
    return path


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
