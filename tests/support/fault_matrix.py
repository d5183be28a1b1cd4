"""The fault matrix the SDK and proxy fault tests share: each row a fault, what must come out of it, and
how long it may take (through ``support.timing.bound``); the observed outcomes print as one table at the
end of each module (and go to ``$FAULT_MATRIX_REPORT`` when set)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import litellm
import pytest
from litellm.exceptions import MidStreamFallbackError

from litellm_conol.fake import (
    BUILTINS,
    CloseStream,
    Done,
    Preview,
    Scenario,
    SetPings,
    SetStatus,
    Sleep,
    UserTurn,
)

# A session that the server keeps closing while its status stays "running".
CLOSES_FOR_GOOD = Scenario(
    "closes_for_good",
    [Preview("This stream is closed"), Sleep(0.05), CloseStream(permanent=True)],
    description="one snapshot, then every stream of the session is closed at once; status stays running",
)
QUICK = Scenario(
    "quick",
    [Preview("Quick answer."), SetStatus("completed"), Done()],
    description="one snapshot, completed, done: the fastest complete session",
)
# The status says "completed" long before the stream's first event: silence then is no end.
TERMINAL_BEFORE_FIRST_EVENT = Scenario(
    "terminal_before_first_event",
    [SetPings(False), SetStatus("completed"), Sleep(1.5), UserTurn(), Preview("Late, but complete."), Done()],
    description="status completed at once; the first event (user turn, answer, done) only 1.5 s later",
)
EXTRA_SCENARIOS = (CLOSES_FOR_GOOD, QUICK, TERMINAL_BEFORE_FIRST_EVENT)
SCENARIOS = {**BUILTINS, **{s.name: s for s in EXTRA_SCENARIOS}}


@dataclass(frozen=True)
class Row:
    name: str
    text: str
    error: type[Exception] | None  # None: the exact answer of ``answer`` must come out
    status: int | None  # the proxy's HTTP status (or the SSE error's code)
    max_seconds: float
    options: dict[str, Any] = field(default_factory=dict)  # request options (kwargs / body)
    configure: dict[str, Any] = field(default_factory=dict)  # fake.configure(...)
    refused: bool = False  # point at a port nobody listens on
    answer: str | None = None  # BUILTINS name whose final_text is the answer
    message: str = ""  # must appear in the error message


ROWS = [
    Row("401", "[[fake:http_401]]", litellm.AuthenticationError, 401, 3, message="invalid or expired"),
    Row("403", "[[fake:http_403]]", litellm.PermissionDeniedError, 403, 3, message="invalid or expired"),
    Row("429 + Retry-After", "[[fake:http_429]]", litellm.RateLimitError, 429, 3, message="Retry after 2"),
    Row("500", "[[fake:http_500]]", litellm.InternalServerError, 500, 3),
    Row("502 (HTML body)", "[[fake:http_502]]", litellm.BadGatewayError, 502, 3, message="502 Bad Gateway"),
    Row("503", "[[fake:http_503]]", litellm.ServiceUnavailableError, 503, 3),
    Row(
        "2xx create without sessionId",
        "[[fake:bad_create_body]]",
        litellm.BadGatewayError,
        502,
        3,
        message="no session id",
    ),
    Row(
        "connect refused",
        "Hi",
        litellm.ServiceUnavailableError,
        503,
        3,
        refused=True,
        message="could not reach conol",
    ),
    Row(
        "stall before first event",
        "[[fake:stall_before_first seconds=10]]",
        litellm.Timeout,
        408,
        4,
        options={"first_event_timeout": 1},
        message="first_event_timeout",
    ),
    Row(
        "stall mid-answer > idle budget",
        "[[fake:stall_mid seconds=10]]",
        litellm.Timeout,
        408,
        4,
        options={"idle_timeout": 1},
        message="idle_timeout",
    ),
    Row("malformed JSON data line", "[[fake:malformed_line]]", None, 200, 5, answer="malformed_line"),
    Row("huge event (5 MiB snapshot)", "[[fake:huge_event]]", None, 200, 15, answer="huge_event"),
    Row("stream closed early (reconnect)", "[[fake:close_early]]", None, 200, 6, answer="close_early"),
    Row("status endpoint flaky", "[[fake:status_flaky]]", None, 200, 6, answer="status_flaky"),
    Row(
        "status endpoint always 500",
        "[[fake:silence]]",
        litellm.Timeout,
        408,
        6,
        options={"idle_timeout": 1},
        configure={"status_fail_every": 1},
        message="last status: unknown",
    ),
    Row(
        "status never terminal",
        "[[fake:never_terminal]]",
        litellm.Timeout,
        408,
        5,
        options={"timeout": 2},
        message="still running after the 2 s timeout",
    ),
    Row(
        "error event", "[[fake:error]]", litellm.InternalServerError, 500, 3, message="upstream model crashed"
    ),
    Row("duplicate / out-of-order snapshots", "[[fake:out_of_order]]", None, 200, 5, answer="out_of_order"),
    Row(
        "status terminal before the first event",
        "[[fake:terminal_before_first_event]]",
        None,
        200,
        5,
        answer="terminal_before_first_event",
    ),
    Row(
        "event stream refused (503)",
        "Hi",
        litellm.ServiceUnavailableError,
        503,
        5,
        configure={"refuse_streams": True},
        message="max_reconnects",
    ),
    Row(
        "stream closed for good while running",
        "[[fake:closes_for_good]]",
        litellm.BadGatewayError,
        502,
        5,
        message="max_reconnects",
    ),
]
ROW_IDS = [row.name for row in ROWS]

OBSERVED: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module", autouse=True)
def report_matrix():
    yield
    if not OBSERVED:
        return
    paths = ["SDK", "SDK stream", "proxy", "proxy stream"]
    lines = ["| row | " + " | ".join(paths) + " |", "|---|" + "---|" * len(paths)]
    for row in ROWS:
        cells = [OBSERVED.get((row.name, path), "") for path in paths]
        lines.append(f"| {row.name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print("\n\nFault matrix (observed):\n" + table)
    target = os.environ.get("FAULT_MATRIX_REPORT")
    if target:
        with open(target, "w", encoding="utf-8") as out:
            out.write(table + "\n")


def matches(exc: BaseException, expected: type[Exception]) -> bool:
    # After the first chunk LiteLLM wraps a provider error in MidStreamFallbackError (for every
    # provider), keeping the original exception and its status code.
    if isinstance(exc, MidStreamFallbackError) and not isinstance(expected, MidStreamFallbackError):
        return isinstance(exc.original_exception, expected)
    return isinstance(exc, expected)


def outcome_name(exc: BaseException) -> str:
    if isinstance(exc, MidStreamFallbackError) and exc.original_exception is not None:
        return f"MidStreamFallbackError({type(exc.original_exception).__name__})"
    return type(exc).__name__
