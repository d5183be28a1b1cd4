"""``litellm-conol doctor`` without a server: every drift is covered by a check that can fail, and a
missing token is a usage error."""

from __future__ import annotations

import pytest
from support.doctor import DRIFT_EFFECTS, SESSION_CHECKS

from litellm_conol import cli
from litellm_conol.fake._drift import DRIFTS

pytestmark = pytest.mark.timeout(60)


def test_every_drift_is_covered_and_every_check_can_fail():
    covered = set(DRIFT_EFFECTS) | {"downgrade_renamed"}  # the model checks: the next test
    assert covered == set(DRIFTS)
    assert set().union(*(failed for failed, _ in DRIFT_EFFECTS.values())) == set(SESSION_CHECKS)


def test_no_token_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.delenv("CONOL_SESSION_TOKEN", raising=False)
    assert cli.main(["doctor"]) == 2
    assert "no token (set CONOL_SESSION_TOKEN or pass --token)" in capsys.readouterr().err
