"""``litellm-conol accounts`` against the fake (docs/team-deployment.md#several-accounts): the shipped team
config read as the proxy reads it, each account's balance read once, its status, and never a token."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.paths import ROOT

from litellm_conol.cli import main
from litellm_conol.fake import FakeConol

pytestmark = pytest.mark.timeout(60)

TEAM_CONFIG = ROOT / "deploy" / "team_config.yaml"


def test_every_conol_deployment_with_its_accounts_balance_and_status(monkeypatch, capsys):
    with FakeConol() as fake:
        spent = fake.add_account("spent", daily=0, extra=0, refill_in=3600)
        low = fake.add_account("low", daily=3, extra=0)
        monkeypatch.setenv("CONOL_API_BASE", fake.base_url)
        monkeypatch.setenv("CONOL_SESSION_TOKEN", fake.token)
        monkeypatch.setenv("CONOL_SESSION_TOKEN_B", spent)
        monkeypatch.setenv("CONOL_SESSION_TOKEN_C", low)
        code = main(["accounts", "--config", str(TEAM_CONFIG), "--json"])
        reads = {name: account.balance_reads for name, account in fake.accounts.items()}
        sessions = len(fake.sessions)
    out = capsys.readouterr().out
    rows = json.loads(out)
    assert code == 1  # an account is out of credits
    by_id = {row["deployment"]: row for row in rows}
    assert [row["model_name"] for row in rows] == ["chat", "chat", "chat", "reasoning", "fast", "code"]
    assert (by_id["chat-a"]["total"], by_id["chat-a"]["daily"], by_id["chat-a"]["extra"]) == (12.5, 10, 2.5)
    assert by_id["chat-a"]["status"] == "ok"
    assert by_id["chat-b"]["status"] == "out of credits: rests until its refill"
    assert re.search(r"UTC \(in (0 h 59|1 h 00) min\)$", by_id["chat-b"]["next_refill"])  # an hour
    assert by_id["chat-c"]["status"].startswith("low: below min_balance 10")
    assert by_id["chat-b"]["account"].startswith("$CONOL_SESSION_TOKEN_B (")
    # the other names share chat-a's account: one read per account, no session
    assert {by_id[d]["account"] for d in ("#3", "#4", "#5")} == {by_id["chat-a"]["account"]}
    assert reads == {"default": 1, "spent": 1, "low": 1} and sessions == 0
    assert not any(token in out for token in (fake.token, spent, low))


def test_the_text_report_and_a_config_without_a_token(monkeypatch, capsys, tmp_path: Path):
    monkeypatch.delenv("CONOL_SESSION_TOKEN", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("model_list:\n  - model_name: x\n    litellm_params: {model: conol/claude-haiku-4-5}\n")
    assert main(["accounts", "--config", str(config)]) == 1
    assert capsys.readouterr().out.strip() == (
        "model_name=x  deployment=#0  account=$CONOL_SESSION_TOKEN  total=—  daily=—  subscription=—  "
        "extra=—  next_refill=—  status=unknown: no token"
    )
