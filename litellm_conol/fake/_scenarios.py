"""Scenarios: a name plus a timeline of steps, selected per request by a ``[[fake:NAME k=v]]`` marker."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeAlias, TypeVar

from ._expected import Expected, ExpectedToolCall, Outcome, expected_from_steps
from ._steps import STAGE_STEPS, Step, UserTurn
from ._steps import flatten as _flatten

LogMode: TypeAlias = Literal["once", "cumulative"]
PreviewMode: TypeAlias = Literal["all", "changed"]
StageMode: TypeAlias = Literal["changed", "all"]
IdKey: TypeAlias = Literal["sessionId", "id", "session.id"]


class ScenarioError(ValueError):
    """A request selected a scenario that does not exist or gave it bad parameters (HTTP 400)."""


@dataclass(frozen=True)
class ScenarioContext:
    """What a scenario may look at: the received create body, parsed, and the marker's parameters.
    ``messages`` are the transcript's text parts, ``images`` the sha256 of each of its images (the
    uploaded bytes), both in order; on a follow-up turn, the session's whole transcript. ``turn``: 1 for
    a session's first turn, n for its n-th (a follow-up on a session that ran n - 1)."""

    messages: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    params: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[str, ...] = ()
    model: str = "deepseek/deepseek-v4-pro"
    effort: str = "low"
    timezone: str | None = None
    turn: int = 1

    def param_int(self, name: str, default: int, minimum: int = 0) -> int:
        return _checked(name, self.params.get(name), default, int, minimum)

    def param_float(self, name: str, default: float, minimum: float = 0.0) -> float:
        return _checked(name, self.params.get(name), default, float, minimum)

    def param_bool(self, name: str, default: bool) -> bool:
        raw = self.params.get(name)
        if raw is None:
            return default
        if raw.lower() in {"1", "true", "yes", "on"}:
            return True
        if raw.lower() in {"0", "false", "no", "off"}:
            return False
        raise ScenarioError(f"parameter {name}={raw!r} is not a boolean")

    def param_choice(self, name: str, default: str, choices: Sequence[str]) -> str:
        raw = self.params.get(name, default)
        if raw not in choices:
            raise ScenarioError(f"parameter {name}={raw!r} must be one of {', '.join(choices)}")
        return raw


N = TypeVar("N", int, float)


def _checked(name: str, raw: str | None, default: N, kind: type[N], minimum: N) -> N:
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ScenarioError(f"parameter {name}={raw!r} is not a {kind.__name__}") from None
    if value < minimum:
        raise ScenarioError(f"parameter {name}={raw!r} must be >= {minimum}")
    return value


MARKER_RE = re.compile(r"\[\[fake:([A-Za-z0-9_.-]+)((?:\s+[A-Za-z0-9_.-]+=[^\s\]]*)*)\s*\]\]")


def find_marker(texts: Sequence[str]) -> tuple[str, dict[str, str]] | None:
    """The LAST ``[[fake:NAME key=value ...]]`` in ``texts`` (a later message overrides an earlier one)."""
    found: tuple[str, dict[str, str]] | None = None
    for text in texts:
        for match in MARKER_RE.finditer(text):
            params = dict(pair.split("=", 1) for pair in match.group(2).split())
            found = (match.group(1), params)
    return found


# --------------------------------------------------------------------------------------------- scenario
StepsOrBuilder: TypeAlias = Sequence[Step] | Callable[[ScenarioContext], Sequence[Step]]


