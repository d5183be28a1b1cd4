"""The recorded request pairs (``tests/fixtures/request_pairs``, README there): their long strings
put back, and every request's messages as our handler got them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "request_pairs"


def expand(value: Any, strings: list[str]) -> Any:
    """A fixture value with its long strings put back (stored once, as ``{"$string": n}``)."""
    if isinstance(value, dict):
        if set(value) == {"$string"}:
            return strings[value["$string"]]
        return {k: expand(v, strings) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, strings) for v in value]
    return value


def handler_messages() -> list[tuple[str, list[dict[str, Any]]]]:
    """``(file stem-request index, the messages our handler got)`` of every recorded request."""
    out = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        parts = [expand(p, data["strings"]) for p in data["parts"]]
        for index, request in enumerate(data["requests"]):
            out.append((f"{path.stem}-{index}", [parts[i] for i in request["handler"]]))
    return out
