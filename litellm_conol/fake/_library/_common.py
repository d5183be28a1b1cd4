"""Building blocks the themed scenario modules share: thinking and answer snapshots, endings, filler."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from .._scenarios import ScenarioContext, ScenarioError
from .._steps import CommitMessage, SetStatus, Sleep, Step, snapshots


def think(text: str, n: int = 3, stage: str = "main", kind: str = "thinking") -> list[Step]:
    return snapshots(text, n, 0.03, kind=kind, stage=stage)


def say(text: str, n: int = 6, stage: str = "main") -> list[Step]:
    return snapshots(text, n, 0.02, stage=stage)


def complete_after(seconds: float, status: str = "completed") -> list[Step]:
    return [Sleep(seconds), SetStatus(status)]


def commit_then_complete(text: str, after_last: float = 0.5, stage: str = "main") -> list[Step]:
    """Commit the message 20 ms after the last snapshot; status terminal ``after_last`` s after it."""
    return [Sleep(0.02), CommitMessage(text, stage=stage), *complete_after(after_last - 0.02)]


@lru_cache(maxsize=8)
def long_text(chars: int) -> str:
    """Deterministic filler of exactly ``chars`` characters (numbered lines, so diffs are readable)."""
    lines: list[str] = []
    total = 0
    while total < chars:
        line = f"Line {len(lines):06d}: the quick brown fox jumps over the lazy dog.\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:chars]


def json_param(ctx: ScenarioContext, name: str, default: Mapping[str, Any]) -> Any:
    """A JSON value from ``name=`` (percent-encoded where it needs spaces or brackets)."""
    raw = ctx.params.get(name)
    if raw is None:
        return dict(default)
    try:
        return json.loads(unquote(raw))
    except json.JSONDecodeError:
        raise ScenarioError(f"parameter {name}={raw!r} is not JSON") from None
