"""Wall-clock bounds come from one helper: at least 1 s, scaled by CONOL_TEST_TIME_SCALE."""

from __future__ import annotations

import pytest
from support.timing import bound


def test_no_bound_is_under_one_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONOL_TEST_TIME_SCALE", raising=False)
    assert bound(0.1) == 1.0 and bound(2.5) == 2.5
    monkeypatch.setenv("CONOL_TEST_TIME_SCALE", "0.5")
    assert bound(0.1) == 1.0 and bound(4) == 2.0


def test_the_scale_multiplies_every_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONOL_TEST_TIME_SCALE", "3")
    assert bound(0.1) == 3.0 and bound(5) == 15.0


@pytest.mark.parametrize("raw", ["fast", "0", "-2"])
def test_a_bad_scale_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("CONOL_TEST_TIME_SCALE", raw)
    with pytest.raises(ValueError, match=f"CONOL_TEST_TIME_SCALE must be .*{raw!r}"):
        bound(1)
