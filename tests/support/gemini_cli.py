"""The real Gemini CLI for end-to-end tests: installed once from the npm registry into ``.venv`` (ignored
by git, rebuilt with the environment), and run headless against a proxy.

Without node and npm the tests that need it skip with the reason, except under ``CI=true``, where they
fail (CI has node and npm: a green run must not hide a missing install).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.paths import ROOT
from support.timing import bound

VERSION = "0.61.0"
PACKAGE = f"@google/gemini-cli@{VERSION}"
CACHE = ROOT / ".venv" / "npm" / f"gemini-cli-{VERSION}"
# GOOGLE_GEMINI_BASE_URL alone makes 0.61 pick its "gateway" auth, which -p refuses: the settings select
# the API-key auth (GEMINI_API_KEY: the proxy key); no usage statistics or update checks (no network)
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def gemini_binary() -> Path:
    """The ``gemini`` command of Gemini CLI ``VERSION``, installed on first use (about 15 s from npm's
    cache; ``--ignore-scripts``: its optional native modules are not needed headless)."""
    binary = CACHE / "node_modules" / ".bin" / "gemini"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        _unavailable("node and npm are not installed: Gemini CLI (an npm package) cannot run")
    staging = CACHE.with_name(CACHE.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    command = [str(npm), "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--ignore-scripts"]
    done = subprocess.run(
        [*command, PACKAGE], capture_output=True, text=True, timeout=bound(300), check=False
    )
    if done.returncode != 0:
        _unavailable(f"npm install {PACKAGE} failed: {done.stderr[-2000:]}")
    staging.rename(CACHE)
    return binary


def run_gemini(
    binary: Path, home: Path, base_url: str, key: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``gemini -m conol/claude-haiku-4-5 ARGS`` headless in ``home`` (its HOME and working folder), with
    the two variables a user sets: ``GOOGLE_GEMINI_BASE_URL`` (the proxy) and ``GEMINI_API_KEY``."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(SETTINGS))
    drop = ("GEMINI_", "GOOGLE_", "CLOUD_SHELL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env |= {
        "HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_API_KEY": key,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_CLI_NO_RELAUNCH": "true",  # one node process, not a second one with a larger heap: 2x faster
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [str(binary), "-m", "conol/claude-haiku-4-5", *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=bound(120),
        check=False,
    )
