"""The rules docs/development.md states about clocks and the core, read from the code (ast, no imports).

* The core reads no clock, opens no socket, starts no process or thread, keeps no mutable module state
  and reads no file and no environment variable, except where ``CORE_READS`` says: the environment
  in the two modules that resolve a call's options (a variable is the fallback when a call gives
  none), files in the catalog module (the packaged catalog and the operator's catalog files, each
  read once: its cache), and the bounded memories of ``memo`` (facts derived from an input, kept by
  the input's digest: which schemas are valid, tools converted), which hold a lock because the sync
  API uses them from its background loop's thread.
* Reuse's pure rules (``PURE_REUSE``) touch none of these either.
* Outside the core and the fake, ``CLOCKS`` lists every module that reads a clock, with why; in the
  driver the clock decides when an answer ends, and the core's end policy is handed those times.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "litellm_conol"

CORE_READS = {
    "config/boundary": {"environment"},
    "config/options": {"environment"},
    "models/catalog": {"files", "cache"},
    "memo": {"process"},  # threading.Lock only: the sync API's loop runs on a thread of its own
    "answer/structured": {"cache"},  # VALID_SCHEMAS: the digests of the schemas found valid
    "request/render": {"cache"},  # CONVERTED_TOOLS: a request's tools converted once
}
MEMORIES = ("DigestMemo",)  # a module-level one of these is a cache
PURE_REUSE = ("reuse/fingerprint", "reuse/turns", "reuse/known_failures")
CLOCKS = {
    "client/driver": "when an answer ends: the end policy is given the loop's time at each event",
    "client/assets": "how long an uploaded image is remembered per conversation (an injected clock)",
    "client/discovery": "when the next discovery is due",
    "client/fetch": "the deadline all of a request's image fetches share (image_fetch_timeout)",
    "client/recording": "each recorded event's time since the start, for replay",
    "reuse/failure_guard": "how long a failure is remembered, and the wait for a twin request",
    "reuse/shared_state": "when a memory entry expires, and when a failed Redis is tried again",
    "reuse/store": "until when an upstream that refused follow-ups is left alone",
    "reuse/accounts": "until when an account rests, how old its balance read is, the wait for a fleet's read",
    "provider/metrics": "whether an account is resting now (its rest-until gauge)",
    "ops/accounts": "each account's next refill, shown relative to now",
    "provider/chunks": "the `created` timestamp OpenAI's chunk format carries",
    "provider/response": "the `created` timestamp OpenAI's response format carries",
    "provider/usage_logger": "each usage-log line's time",
    "ops/doctor/report": "each check's duration",
    "ops/doctor/run": "the whole run's budget",
    "ops/doctor/session": "the status polls' deadline",
    "cli": "the doctor report's total time",
}

CLOCK_FUNCTIONS = {"time", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time_ns"}
PROCESS_MODULES = {
    "socket",
    "subprocess",
    "threading",
    "multiprocessing",
    "asyncio",
    "ssl",
    "http",
    "urllib.request",
}
FILE_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "files"}
MUTATORS = {"append", "add", "update", "setdefault", "pop", "clear", "extend", "insert", "remove", "discard"}


def _module(path: Path, below: Path) -> str:
    return path.relative_to(below).with_suffix("").as_posix().removesuffix("/__init__")


def _reads_clock(node: ast.AST) -> bool:
    """``time.monotonic`` (called or handed over), ``datetime.now()``, ``loop.time()``."""
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value
    if isinstance(owner, ast.Name) and owner.id == "time":
        return node.attr in CLOCK_FUNCTIONS
    if node.attr in ("now", "utcnow", "today"):
        return ast.unparse(owner).split(".")[-1] in ("datetime", "date")
    loop = isinstance(owner, ast.Name) and owner.id == "loop"
    loop = loop or (isinstance(owner, ast.Call) and ast.unparse(owner.func).endswith("_event_loop"))
    loop = loop or (isinstance(owner, ast.Call) and ast.unparse(owner.func).endswith("get_running_loop"))
    return node.attr == "time" and loop


def _mutated_module_state(tree: ast.Module) -> bool:
    """A module-level dict, list or set that some code changes, or a ``global`` rebinding."""
    containers = set()
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        made = isinstance(value, ast.Dict | ast.List | ast.Set) or (
            isinstance(value, ast.Call) and ast.unparse(value.func) in ("dict", "list", "set", "defaultdict")
        )
        if made:
            containers |= {t.id for t in targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            changed: ast.expr = node.value
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
        ):
            changed = node.func.value
        else:
            continue
        if isinstance(changed, ast.Name) and changed.id in containers:
            return True
    return False


def what_it_does(source: str) -> set[str]:
    """Which of clock, process (sockets, processes, threads, the event loop), environment, files,
    cache (a memoised function) and state (mutable module state) a module's code touches."""
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if _reads_clock(node):
            found.add("clock")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n in PROCESS_MODULES or n.split(".")[0] in PROCESS_MODULES - {"http"} for n in names):
                found.add("process")
        if isinstance(node, ast.Attribute) and ast.unparse(node) in ("os.environ", "os.getenv"):
            found.add("environment")
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            found |= {"files"} if name in FILE_CALLS else set()
        if isinstance(node, ast.FunctionDef) and any(
            ast.unparse(d).split(".")[-1].split("(")[0] in ("cache", "lru_cache") for d in node.decorator_list
        ):
            found.add("cache")
    if _mutated_module_state(tree):
        found.add("state")
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in MEMORIES:
            found.add("cache")
    return found