@dataclass(frozen=True, eq=False)
class Scenario:
    """A named, deterministic session timeline plus how the create call answers.

    ``steps`` is a list, or a function of the ``ScenarioContext`` for prompt-dependent scenarios.

    Readings of the event format (docs/protocol.md#stream leaves them open; mix them so clients stay
    tolerant):
      * ``log_mode``: ``"once"`` sends each log entry in one event only; ``"cumulative"`` repeats all
        of the stage's logs (user turn included) in every later event of that stage.
      * ``preview_mode``: ``"all"`` repeats every preview entry of the stage (thinking and message)
        in each event; ``"changed"`` sends only the entry that changed.
      * ``stage_mode``: ``"changed"`` sends only the stage(s) that changed; ``"all"`` every stage so far.
      * ``omit_empty``: drop empty ``logs`` / ``preview`` keys instead of sending ``[]``.

    Create answer: ``create_status`` (non-2xx: no session is created) with ``create_body`` (a dict,
    or a str sent as text/html) and ``create_headers``; ``id_key`` names where the session id goes
    (``None``: nowhere, a broken create response). ``downgrade`` forces ``modelDowngraded: true``.
    ``status_flaky``: status polls 1, 3, 5, ... answer 500. ``user_turn=False``: never prepend the
    user turn (a replayed recording carries its own).
    """

    name: str
    steps: StepsOrBuilder
    description: str = ""
    create_status: int = 201
    create_body: Mapping[str, Any] | str | None = None
    create_headers: Mapping[str, str] = field(default_factory=dict)
    id_key: IdKey | None = "sessionId"
    downgrade: bool = False
    initial_status: str = "running"
    status_flaky: bool = False
    log_mode: LogMode = "once"
    preview_mode: PreviewMode = "all"
    stage_mode: StageMode = "changed"
    omit_empty: bool = False
    pings: bool = True
    user_turn: bool = True

    def script(self, ctx: ScenarioContext) -> list[Step]:
        """The steps for one request, with the user turn first unless the scenario places it."""
        steps = list(self.steps(ctx) if callable(self.steps) else self.steps)
        if self.user_turn and not any(isinstance(s, UserTurn) for s in _flatten(steps)):
            # the user turn is the first log of the first stage, whatever the scenario names it
            first = next((s for s in _flatten(steps) if isinstance(s, STAGE_STEPS)), None)
            steps.insert(0, UserTurn(first.stage if first is not None else "main"))
        return steps

    @property
    def creates_session(self) -> bool:
        return 200 <= self.create_status < 300 and self.id_key is not None

    def expected(self, ctx: ScenarioContext) -> Expected:
        steps = self.script(ctx) if self.creates_session else []
        return expected_from_steps(steps, http_status=self.create_status, has_id=self.id_key is not None)

    def expected_for(
        self, *messages: str, tools: Sequence[str] = ("get_weather",), **params: object
    ) -> Expected:
        """Expectations for a request whose message parts are ``messages`` (markers in them count)."""
        marker = find_marker(messages)
        merged = {**(marker[1] if marker else {}), **{k: str(v) for k, v in params.items()}}
        return self.expected(ScenarioContext(messages=messages, params=merged, tools=tuple(tools)))

    @cached_property
    def default_expected(self) -> Expected:
        """For a request whose only message is the bare marker ``[[fake:NAME]]``."""
        return self.expected_for(f"[[fake:{self.name}]]")

    @property
    def final_text(self) -> str:
        return self.default_expected.final_text

    @property
    def final_reasoning(self) -> str:
        return self.default_expected.final_reasoning

    @property
    def tool_calls(self) -> tuple[ExpectedToolCall, ...]:
        return self.default_expected.tool_calls

    @property
    def content(self) -> str | None:
        return self.default_expected.content

    @property
    def finish_reason(self) -> str | None:
        return self.default_expected.finish_reason

    @property
    def error(self) -> str | None:
        return self.default_expected.error

    @property
    def outcome(self) -> Outcome:
        return self.default_expected.outcome

    def summary(self) -> dict[str, Any]:
        try:
            expected: dict[str, Any] | None = self.default_expected.to_json()
        except ScenarioError:
            expected = None  # it needs parameters (replay file=...): its answer depends on them
        return {
            "name": self.name,
            "description": self.description,
            "create_status": self.create_status,
            "prompt_dependent": callable(self.steps),
            "expected": expected,
        }
