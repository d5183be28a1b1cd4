"""The one model and request builders every tier uses."""

from __future__ import annotations

from typing import Any

MODEL = "conol/claude-haiku-4-5"


def user(text: str) -> list[dict[str, Any]]:
    """One user turn: the ``messages`` of a request."""
    return [{"role": "user", "content": text}]


def ask(text: str, **extra: Any) -> dict[str, Any]:
    """A chat request to ``MODEL`` (``extra`` adds or overrides fields, e.g. ``model=``, ``tools=``)."""
    return {"model": MODEL, "messages": user(text), **extra}
