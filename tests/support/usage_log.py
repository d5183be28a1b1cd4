"""Reading the usage log (``CONOL_USAGE_LOG``) a proxy under test writes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from support.timing import bound


def usage_rows(path: Path, count: int) -> list[dict[str, Any]]:
    """The usage log's lines once it has ``count`` of them (callbacks run after the response), or
    what it has when the bound runs out (the caller's assertion then says what is missing)."""
    deadline = time.monotonic() + bound(15)
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        if len(rows) >= count:
            break
        time.sleep(0.1)
    return rows
