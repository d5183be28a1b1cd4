"""What the fake saw and sent, for assertions from Python and over ``/_fake/*``.

Times are ``time.time()`` floats so another process on the same machine can compare them with its
own clock. Cookie values are never stored: only whether the cookie was present and matched.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ._codec import loads
from ._drift import Drift, parse_drifts
from ._expected import Expected
from ._steps import TERMINAL_STATUSES

# Request headers worth asserting on (what the client sends about compression, SSE, origin).
RECORDED_HEADERS = (
    "accept",
    "accept-encoding",
    "origin",
    "referer",
    "user-agent",
    "content-type",
    "cache-control",
    "last-event-id",
)
# Event bodies above this are left out of the JSON record unless ``?full=1`` (a ``long`` session is ~50 MB).
EVENT_DATA_LIMIT = 256 * 1024


@dataclass
class RequestRecord:
    time: float
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    cookie_present: bool
    authorized: bool
    body: Any = None
    body_error: str | None = None
    status: int | None = None
    session_id: str | None = None
    scenario: str | None = None
    account: str | None = None  # the account whose token the request carried (never the token)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EventRecord:
    """One emitted SSE event; ``raw`` is exactly the bytes every connection is sent."""

    seq: int
    time: float
    type: str  # history_delta | error | done | done_marker | raw | <other event type>
    raw: bytes

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def payload(self) -> Any:
        """The parsed JSON (parsed on demand: big sessions keep only the bytes); None if not JSON."""
        if not self.raw.startswith(b"data: "):
            return None
        try:
            return loads(self.raw[6:])
        except ValueError:
            return None

    def to_json(self, with_data: bool) -> dict[str, Any]:
        data: dict[str, Any] = {"seq": self.seq, "time": self.time, "type": self.type, "bytes": self.size}
        if with_data or self.size <= EVENT_DATA_LIMIT:
            data["data"] = self.payload if self.type != "raw" else self.raw.decode(errors="replace")
        else:
            data["data"] = None
            data["truncated"] = True
        return data


@dataclass
class StreamClose:
    """A server-side close of the session's streams, at its place in the timeline."""

    time: float
    permanent: bool


@dataclass
class ConnectionRecord:
    index: int
    opened_at: float
    query: dict[str, str]
    headers: dict[str, str]
    closed_at: float | None = None
    # client (disconnected) | server (scenario closed it) | reset | shutdown
    closed_by: str | None = None
    events_sent: int = 0
    pings_sent: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SessionRecord:
    id: str
    created_at: float
    scenario: str
    params: dict[str, str]
    model: str
    effective_model: str
    downgraded: bool
    effort: str
    timezone: str | None
    tools: list[str]
    messages: list[str]
    expected: Expected
    status: str
    turns: int = 1  # turns run on this session (an empty create runs none)
    images: list[str] = field(default_factory=list)  # sha256 of the transcript's images, in order
    model_calls: list[dict[str, Any]] = field(default_factory=list)  # /model bodies, in order
    status_history: list[tuple[float, str]] = field(default_factory=list)
    terminal_at: float | None = None
    status_poll_times: list[float] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    closes: list[float] = field(default_factory=list)
    connections: list[ConnectionRecord] = field(default_factory=list)
    context_usage: dict[str, Any] | None = None  # the last contextUsage sent (FakeConfig.context_usage)
    account: str = "default"  # the account that created it (FakeConol.add_account)

    @property
    def status_polls(self) -> int:
        return len(self.status_poll_times)

    def set_status(self, status: str, now: float) -> None:
        self.status = status
        self.status_history.append((now, status))
        if self.terminal_at is None and status in TERMINAL_STATUSES:
            self.terminal_at = now

    def events_of(self, type_: str) -> list[EventRecord]:
        return [e for e in self.events if e.type == type_]

    @property
    def last_preview_at(self) -> float | None:
        """Send time of the last event carrying a preview snapshot (the 'final snapshot')."""
        for event in reversed(self.events):
            if event.type == "history_delta" and b'"preview":[{' in event.raw:
                return event.time
        return None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "scenario": self.scenario,
            "status": self.status,
            "terminal_at": self.terminal_at,
            "event_count": len(self.events),
            "connection_count": len(self.connections),
            "status_polls": self.status_polls,
        }

    def to_json(self, with_data: bool = False) -> dict[str, Any]:
        return {
            **self.summary(),
            "params": self.params,
            "model": self.model,
            "effective_model": self.effective_model,
            "downgraded": self.downgraded,
            "effort": self.effort,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "timezone": self.timezone,
            "tools": self.tools,
            "messages": self.messages,
            "images": self.images,
            "expected": self.expected.to_json(),
            "status_history": [list(item) for item in self.status_history],
            "status_poll_times": self.status_poll_times,
            "last_preview_at": self.last_preview_at,
            "closes": self.closes,
            "context_usage": self.context_usage,
            "account": self.account,
            "connections": [c.to_json() for c in self.connections],
            "events": [e.to_json(with_data) for e in self.events],
        }


