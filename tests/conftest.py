"""Settings for every tier (tests/README.md): no network for LiteLLM's cost map, no conol credentials
from the environment. ``tests/`` is on ``sys.path`` (this file has no package), so ``support`` imports."""

import os
from pathlib import Path

import pytest

# Before anything imports litellm: never fetch the cost map from the network (it stalls for seconds).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.pop("CONOL_SESSION_TOKEN", None)  # tests pass credentials explicitly
os.environ.pop("CONOL_API_BASE", None)

# Fixtures shared by tiers (each documented in its module).
pytest_plugins = ["support.echoes"]

# The longest test files, longest first (seconds of tests on 2 cores under three workers, 2026-12-06:
# 153, 70, 67, 54, 51, 50, 45, 43, 43, 42). pytest-xdist's ``--dist loadfile`` hands out files one at
# a time in collection order when told ``--no-loadscope-reorder`` (``make test`` and noxfile.py do;
# by default it puts the files with most tests first, and these have few): a long file handed out
# last runs alone at the end while the other workers idle. Started first, they end beside short ones.
LONGEST_FIRST = (
    "integration/test_reuse_differential.py",
    "e2e/test_accounts_fleet.py",
    "e2e/test_keepalive_proxy.py",
    "e2e/test_faults_proxy.py",
    "e2e/test_team.py",
    "e2e/test_reuse_proxy.py",
    "integration/test_sdk.py",
    "integration/test_faults_sdk.py",
    "e2e/test_fleet.py",
    "integration/test_reuse_anchor.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of ``LONGEST_FIRST`` first, in its order; the rest as collected (a stable sort keeps
    each file's tests together and in order)."""
    tests = Path(__file__).parent
    if missing := [name for name in LONGEST_FIRST if not (tests / name).is_file()]:
        raise pytest.UsageError(f"tests/conftest.py LONGEST_FIRST names no file: {missing}")
    rank = {tests / name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path, len(rank)))
