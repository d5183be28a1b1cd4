"""The core scenarios: plain answers, the ways a session says it finished, closes, silences, event shapes."""

from __future__ import annotations

from .._scenarios import Scenario, ScenarioContext
from .._steps import (
    CloseStream,
    CommitMessage,
    Done,
    DoneMarker,
    Error,
    Event,
    Preview,
    SetStatus,
    Sleep,
    Step,
    snapshots,
)
from ._common import commit_then_complete, complete_after, long_text, say, think
from ._context import from_context

HELLO_THINKING = "The user is greeting me. A short, friendly reply is best."
HELLO_TEXT = "Hello! I am the fake conol agent, running offline. How can I help you today?"


def hello_steps(text: str = HELLO_TEXT) -> list[Step]:
    return [
        Sleep(0.05),
        *think(HELLO_THINKING),
        Sleep(0.03),
        *say(text),
        *commit_then_complete(text),
    ]


def _hello(ctx: ScenarioContext) -> list[Step]:
    """The greeting, unless the session's context calls for a model's answer (``_context``)."""
    return from_context(ctx) or hello_steps()


def _early_terminal() -> list[Step]:
    text = "The status says completed early, but this closing sentence arrives 0.6 seconds later."
    answer = say(text)
    # the final snapshot comes 0.6 s after the status turned terminal, as observed
    # (docs/protocol.md#end-of-answer)
    return [*think("Answer, then finish.", 2), *answer[:-2], SetStatus("completed"), Sleep(0.6), answer[-1]]


def _close_early() -> list[Step]:
    text = "This stream is closed by the server halfway through; a reconnect replays it and sees the rest."
    answer = say(text)
    return [*answer[:5], Sleep(0.2), CloseStream(), Sleep(0.2), *answer[5:], *commit_then_complete(text)]


def _silence() -> list[Step]:
    text = "Part one arrives, then three seconds of silence with only pings, then part two arrives."
    answer = say(text)
    return [*answer[:5], Sleep(3.0), *answer[5:], *commit_then_complete(text)]


def _parts() -> list[Step]:
    first, second = "Parts are lists of text blocks. ", "This answer arrives as two of them."
    return [
        *snapshots("Send the answer as content parts.", 2, 0.03, kind="thinking", as_parts=True),
        Sleep(0.03),
        Preview("Parts are", as_parts=True),
        Sleep(0.02),
        Preview(first, as_parts=True),
        Sleep(0.02),
        Preview((first, "This answer")),
        Sleep(0.02),
        Preview((first, second)),
        Sleep(0.02),
        CommitMessage(first + second, as_parts=True),
        *complete_after(0.4),
    ]


def _multi_stage() -> list[Step]:
    one, two = "Step 1: I looked the fact up.\n\n", "Step 2: the capital of France is Paris."
    return [
        *think("Plan: look the fact up, then answer.\n", 2, stage="s1", kind="plan"),
        *say(one, 3, stage="s1"),
        CommitMessage(one, stage="s1"),
        Sleep(0.05),
        Event({"type": "session_title", "title": "Capital of France"}),  # unknown type: ignore it
        *think("Now write the answer.", 2, stage="s2"),
        *say(two, 4, stage="s2"),
        *commit_then_complete(two, 0.4, stage="s2"),
    ]


def _echo(ctx: ScenarioContext) -> list[Step]:
    text = ctx.messages[-1] if ctx.messages else ""
    return [Sleep(0.03), *say(text, 4), *commit_then_complete(text, 0.3)]


def _long(ctx: ScenarioContext) -> list[Step]:
    text = long_text(ctx.param_int("chars", 2000, minimum=1))
    n = ctx.param_int("snapshots", 20, minimum=1)
    delay = ctx.param_float("delay", 0.01)
    end = ctx.param_choice("end", "done", ("done", "status"))
    steps = [*snapshots(text, n, delay), SetStatus("completed")]
    return [*steps, Done()] if end == "done" else steps


UNICODE_TEXT = (
    "Unicode check: 👨\u200d👩\u200d👧\u200d👦 family, 🇺🇦 flag, cafe\u0301 (combining accent), "
    "你好，世界！ مرحبا بالعالم — שלום עולם, and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢."
)
UNICODE_THINKING = "Проверка: 考虑一下 🤔 — ok."


def _unicode() -> list[Step]:
    t = UNICODE_TEXT
    # cut inside grapheme clusters and scripts: before a ZWJ, between regional indicators, before a
    # combining mark, mid-CJK, mid-RTL, between astral-plane letters
    cuts = [
        t.index("\u200d"),
        t.index("🇺") + 1,
        t.index("\u0301"),
        t.index("世"),
        t.index("بالعالم") + 3,
        t.index("עולם") + 2,
        t.index("𝔫"),
    ]
    return [
        *snapshots(UNICODE_THINKING, 2, 0.03, kind="thinking", cuts=[UNICODE_THINKING.index("一")]),
        *snapshots(t, 0, 0.02, cuts=cuts),
        *commit_then_complete(t, 0.3),
    ]


def _rewrite() -> list[Step]:
    texts = ["The answer", "The answer is 4", "The answer is four", "The answer is four."]
    steps: list[Step] = []
    for text in texts:
        steps += [Preview(text), Sleep(0.03)]
    return [*steps, *complete_after(0.5)]


def _committed_tail() -> list[Step]:
    tail = "The previews stop early, but the committed message carries the whole answer, tail included."
    return [*say(tail[: tail.index(", tail")], 4), Sleep(0.05), CommitMessage(tail), *complete_after(0.3)]


