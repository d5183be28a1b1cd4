"""Small modules and small functions: no module of the package or the benchmark over 400 lines, no
function over 60. A pure data table may be longer; it goes in ALLOWED with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("litellm_conol", "bench")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# "path" or "path:function" → why it may be longer. Keep it short, and only for data.
ALLOWED: dict[str, str] = {}


def _sources() -> list[Path]:
    return sorted(path for folder in CHECKED for path in (ROOT / folder).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", _sources(), ids=_name)
def test_module_and_its_functions_are_small(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    too_long = []
    lines = source.count("\n")
    if lines > MAX_MODULE_LINES and _name(path) not in ALLOWED:
        too_long.append(f"module: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES and f"{_name(path)}:{node.name}" not in ALLOWED:
                too_long.append(f"{node.name}: {length} lines (line {node.lineno})")
    assert too_long == []


def test_every_allowance_is_still_needed() -> None:
    present = {_name(path) for path in _sources()}
    assert sorted(key for key in ALLOWED if key.partition(":")[0] not in present) == []
