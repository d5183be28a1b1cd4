"""Builders for conol events as plain data, for the core's unit tests."""

from __future__ import annotations

import json
from typing import Any

from litellm_conol.core.protocol.wire import ConolEvent, parse_event


def delta(*stages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "history_delta", "stages": list(stages)}


def stage(
    sid: str = "stg_1",
    *,
    preview: list[dict[str, Any]] | None = None,
    logs: list[dict[str, Any]] | None = None,
):
    return {"id": sid, "preview": preview or [], "logs": logs or []}


def msg(text: str | list[dict[str, str]], kind: str = "message") -> dict[str, Any]:
    return {"role": "assistant", "type": kind, "content": text}


def user_log(text: str = "hi") -> dict[str, Any]:
    return {
        "role": "user",
        "type": "message",
        "content": f"<system-reminder>conol preamble</system-reminder>\n{text}",
    }


def tool_log(name: str, input: dict[str, Any], result: str | None = None) -> dict[str, Any]:
    use: dict[str, Any] = {"name": name, "type": "tool_call", "input": input}
    if result is not None:
        use["result"] = [{"text": result}]
    return {"role": "assistant", "type": "tool_call", "content": [use]}


def parsed(*events: dict[str, Any] | str) -> list[ConolEvent]:
    out = []
    for ev in events:
        e = parse_event(ev if isinstance(ev, str) else json.dumps(ev))
        if e is not None:
            out.append(e)
    return out


def snapshots(text: str, n: int) -> list[dict[str, Any]]:
    """`text` as `n` cumulative snapshots of one message preview."""
    cuts = [max(1, len(text) * (i + 1) // n) for i in range(n)]
    return [delta(stage(preview=[msg(text[:c])])) for c in cuts]