def _finishes() -> list[Scenario]:
    """The ways a session says it has finished: status, done event, [DONE], early or late."""
    return [
        Scenario(
            "hello",
            _hello,
            description="thinking x3, answer x6, committed log, status completed 0.5 s after the last "
            "snapshot; no done; stream stays open. logs cumulative, previews all. As a model would: on a "
            "follow-up turn after tool results, 'The tool returned: R.', and asked for a word it was told "
            "to remember, the word ('OK.' when told); asked to call an offered tool by name, a call of it "
            "with {}",
            log_mode="cumulative",
        ),
        Scenario(
            "done",
            [
                Sleep(0.03),
                SetStatus("running"),
                *think("Answer and say done.", 2),
                *say("Finished, and the stream says so with a done event.", 5),
                Sleep(0.05),
                SetStatus("complete"),
                Done(),
            ],
            description="status pending -> running; answer x5; status 'complete' and a done event "
            "50 ms after the last snapshot; stream stays open. previews changed-only",
            initial_status="pending",
            preview_mode="changed",
        ),
        Scenario(
            "done_marker",
            [
                *say("Finished, and the stream ends with a [DONE] marker.", 4),
                Sleep(0.05),
                SetStatus("done"),
                DoneMarker(),
            ],
            description="answer x4; status 'done' and data: [DONE] 50 ms later; stream stays open",
            log_mode="cumulative",
        ),
        Scenario(
            "early_terminal",
            _early_terminal(),
            description="status completed 0.6 s BEFORE the final snapshot; no commit, no done; stream open",
            preview_mode="changed",
        ),
        Scenario(
            "late_terminal",
            [
                *say("The status turns terminal three seconds after this last snapshot.", 5),
                *complete_after(3.0),
            ],
            description="answer x5; status completed 3 s after the last snapshot; no commit, no done",
        ),
    ]


def _rewrites_and_breaks() -> list[Scenario]:
    """Answers rewritten or completed by the commit, streams closed, silent or failing midway."""
    return [
        Scenario(
            "rewrite",
            _rewrite(),
            description="'The answer is 4' -> 'The answer is four' -> 'The answer is four.' (a rewrite); "
            "status completed 0.5 s later; no commit",
        ),
        Scenario(
            "committed_tail",
            _committed_tail(),
            description="previews stop short; the committed log holds the full text; status completed "
            "0.3 s after the commit. logs cumulative",
            log_mode="cumulative",
        ),
        Scenario(
            "close_after_terminal",
            [
                *say("The server closes this stream right after the status turns terminal.", 5),
                Sleep(0.3),
                SetStatus("completed"),
                CloseStream(permanent=True),
            ],
            description="answer x5; status completed 0.3 s later and the stream closed at once; later "
            "connections get the replay and are closed",
        ),
        Scenario(
            "close_early",
            _close_early(),
            description="snapshots 1-3/6, 0.2 s later the server closes the stream (status running), "
            "0.2 s later 4-6/6; committed; completed 0.5 s after the last snapshot. Reconnects replay",
        ),
        Scenario(
            "silence",
            _silence(),
            description="snapshots 1-3/6, 3 s of pings only, 4-6/6, committed, completed 0.5 s later",
            preview_mode="changed",
        ),
        Scenario(
            "error",
            [
                *think("Try to answer.", 2),
                *say("I will try to answer, but", 3),
                Sleep(0.05),
                Error("agent failed: upstream model crashed"),
                SetStatus("failed"),
            ],
            description="partial text, then an error event and status failed; stream stays open",
        ),
    ]


def _shapes() -> list[Scenario]:
    """Event and create-response shapes: content parts, stages, echo, long text, unicode, id keys."""
    return [
        Scenario(
            "parts",
            _parts(),
            description="previews and commit as [{type:text,text}] lists, last ones with two parts; "
            "empty keys omitted",
            omit_empty=True,
        ),
        Scenario(
            "multi_stage",
            _multi_stage(),
            description="two stages (plan+message, thinking+message), each committed; answer is the "
            "concatenation; every event carries all stages; an unknown event type between",
            log_mode="cumulative",
            stage_mode="all",
        ),
        Scenario(
            "echo",
            _echo,
            description="answers with the exact text of the last message part received (x4, committed, "
            "completed 0.3 s later)",
        ),
        Scenario(
            "long",
            _long,
            description="params chars=2000 snapshots=20 delay=0.01 end=done|status: long_text(chars) as "
            "N snapshots, then status completed (+ done event unless end=status)",
            preview_mode="changed",
        ),
        Scenario(
            "downgrade",
            hello_steps("I am running on the fallback model, as the create response said."),
            description="hello, but the create says modelDowngraded: true",
            downgrade=True,
        ),
        Scenario(
            "unicode",
            _unicode(),
            description="emoji/ZWJ/flags/combining/CJK/RTL/astral text cut inside clusters; committed",
            log_mode="cumulative",
        ),
        Scenario(
            "alt_id",
            hello_steps(),
            description="hello, but the create response carries the id under 'id'",
            id_key="id",
        ),
        Scenario(
            "nested_id",
            hello_steps(),
            description="hello, but the create response carries the id under 'session.id'",
            id_key="session.id",
        ),
    ]


def core_scenarios() -> list[Scenario]:
    return [*_finishes(), *_rewrites_and_breaks(), *_shapes()]