def reading(default: Any, help: str, choices: tuple[str, ...] | None = None) -> Any:
    """A ``FakeConfig`` field that is also a flag of the fake's command line (``_cli.py`` builds the
    flag from it: ``--name-with-dashes``, this default, ``help`` and ``choices``)."""
    return field(default=default, metadata={"help": help, "choices": choices})


@dataclass
class FakeConfig:
    """Server-wide fault injection and knobs; ``POST /_fake/config`` takes any subset as JSON.

    * ``create_status``: every ``POST /api/sessions`` answers this status (``create_fail_times``:
      only the next N creates, then it clears itself). 429 carries ``Retry-After`` (default "2").
    * ``status_fail_every``: status polls 1, 1+N, 1+2N, ... of each session answer
      ``status_fail_status`` (1 = always, 2 = every other call, first one failing).
    * ``refuse_streams``: new SSE connections answer ``refuse_stream_status``.
    * ``revoke_token``: the token is dead: every ``/api`` call answers 401.
    * ``ping_interval``: seconds of stream idleness before a ``: ping`` comment.
    * ``replay_dir``: where ``[[fake:replay file=NAME]]`` looks for recordings (default: the current
      directory); names cannot leave it.
    * ``assets`` (on | absent), ``asset_max_bytes``, ``asset_status``; ``agent_servers`` (list |
      agentServers | servers | data | strings | absent): the readings of ``_assets``.
    * ``create_model``: ``"honour"`` runs the ``agentModel`` create names (one reading,
    docs/protocol.md#readings);
      ``"ignore"`` answers every create ``modelDowngraded`` with the account default until ``/model``
      pins the session (the other).
    * ``followup_status``: ``None`` takes turns on existing sessions (docs/protocol.md#follow-up-turns);
      a status (404, 405, …) refuses every ``POST /api/sessions/{id}/messages`` with it (an upstream
      without them); with ``followup_status_scope="continued"`` only turns on a session that ran a
      turn (a session busy or gone: the first turn of an empty create still goes through).
    * ``followup_replay``: a follow-up's stream replays the earlier turns (``False``: starts at the
      new turn). ``followup_status_lag``: seconds the previous turn's status (terminal, say) stays
      before a follow-up turn starts running. ``followup_garbage``: each follow-up turn starts with
      the earlier stages re-sent with other text, a ``done`` and a junk line.
    * ``followup_stage``: where a follow-up turn's events go (docs/protocol.md#readings): ``"new"``
      (stages of its own, fresh ids) or ``"same"`` (the previous turn's stages: same ids, its user log
      and answer logs after the earlier turns' logs, so cumulative logs hold every turn; the stages'
      previews start empty at the new turn, a preview being the message in flight).
    * ``followup_replayed_end``: what ends each earlier turn in the timeline a follow-up's stream
      replays: ``"none"`` (what the turn sent, nothing added), ``"done"`` (a ``done`` event, unless
      the turn sent one) or ``"error"`` (an ``error`` event and status ``failed``, unless the turn
      sent an error: the turn is recorded as failed after its answer). Placed when the next turn is
      posted, so a session that never gets a follow-up is unchanged.
    * ``followup_previews``: a follow-up turn in the previous turn's stages (``followup_stage="same"``)
      starts with their previews ``"cleared"``, or ``"kept"``: still showing the previous message,
      in the event that brings the new user log too, until the new turn's own snapshot replaces it.
    * ``followup_taken_status``: a follow-up turn's POST answers this 5xx although the turn was
      taken and runs (a gateway that gave up on a busy conol).
    * ``late_events``: what conol writes after a turn's script ended, once the clients that were
      reading it stopped (``late_after`` seconds after the last of them left): ``"note"`` (a
      ``WriteNote`` run), ``"tool_call"`` (a ``WebSearch`` run), ``"answer"`` (a ``WebSearch`` run
      and more answer text, committed). A turn posted meanwhile waits for them, as for any turn
      still playing.
    * ``stageless_turns``: ``"follow-ups"`` or ``"all"`` turns come without stages: their text as
      ``stream_event`` deltas and an ``assistant`` event, no user log (tool calls still in stages).
    * ``first_token_delay``: seconds every turn waits after its user log before its first event.
    * ``user_log_time``: ``"stamped"`` (the user log's preamble names the turn's time, to the
      second) or ``"none"``.
    * ``unknown_asset_status``: what a create or turn naming an unknown asset answers (400, or 404
      as for a gone resource); ``FakeConol.expire_assets`` makes every uploaded asset unknown.
    * ``gone_status``: what a turn on an expired session (``FakeConol.expire_sessions``) answers.
    * ``drift``: comma-separated names of deliberate departures from the spec (``_drift.DRIFTS``),
      e.g. ``"status_word"``; ``None`` (the default) is the faithful server.

    The readings other clients report where sources disagree (docs/protocol.md#readings), one
    switch each so a test can run against every one:

    * ``framing``: how the event stream frames its events: ``"sse"`` (``data: <json>`` and a blank
      line, ``text/event-stream``; the default), ``"ndjson"`` (one bare JSON line each,
      ``application/x-ndjson``) or ``"message"`` (``message<TAB><json>`` lines, ``text/plain``).
    * ``context_usage``: events carry ``contextUsage {usedTokens, contextWindow, modelId}``;
      ``context_model`` makes ``modelId`` name that model (a downgrade only the stream reveals).
    * ``balance``: ``"full"`` (every field of docs/protocol.md#balance; default), ``"total"`` (only
      ``{total}``, the first description's shape) or ``"zero"`` (no credits: every session fails with
      the credit-error preview).
    * ``auth``: how get-session answers: ``"ok"``, ``"dead_401"``, ``"dead_200"`` (200 ``{}``),
      ``"rate_limited"`` (429 with ``Retry-After``) or ``"checkpoint"`` (200 with an HTML page).
    """

    create_status: int | None = None
    create_fail_times: int | None = None
    create_retry_after: str | None = None
    status_fail_every: int = 0
    status_fail_status: int = 500
    refuse_streams: bool = False
    refuse_stream_status: int = 503
    revoke_token: bool = False
    ping_interval: float = 1.0
    drift: str | None = None
    replay_dir: str | None = None
    framing: str = reading("sse", "event stream framing", ("sse", "ndjson", "message"))
    context_usage: bool = reading(False, "events carry contextUsage")
    context_model: str | None = reading(None, "the modelId contextUsage reports")
    balance: str = reading("full", "the balance answer", ("full", "total", "zero"))
    auth: str = reading(
        "ok", "how get-session answers", ("ok", "dead_401", "dead_200", "rate_limited", "checkpoint")
    )
    assets: str = reading("on", "POST /api/assets", ("on", "absent"))
    asset_max_bytes: int = 10 * 1024 * 1024
    asset_status: int | None = None
    agent_servers: str = reading(
        "list",
        "the shape of GET /api/agent-servers (absent: 404)",
        ("list", "agentServers", "servers", "data", "strings", "absent"),
    )
    create_model: str = reading(
        "honour",
        "whether create runs the agentModel it names (ignore: only /model pins it)",
        ("honour", "ignore"),
    )
    followup_status: int | None = reading(
        None, "refuse every follow-up turn with this HTTP status (default: follow-ups work)"
    )
    followup_status_scope: str = "all"
    followup_replay: bool = True
    followup_status_lag: float = 0.3
    followup_garbage: bool = False
    followup_stage: str = reading(
        "new",
        "a follow-up turn's events in new stages or appended to the previous turn's stages",
        ("new", "same"),
    )
    followup_replayed_end: str = reading(
        "none",
        "what ends each earlier turn a follow-up's stream replays: nothing added, done or error",
        ("none", "done", "error"),
    )
    followup_previews: str = reading(
        "cleared",
        "a follow-up turn in the previous turn's stages: their previews cleared, or still showing the "
        "previous message until the new one replaces it",
        ("cleared", "kept"),
    )
    followup_taken_status: int | None = reading(
        None, "answer a follow-up turn's POST with this 5xx although conol took the turn (it runs)"
    )
    late_events: str = reading(
        "none",
        "what conol writes after a turn's end, once its readers left: nothing, a note, a built-in "
        "tool call, or more answer text",
        ("none", "note", "tool_call", "answer"),
    )
    late_after: float = reading(0.2, "seconds after its last reader left that a turn's late_events come")
    stageless_turns: str = reading(
        "none",
        "turns whose events carry no stages (text as stream_event deltas and an assistant event, no "
        "user log): none, follow-up turns, or every turn",
        ("none", "follow-ups", "all"),
    )
    first_token_delay: float = reading(
        0.0, "seconds each turn thinks after its user log before anything else"
    )
    user_log_time: str = reading(
        "stamped",
        "the user log's preamble names the time of the turn, or no time (turns of equal text then "
        "echo equal logs)",
        ("stamped", "none"),
    )
    unknown_asset_status: int = reading(
        400, "what a create or a turn naming an unknown or expired asset answers"
    )
    gone_status: int = 404

    @property
    def drifts(self) -> Drift:
        return Drift(parse_drifts(self.drift))

    def update(self, changes: dict[str, Any]) -> None:
        """Apply a partial update, type-checked field by field (ValueError names the bad key)."""
        types = {f.name: f.type for f in fields(self)}
        for key, value in changes.items():
            if key not in types:
                raise ValueError(f"unknown config key {key!r}; known: {', '.join(types)}")
            if not _fits(str(types[key]), value):
                raise ValueError(f"config {key}={value!r} does not fit type {types[key]}")
            if key == "drift":
                parse_drifts(value)
            choices = CHOICES.get(key)
            if choices and value not in choices:
                raise ValueError(f"config {key}={value!r} must be one of {', '.join(choices)}")
        for key, value in changes.items():
            floats = ("ping_interval", "followup_status_lag", "late_after", "first_token_delay")
            setattr(self, key, float(value) if key in floats else value)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


READINGS = tuple(f for f in fields(FakeConfig) if "help" in f.metadata)
"""The readings other clients report where sources disagree (docs/protocol.md#readings): each a
``FakeConfig`` field and a flag of the command line, in the order of the fields."""
CHOICES: dict[str, tuple[str, ...]] = {
    f.name: f.metadata["choices"] for f in READINGS if f.metadata["choices"]
}


def _fits(annotation: str, value: object) -> bool:
    if value is None:
        return "None" in annotation
    if isinstance(value, bool):
        return annotation.startswith("bool")
    if isinstance(value, int):
        return annotation.startswith(("int", "float"))
    if isinstance(value, float):
        return annotation.startswith("float")
    return isinstance(value, str) and annotation.startswith("str")