CORE = {
    _module(p, PACKAGE / "core"): what_it_does(p.read_text("utf-8")) for p in (PACKAGE / "core").rglob("*.py")
}
OUTSIDE = {
    _module(p, PACKAGE): what_it_does(p.read_text("utf-8"))
    for p in PACKAGE.rglob("*.py")
    if p.relative_to(PACKAGE).parts[0] not in ("core", "fake")
}


def test_the_core_does_only_what_its_rule_allows() -> None:
    assert {module: found for module, found in CORE.items() if found} == CORE_READS


def test_reuses_pure_rules_touch_nothing() -> None:
    assert {module: OUTSIDE[module] for module in PURE_REUSE} == {module: set() for module in PURE_REUSE}


def test_every_module_that_reads_a_clock_is_listed_with_its_reason() -> None:
    assert sorted(module for module, found in OUTSIDE.items() if "clock" in found) == sorted(CLOCKS)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import time\nx = time.monotonic()", {"clock"}),
        ("import time\nf = time.time", {"clock"}),
        ("import datetime as dt\nx = dt.datetime.now(dt.UTC)", {"clock"}),
        ("import asyncio\nx = asyncio.get_running_loop().time()", {"clock", "process"}),
        ("def f(loop):\n    return loop.time()", {"clock"}),
        ("import os\nx = os.environ.get('A')", {"environment"}),
        ("from pathlib import Path\nx = Path('a').read_text()", {"files"}),
        ("from functools import cache\n@cache\ndef f(): pass", {"cache"}),
        ("_seen = {}\ndef f(k):\n    _seen[k] = 1", {"state"}),
        ("_seen: set[str] = set()\ndef f(k):\n    _seen.add(k)", {"state"}),
        ("x = 0\ndef f():\n    global x\n    x = 1", {"state"}),
        ("import socket", {"process"}),
        ("from .memo import DigestMemo\nSEEN: DigestMemo[bool] = DigestMemo(size=8)", {"cache"}),
        ("TABLE = {'a': 1}\ndef f():\n    return TABLE['a']", set()),
        ("from time import strftime\nimport os\nx = os.pathsep", set()),
    ],
)
def test_the_reader_sees_each_kind(source: str, expected: set[str]) -> None:
    assert what_it_does(source) == expected
