"""Where things are: the repository, the tests, the committed recordings."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"  # on the PYTHONPATH of every proxy (support.proxyproc)
RECORDINGS = sorted((TESTS / "fixtures").glob("*.json"))  # the committed replay fixtures
