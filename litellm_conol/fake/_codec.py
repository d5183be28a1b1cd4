"""JSON encoding for the fake: orjson when installed (each event is serialized exactly once), else json."""

from __future__ import annotations

import json
from typing import Any

try:
    from orjson import dumps as _orjson_dumps
    from orjson import loads as _orjson_loads

    HAVE_ORJSON = True
except ImportError:  # pragma: no cover - orjson is optional
    HAVE_ORJSON = False


def dumps(obj: object) -> bytes:
    """Compact UTF-8 JSON (non-ASCII kept raw, like the real service)."""
    if HAVE_ORJSON:
        return _orjson_dumps(obj)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def loads(data: bytes | str) -> Any:
    if HAVE_ORJSON:
        return _orjson_loads(data)
    return json.loads(data)


def sse_data(obj: object) -> bytes:
    """One SSE event carrying ``obj`` as its ``data:`` line."""
    return b"data: " + dumps(obj) + b"\n\n"
