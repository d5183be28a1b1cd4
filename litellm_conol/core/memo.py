"""Work done once per distinct input: a digest of a plain JSON value, and a bounded memory of what
was worked out for each digest.

Agents resend the same tools and the same history with every request; what we derive from them
(a schema's validity, a message's token count) cannot change while they do not.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Generic, TypeVar

V = TypeVar("V")
_SCALARS = (str, int, float, bool, type(None))


def json_digest(value: Any) -> str | None:
    """The SHA-256 of ``value`` as canonical JSON (sorted keys, no spaces); ``None`` when ``value``
    is not plain JSON (a tuple, a subclass, an object, a value nested deeper than Python recurses):
    JSON would write some of those as another value's text, so they are never remembered."""
    try:
        if not _plain_json(value):
            return None
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (RecursionError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _plain_json(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if kind is list:
        return all(_plain_json(item) for item in value)
    return kind in _SCALARS


class DigestMemo(Generic[V]):
    """What was worked out for the last ``size`` digests used (the least recently used go first).
    Safe across threads: the sync entry points run on a background loop's thread."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, digest: str) -> V | None:
        with self._lock:
            value = self._values.get(digest)
            if value is not None:
                self._values.move_to_end(digest)
            return value

    def put(self, digest: str, value: V) -> None:
        with self._lock:
            self._values[digest] = value
            self._values.move_to_end(digest)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)
