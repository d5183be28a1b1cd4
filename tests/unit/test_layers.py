"""The package's layers hold: the core imports without LiteLLM, httpx or aiohttp, and no module
imports itself back through another (import-linter checks the layer order in `make lint`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "litellm_conol"
BLOCKED = ("litellm", "httpx", "aiohttp")

pytestmark = pytest.mark.timeout(120)

PURITY_PROBE = f"""
import sys, time
for name in {BLOCKED!r}:
    sys.modules[name] = None  # any import of it raises ImportError
started = time.perf_counter()
import litellm_conol.core
elapsed = time.perf_counter() - started
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {BLOCKED!r} and sys.modules[m] is not None)
print(f"{{elapsed:.3f}} {{len(sys.modules)}} {{','.join(loaded)}}")
"""


@pytest.mark.allow_subprocess(
    reason="the purity probe needs a fresh interpreter: this one has litellm imported already"
)
def test_the_core_imports_with_litellm_httpx_and_aiohttp_blocked(capsys: pytest.CaptureFixture[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PURITY_PROBE], capture_output=True, text=True, timeout=100, check=False
    )
    assert result.returncode == 0, result.stderr
    seconds, modules, loaded = [*result.stdout.strip().split(" "), ""][:3]
    assert loaded == ""
    with capsys.disabled():  # reported, not asserted: a wall-clock bound would be flaky
        print(f"\n[import time] litellm_conol.core: {float(seconds) * 1000:.0f} ms, {modules} modules")


def _package_imports() -> dict[str, set[str]]:
    """Module → the package modules it imports (at any level: module, function or TYPE_CHECKING)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                if base.startswith("litellm_conol"):
                    graph[module].add(base)
            elif isinstance(node, ast.Import):
                graph[module].update(a.name for a in node.names if a.name.startswith("litellm_conol"))
    return graph


def _cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path start → … → start over top-level-package edges between different subpackages."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in graph.get(node, ()):
            if nxt == start:
                return [*path, nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def test_no_import_cycle_between_modules() -> None:
    graph = _package_imports()
    # A package's __init__ importing its own private modules is not a cycle of design; collapse
    # each private module onto itself and keep the edges between distinct modules.
    cycles = {}
    for module in graph:
        if module == "litellm_conol" or module.endswith("__init__"):
            continue
        cycle = _cycle_through({m: {d for d in deps if d != m} for m, deps in graph.items()}, module)
        if cycle and not any(step in ("litellm_conol",) or step.count(".") < 2 for step in cycle[1:-1]):
            cycles[module] = cycle
    assert cycles == {}
