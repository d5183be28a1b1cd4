"""A faithful local conol.ai (the protocol as docs/upstream-variants.md describes it), awkward parts included.

Run it::

    with FakeConol() as fake:                      # background thread; sync or async clients
        client(base_url=fake.base_url, token=fake.token)
    async with FakeConol() as fake: ...            # on the running loop (async clients only)
    litellm-conol fake --port 8787 [--host 127.0.0.1] [--token T]   # or python -m litellm_conol.fake
    # both take the same flags (``add_fake_arguments``); only the default port differs (8765 / 0)
    # pytest: the ``conol_fake`` / ``conol_fake_session`` fixtures (litellm_conol.pytest_plugin)

Protocol: cookie ``__Secure-better-auth.session_token=<token>`` on every ``/api`` call (else 401
``{"error": "Unauthorized"}``); ``GET /api/auth/get-session``; ``GET /api/billing/balance`` ->
``{"total": 12.5}``; ``POST /api/sessions`` (body validated, 400 ``{"error": ...}``) -> 201
``{"sessionId", "modelDowngraded", "effectiveModel", "premiumEligible"}`` (any ``agentModel`` is
accepted; one outside ``KNOWN_MODELS`` runs as ``DOWNGRADE_MODEL``); ``GET /api/sessions/<id>`` ->
``{"id", "status", ...}``; ``GET /api/sessions/<id>/messages`` -> ``text/event-stream``, never
compressed, ``: ping`` after each ``ping_interval`` (1 s) of idleness. The stream does NOT close
when the agent finishes unless the scenario says so. Every connection first replays everything the
session emitted (its timeline runs from creation, whoever is connected), then follows live.

Scenario selection: the LAST ``[[fake:NAME key=value ...]]`` found in the message texts (values
have no spaces or ``]``); no marker -> the default scenario (``hello``); unknown name or bad
parameter -> 400 naming the known scenarios / the parameter.

Readings of the event format. The spec leaves these open; scenarios mix them (``Scenario`` doc):

* a stage carries at most one preview entry per ``type``; clients must key snapshots by
  ``(stage id, type)``, not by list index (with ``preview_mode="changed"`` the list holds only the
  entry that changed). ``content`` is a string or a list of text parts to concatenate.
* ``log_mode="once"``: each log entry is sent in exactly one event; ``"cumulative"``: every later
  event of that stage repeats all its logs (the user turn, tool calls, the committed message).
* ``stage_mode="all"`` (``multi_stage`` only): every event carries every stage so far.
* the user turn is the first log of the first stage, in the first event, alone.
* the answer is, per stage in order of first appearance, the committed ``message`` log if any,
  else the stage's last message snapshot; stages are concatenated with no separator.
  ``expected_from_steps`` is this reading and gives every scenario's ``final_text`` etc.
* tool calls repeat (same stage or another); dedupe by ``(name, canonical input)``. Client tool
  calls (not ``BUILTIN_TOOLS``) end the turn: the agent then waits with status ``running``.

Per-scenario modes (L = logs once/cumulative, P = previews all/changed):
hello L=cum P=all; done L=once P=chg (status pending first); done_marker L=cum; early_terminal
P=chg; committed_tail, unicode, tool_call_twice, builtin_websearch L=cum; multi_stage L=cum
stages=all; parts, multi_tool omit empty keys; long, silence, out_of_order P=chg; the rest
L=once P=all. ``fake.scenarios[name].description`` (and ``GET /_fake/scenarios``) says what each does.

Images and discovery (docs/protocol.md#assets, #discovery; ``_assets``): ``POST /api/assets`` (raw ``image/*``
bytes) -> 201 ``{id, url, mediaType}``; a create part ``{"type": "image", "content": "/api/assets/<id>",
"mediaType"}`` must name an uploaded asset (else 400); ``GET /api/agent-servers`` -> the servers' agents,
models, ``inputModalities`` and ``efforts``. Switches: ``assets``, ``asset_max_bytes``, ``asset_status``,
``agent_servers`` (``FakeConfig``); ``fake.assets`` lists the uploads.

Records (``fake.requests`` / ``fake.sessions`` / ``fake.last_session`` and ``GET /_fake/requests``,
``/_fake/sessions``, ``/_fake/sessions/<id>[?full=1]``) use ``time.time()``; cookie values are never
stored. Faults: ``fake.configure(...)`` / ``POST /_fake/config`` (see ``FakeConfig``); ``fake.reset()``
/ ``POST /_fake/reset`` restores everything and drops records and sessions (their streams end).
"""

from __future__ import annotations

from ._assets import AGENT_SERVER_KEY, EXTRA_MODELS, StoredAsset
from ._catalog import DOWNGRADE_MODEL, KNOWN_MODELS
from ._cli import COMMAND_PORT, FREE_PORT, add_fake_arguments, fake_command_parser, main, run_from_args
from ._expected import Expected, ExpectedToolCall, expected_from_steps
from ._library import BUILTINS, long_text, tool_result_in
from ._records import ConnectionRecord, EventRecord, FakeConfig, RequestRecord, SessionRecord
from ._replay import RECORDING_FORMAT, load_recording, replay_scenario
from ._runner import DEFAULT_TOKEN, FakeConol, run_forever
from ._scenarios import Scenario, ScenarioContext, ScenarioError, find_marker
from ._server import COOKIE_NAME
from ._steps import (
    BUILTIN_TOOLS,
    REASONING_KINDS,
    TERMINAL_STATUSES,
    CloseStream,
    CommitMessage,
    Done,
    DoneMarker,
    Error,
    Event,
    Log,
    Preview,
    RawLine,
    SetPings,
    SetStatus,
    Sleep,
    Step,
    Together,
    ToolCall,
    UserTurn,
    snapshots,
    tool_call_entry,
)

__all__ = [
    "AGENT_SERVER_KEY",
    "BUILTINS",
    "BUILTIN_TOOLS",
    "COMMAND_PORT",
    "COOKIE_NAME",
    "DEFAULT_TOKEN",
    "DOWNGRADE_MODEL",
    "EXTRA_MODELS",
    "FREE_PORT",
    "KNOWN_MODELS",
    "REASONING_KINDS",
    "RECORDING_FORMAT",
    "TERMINAL_STATUSES",
    "CloseStream",
    "CommitMessage",
    "ConnectionRecord",
    "Done",
    "DoneMarker",
    "Error",
    "Event",
    "EventRecord",
    "Expected",
    "ExpectedToolCall",
    "FakeConfig",
    "FakeConol",
    "Log",
    "Preview",
    "RawLine",
    "RequestRecord",
    "Scenario",
    "ScenarioContext",
    "ScenarioError",
    "SessionRecord",
    "SetPings",
    "SetStatus",
    "Sleep",
    "Step",
    "StoredAsset",
    "Together",
    "ToolCall",
    "UserTurn",
    "add_fake_arguments",
    "expected_from_steps",
    "fake_command_parser",
    "find_marker",
    "load_recording",
    "long_text",
    "main",
    "replay_scenario",
    "run_forever",
    "run_from_args",
    "snapshots",
    "tool_call_entry",
    "tool_result_in",
]
