"""Fault scenarios: failing creates, stalls, malformed or huge events, flaky status, stale snapshots."""

from __future__ import annotations

from .._scenarios import Scenario, ScenarioContext
from .._steps import Done, Event, Preview, RawLine, SetPings, SetStatus, Sleep, Step, UserTurn
from ._common import commit_then_complete, complete_after, long_text, say
from ._core import hello_steps

BAD_GATEWAY_HTML = (
    "<html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)


def _http(status: int, body: dict[str, str] | str, **headers: str) -> Scenario:
    return Scenario(
        f"http_{status}",
        [],
        description=f"create answers HTTP {status}; no session is created",
        create_status=status,
        create_body=body,
        create_headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


def _stall_before_first(ctx: ScenarioContext) -> list[Step]:
    seconds = ctx.param_float("seconds", 30.0)
    pings = ctx.param_bool("pings", False)
    return [SetPings(pings), Sleep(seconds), SetPings(True), UserTurn(), *hello_steps()]


def _stall_mid(ctx: ScenarioContext) -> list[Step]:
    text = "This answer starts, then the agent goes quiet for thirty seconds before it finishes."
    answer = say(text)
    return [*answer[:5], Sleep(ctx.param_float("seconds", 30.0)), *answer[5:], *commit_then_complete(text)]


def _malformed_line() -> list[Step]:
    text = "A malformed line arrives mid-stream; a tolerant client skips it and keeps reading."
    answer = say(text)
    return [
        *answer[:5],
        RawLine("data: {not json"),
        Event({"type": "session_title", "title": "Malformed line"}),
        Sleep(0.02),
        *answer[5:],
        *commit_then_complete(text, 0.3),
    ]


def _huge_event(ctx: ScenarioContext) -> list[Step]:
    head = "Here comes a huge answer:\n"
    text = head + long_text(int(ctx.param_float("mb", 5.0, minimum=0.001) * 1024 * 1024))
    return [Preview(head), Sleep(0.02), Preview(text), Sleep(0.05), SetStatus("completed"), Done()]


def _out_of_order() -> list[Step]:
    # a stale snapshot, then a duplicate, then the newest: a client diffing against the previous
    # snapshot instead of what it already emitted would repeat " blue"
    texts = [
        "The",
        "The sky is",
        "The sky is blue",
        "The sky is",
        "The sky is blue",
        "The sky is blue today.",
    ]
    steps: list[Step] = []
    for text in texts:
        steps += [Preview(text), Sleep(0.03)]
    return [*steps, *complete_after(0.4)]


def _create_faults() -> list[Scenario]:
    return [
        _http(401, {"error": "Unauthorized"}),
        _http(403, {"error": "Forbidden"}),
        _http(429, {"error": "Too many requests, slow down"}, Retry_After="2"),
        _http(500, {"error": "Internal Server Error"}),
        _http(502, BAD_GATEWAY_HTML),
        _http(503, {"error": "Service temporarily unavailable"}),
        Scenario(
            "bad_create_body",
            [],
            description="201 whose body has no session id under any key",
            id_key=None,
        ),
    ]


def _session_faults() -> list[Scenario]:
    return [
        Scenario(
            "stall_before_first",
            _stall_before_first,
            description="params seconds=30 pings=0: no events (and no pings unless pings=1) for "
            "`seconds`, then the hello answer",
        ),
        Scenario(
            "stall_mid",
            _stall_mid,
            description="param seconds=30: snapshots 1-3/6, then silence (pings) with status running, "
            "then the rest, committed, completed",
        ),
        Scenario(
            "malformed_line",
            _malformed_line(),
            description="'data: {not json' and an unknown event type mid-stream, then the rest; committed",
        ),
        Scenario(
            "huge_event",
            _huge_event,
            description="param mb=5: a small snapshot then ONE snapshot of >= mb MiB; completed + done",
        ),
        Scenario(
            "status_flaky",
            hello_steps(),
            description="hello, but status polls 1, 3, 5, ... answer HTTP 500",
            status_flaky=True,
        ),
        Scenario(
            "never_terminal",
            [*say("This answer is complete, but the session never says so.", 5)],
            description="answer x5; status stays running forever; no commit, no done",
        ),
        Scenario(
            "out_of_order",
            _out_of_order(),
            description="'The sky is blue' then a stale 'The sky is', a duplicate, then 'The sky is blue "
            "today.'; completed 0.4 s later. previews changed-only",
            preview_mode="changed",
        ),
    ]


def fault_scenarios() -> list[Scenario]:
    return [*_create_faults(), *_session_faults()]
