"""Replaying a recorded conol session (``litellm-conol record``, or a fixture written by hand).

A recording is one JSON object::

    {"format": "litellm-conol-recording/1",
     "create": {"modelDowngraded": false, "effectiveModel": "..."},     # the create answer (optional)
     "timeline": [{"t": 0.12, "line": "data: {...}"},                  # an SSE line as conol sent it
                  {"t": 0.40, "status": "completed"},                  # what a status poll answered
                  {"t": 0.00, "connect": 2}, ...],                     # the client (re)connected
     "expected": {"content": ..., ...}}                                # what a correct client returns

``t`` is seconds since the recording started. The replay sends each line (followed by a blank line,
so it is its own event) and sets each status at its original time; the stream then stays open, as
conol's does. Lines a reconnect received again (conol replays the history on every connection) are
sent once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._scenarios import Scenario, ScenarioContext, ScenarioError
from ._steps import RawLine, SetStatus, Sleep, Step

RECORDING_FORMAT = "litellm-conol-recording/1"


def load_recording(path: str | Path) -> dict[str, Any]:
    """The recording in ``path``; ValueError naming what is wrong with it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read recording {path}: {exc}") from None
    check_recording(data, str(path))
    recording: dict[str, Any] = data
    return recording


def check_recording(data: Any, where: str = "recording") -> None:
    if not isinstance(data, dict) or data.get("format") != RECORDING_FORMAT:
        raise ValueError(f"{where} is not a {RECORDING_FORMAT} recording (no matching 'format')")
    timeline = data.get("timeline")
    if not isinstance(timeline, list) or not all(_is_entry(e) for e in timeline):
        raise ValueError(f"{where}: 'timeline' must be a list of {{t, line|status|connect}} objects")


def _is_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("t"), int | float)
        and any(key in entry for key in ("line", "status", "connect"))
    )


def replay_steps(data: Mapping[str, Any]) -> list[Step]:
    """The recording's timeline as fake steps, with its original timing."""
    steps: list[Step] = []
    now = 0.0
    status: str | None = None
    sent_data = 0  # data lines sent so far: a reconnect's first this-many data lines are its replay
    skip = 0
    for entry in sorted(data["timeline"], key=lambda e: float(e["t"])):
        if "connect" in entry:
            skip = sent_data if entry["connect"] != 1 else 0
            continue
        step = _step(entry, status)
        if step is None:
            continue
        if isinstance(step, RawLine) and step.text.startswith("data:"):
            if skip:
                skip -= 1
                continue
            sent_data += 1
        if isinstance(step, SetStatus):
            status = step.status
        if float(entry["t"]) > now:
            steps.append(Sleep(float(entry["t"]) - now))
            now = float(entry["t"])
        steps.append(step)
    return steps


def _step(entry: Mapping[str, Any], status: str | None) -> Step | None:
    if "line" in entry:
        return RawLine(str(entry["line"]))
    value = entry.get("status")
    # a failed poll (None) or the same answer again changes nothing
    return SetStatus(str(value)) if value is not None and value != status else None


def replay_scenario(recording: str | Path | Mapping[str, Any], name: str = "replay") -> Scenario:
    """A scenario that plays ``recording`` (a path or the loaded object) with its original timing."""
    data = load_recording(recording) if isinstance(recording, str | Path) else recording
    check_recording(data)
    steps = replay_steps(data)
    create = data.get("create") or {}
    return Scenario(
        name,
        steps,
        description=f"replays a recorded session ({len(steps)} steps)",
        downgrade=bool(create.get("modelDowngraded")),
        user_turn=False,  # the recording has conol's own user turn, scrubbed
    )


def replay_file_steps(ctx: ScenarioContext, root: Path) -> list[Step]:
    """``[[fake:replay file=NAME]]``: the recording NAME, under ``root`` (no way out of it)."""
    name = ctx.params.get("file")
    if not name:
        raise ScenarioError("replay needs file=<recording under the fake's replay_dir>")
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise ScenarioError(f"file={name!r} is outside the replay directory")
    try:
        return replay_steps(load_recording(path))
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
