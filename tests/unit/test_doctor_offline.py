"""``litellm-conol doctor`` without a server: every drift is covered by a check that can fail, and a
missing token is a usage error."""

from __future__ import annotations

import pytest

from litellm_conol import cli
from litellm_conol.fake._drift import DRIFTS

pytestmark = pytest.mark.timeout(60)


SESSION_CHECKS = ["token", "balance", "create", "stream", "previews", "status", "tool_call"]


# drift → (failed checks, skipped checks); every other check passes
DRIFT_EFFECTS: dict[str, tuple[set[str], set[str]]] = {
    "auth_wrapped": ({"token"}, set()),
    "balance_renamed": ({"balance"}, set()),
    "id_renamed": ({"create", "tool_call"}, {"stream", "previews", "status"}),
    "event_renamed": ({"stream", "tool_call"}, {"previews"}),
    "preview_renamed": ({"previews"}, set()),
    "tool_renamed": ({"tool_call"}, set()),
    "status_word": ({"status"}, set()),
    "status_wrapped": ({"status"}, set()),
}


def test_every_drift_is_covered_and_every_check_can_fail():
    covered = set(DRIFT_EFFECTS) | {"downgrade_renamed"}  # the model checks: the next test
    assert covered == set(DRIFTS)
    assert set().union(*(failed for failed, _ in DRIFT_EFFECTS.values())) == set(SESSION_CHECKS)


def test_no_token_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.delenv("CONOL_SESSION_TOKEN", raising=False)
    assert cli.main(["doctor"]) == 2
    assert "no token (set CONOL_SESSION_TOKEN or pass --token)" in capsys.readouterr().err
