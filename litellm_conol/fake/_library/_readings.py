"""Scenarios of the event shapes other clients read (docs/protocol.md#stream), each one source's reading:
``stream_event`` deltas with an ``assistant`` final text, ``{"done": true}``, ``windowReset`` in the
middle of an answer, and the credit-error preview. The framing and ``contextUsage`` are not
scenarios but switches of the server (``FakeConfig``): every scenario runs under each."""

from __future__ import annotations

import itertools

from .._scenarios import Scenario
from .._steps import AssistantFinal, ErrorPreview, Event, SetStatus, Sleep, Step, StreamDelta, WindowReset
from ._common import commit_then_complete, complete_after, say, think

CREDIT_ERROR = "Your credit balance is too low to run this request. Add credits or wait for the daily refill."
STREAMED_THINKING = "Deltas, not snapshots: append each one."
STREAMED_TEXT = "This answer arrives as stream_event deltas, then once more whole in an assistant event."
ASSISTANT_TEXT = "The previews stop short of the end; the assistant event carries the whole final text."
RESET_TEXT = "Before the window reset comes this half, and after it the other half follows unchanged."
RESET_SNAPSHOT = "[a summary of the earlier conversation]"
DONE_FLAG_TEXT = 'This session ends with {"done": true}, an event that has no type at all.'


def _pieces(text: str, n: int) -> list[str]:
    cuts = [round(len(text) * i / n) for i in range(n + 1)]
    return [text[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def _stream_events() -> list[Step]:
    steps: list[Step] = [Sleep(0.03)]
    for piece in _pieces(STREAMED_THINKING, 2):
        steps += [StreamDelta(piece, kind="thinking"), Sleep(0.02)]
    for piece in _pieces(STREAMED_TEXT, 5):
        steps += [StreamDelta(piece), Sleep(0.02)]
    return [*steps, AssistantFinal(STREAMED_TEXT, stage="#stream"), *complete_after(0.3)]


def _assistant_final() -> list[Step]:
    cut = ASSISTANT_TEXT.index(";")
    return [*say(ASSISTANT_TEXT[:cut], 3), Sleep(0.05), AssistantFinal(ASSISTANT_TEXT), *complete_after(0.3)]


def _window_reset() -> list[Step]:
    answer = say(RESET_TEXT, 6)
    return [
        *answer[:3],
        Sleep(0.02),
        WindowReset(RESET_SNAPSHOT),
        *answer[3:],
        *commit_then_complete(RESET_TEXT),
    ]


def _done_flag() -> list[Step]:
    # status stays running: only a client that reads {"done": true} ends before its timeout
    return [*think("Say it, then end.", 2), *say(DONE_FLAG_TEXT, 4), Sleep(0.02), Event({"done": True})]


def _credit_error() -> list[Step]:
    return [Sleep(0.05), ErrorPreview(CREDIT_ERROR), Sleep(0.05), SetStatus("stopped")]


NO_CREDITS = Scenario(
    "credit_error",
    _credit_error(),
    description="a preview entry of type error says the credit balance is too low; status stopped",
)


def reading_scenarios() -> list[Scenario]:
    return [
        Scenario(
            "stream_events",
            _stream_events(),
            description="stream_event deltas (thinking, text), then an assistant event: the final text",
        ),
        Scenario(
            "assistant_final",
            _assistant_final(),
            description="previews stop short; an assistant event carries the whole final text",
        ),
        Scenario(
            "window_reset",
            _window_reset(),
            description="mid-answer, a history_delta with windowReset: true carries another snapshot "
            "(one client's reading)",
            log_mode="cumulative",
        ),
        Scenario(
            "done_flag",
            _done_flag(),
            description='ends with {"done": true} (no type) and never a terminal status '
            "(one client's reading)",
            preview_mode="changed",
        ),
        NO_CREDITS,
    ]
