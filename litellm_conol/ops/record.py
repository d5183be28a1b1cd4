"""``litellm-conol record``: one real session, as conol sent it, to a file the fake conol replays.

The session runs exactly as a chat request does (same transport and driver); the recording keeps
every SSE line and status answer with its time, the create answer's model fields, and what this
client made of it (``expected``). Before anything is written it is scrubbed: the token and the
session id, the user's own turn (conol's ``<system-reminder>`` preamble holds the prompt and may
hold the user's name, email and timezone) and anything shaped like an email address.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx

from ..client.driver import SessionRun
from ..client.recording import RecordingTransport
from ..core.answer.assembler import Assembler
from ..core.errors import ConolError
from ..core.protocol.endpoint import Endpoint
from ..core.protocol.wire import CreateSessionBody

# The format the fake replays (fake/_replay.py has the same constant: the fake imports nothing of
# the package, and nothing here imports the fake; tests/unit/test_recordings.py checks they agree).
RECORDING_FORMAT = "litellm-conol-recording/1"

SCRUBBED_USER_TURN = (
    "<system-reminder>\n[scrubbed by litellm-conol record]\n</system-reminder>\n[prompt scrubbed]"
)
SCRUBBED_EMAIL = "user@example.invalid"
SCRUBBED_SESSION_ID = "ses_recorded"
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


async def record_session(
    endpoint: Endpoint, client: httpx.AsyncClient, body: CreateSessionBody, timeout: float = 120.0
) -> dict[str, Any]:
    """Run one conol session and return its recording, scrubbed of secrets.

    ``endpoint`` says where conol is and holds the session token, ``client`` is the HTTP client to
    use, ``body`` is the session to create. The recording (the format ``load_recording`` reads,
    described in ``litellm_conol.fake``'s replay module) holds every SSE line and status answer with
    its time, and the answer this client made of them (``expected``); the token, the session id, the
    user turn and anything shaped like an email address are scrubbed. Raises ``ConolError`` if no
    session was created; a failure after that is recorded in ``error``. ``litellm-conol record``
    is the way in from the command line.
    """
    transport = RecordingTransport(endpoint, client)
    tools = frozenset(tool.name for tool in body.tools or ())
    run = SessionRun(transport, body, Assembler(client_tools=tools), timeout=timeout)
    error: str | None = None
    try:
        async for _ in run.pieces():
            pass
    except ConolError as exc:
        if run.info is None:
            raise
        error = exc.message  # what went wrong is part of what was recorded
    assembler = run.assembler
    recording: dict[str, Any] = {
        "format": RECORDING_FORMAT,
        "recorded_at": time.strftime("%Y-%m-%d", time.gmtime()),
        "request": {
            "agentModel": body.agent_model,
            "agentEffort": body.agent_effort,
            "tools": sorted(tools),
        },
        "create": (
            {"modelDowngraded": run.info.model_downgraded, "effectiveModel": run.info.effective_model}
            if run.info is not None
            else {}
        ),
        "timeline": [entry for entry in transport.entries if "create" not in entry],
        "ended_by": run.stats.ended_by or None,
        "error": error,
        "expected": {
            "content": None if assembler.tool_calls else assembler.final_text,
            "reasoning": assembler.final_reasoning or None,
            "tool_calls": [
                {"name": c.name, "arguments": json.loads(c.arguments)} for c in assembler.tool_calls
            ],
            "finish_reason": "tool_calls" if assembler.tool_calls else "stop",
        },
    }
    session_id = run.info.session_id if run.info is not None else None
    return scrub(recording, secrets=(endpoint.token,), session_id=session_id)


def scrub(
    recording: dict[str, Any], secrets: tuple[str, ...] = (), session_id: str | None = None
) -> dict[str, Any]:
    """The recording without what is personal: user turns, emails, the token, the session id."""
    timeline = [_scrub_entry(entry) for entry in recording.get("timeline", [])]
    text = json.dumps({**recording, "timeline": timeline}, ensure_ascii=False)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    if session_id:
        text = text.replace(session_id, SCRUBBED_SESSION_ID)
    text = _EMAIL_RE.sub(SCRUBBED_EMAIL, text)
    scrubbed: dict[str, Any] = json.loads(text)
    return scrubbed


def _scrub_entry(entry: dict[str, Any]) -> dict[str, Any]:
    line = entry.get("line")
    if not isinstance(line, str) or not line.startswith("data:"):
        return entry
    try:
        payload = json.loads(line[5:])
    except ValueError:
        return entry
    if not _scrub_user_turns(payload):
        return entry  # unchanged lines keep conol's exact bytes
    return {**entry, "line": "data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":"))}


def _scrub_user_turns(value: Any) -> bool:
    """Blank the content of every user-role entry, wherever it is nested; True if any was found."""
    found = False
    if isinstance(value, dict):
        if value.get("role") == "user" and "content" in value:
            value["content"] = SCRUBBED_USER_TURN
            found = True
        for item in value.values():
            found |= _scrub_user_turns(item)
    elif isinstance(value, list):
        for item in value:
            found |= _scrub_user_turns(item)
    return found
