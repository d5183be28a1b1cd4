"""Client-side limit scenarios: a stop sequence split across snapshots, a long writer for max_tokens."""

from __future__ import annotations

from .._scenarios import Scenario, ScenarioContext
from .._steps import Sleep, Step, snapshots
from ._common import commit_then_complete, long_text

STOP_SEQUENCE = "[END]"
STOP_SPLIT_ANSWER = "The password is swordfish."
STOP_SPLIT_TEXT = (
    STOP_SPLIT_ANSWER
    + STOP_SEQUENCE
    + " Everything after the stop marker is text nobody should see, and the agent keeps writing it"
    + " for another second, ten snapshots in all, before it commits the message and completes."
)


def _stop_split() -> list[Step]:
    marker = STOP_SPLIT_TEXT.index(STOP_SEQUENCE)
    # the stop sequence straddles the 2nd and 3rd snapshots ("…swordfish.[E" | "ND] Every…");
    # then ten more snapshots 0.1 s apart: a client that waits for the end waits a second for nothing
    rest = len(STOP_SPLIT_TEXT) - marker - 20
    cuts = [STOP_SPLIT_TEXT.index("sword"), marker + 2, *(marker + 20 + rest * i // 10 for i in range(10))]
    answer = snapshots(STOP_SPLIT_TEXT, 0, 0.1, cuts=cuts)
    return [Sleep(0.03), *answer, *commit_then_complete(STOP_SPLIT_TEXT)]


def _long_writer(ctx: ScenarioContext) -> list[Step]:
    text = long_text(ctx.param_int("chars", 20000, minimum=1))
    n = ctx.param_int("snapshots", 40, minimum=1)
    answer = snapshots(text, n, ctx.param_float("delay", 0.03))
    return [Sleep(0.03), *answer, *commit_then_complete(text, 0.3)]


def limit_scenarios() -> list[Scenario]:
    return [
        Scenario(
            "stop_split",
            _stop_split(),
            description=f"{STOP_SPLIT_TEXT!r} as 13 snapshots 0.1 s apart, the stop sequence "
            f"{STOP_SEQUENCE!r} split across the 2nd and 3rd; committed; completed 0.5 s after the last. "
            f"With stop={STOP_SEQUENCE!r} a correct client answers {STOP_SPLIT_ANSWER!r} "
            "(finish_reason 'stop') and closes the stream after the 3rd snapshot",
        ),
        Scenario(
            "long_writer",
            _long_writer,
            description="params chars=20000 snapshots=40 delay=0.03: long_text(chars) as N snapshots "
            "(1.2 s of writing by default), committed, completed 0.3 s later. With max_tokens=M a "
            "correct client answers the longest prefix of long_text(chars) that is at most M tokens "
            "by LiteLLM's token counter for the model (finish_reason 'length') and closes the stream "
            "as soon as a snapshot passes M tokens",
            preview_mode="changed",
        ),
    ]
