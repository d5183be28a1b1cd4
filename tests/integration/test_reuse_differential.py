"""Session reuse is an optimisation: for any conversation the answers with reuse on equal those with it
off (docs/session-reuse.md), under the upstream readings and timings listed here, through LiteLLM's SDK.

**What is compared.** Every request of every caller, by label (a label answered in one run and not the
other is a difference): the content, the reasoning, the tool calls (name and arguments), the
finish_reason, the usage (prompt, completion and reasoning tokens and whether conol reported them;
a reported usage by its source alone, since conol counts a continued session's whole context:
docs/session-reuse.md#what-an-answer-reports), the effective model and whether it was downgraded,
and the built-in tool runs. With reuse on a request may first get a retryable error only where a
failure was injected (then once more a ``Timeout`` where a 5xx post left the turn's fate unknown and
the reattach found nothing) or where the stream cannot be read (the fail-safe's 503): it is sent
again, and its final answer is compared. A caller whose request still fails is a difference, never
skipped. Reuse on creates at most one session more than reuse off per injected failure, none more
without one; and ``support.reuse_checks`` holds every request to what the fake saw: callers never
share a session, no session is continued under a history it does not hold, none after a turn POST
answered 5xx, reuse happens for plain turns and for tool results when the previous answer was bound,
and a session is left unbound only for a cause the conversation or the reading explains.

**Readings and timings** (``support.reuse_dx``; each a switch of the fake, a variant of the ``dx``
scenario, or a client option). The nine that meet where a follow-up's turn begins are covered three
at a time, every combination of values of any three in some row: ``late_events``
none/note/tool_call/answer (0.2 s after each turn's readers left), ``followup_replayed_end`` none/done/error,
``followup_stage`` new/same, ``followup_replay`` on/off, the scenario's ``log_mode``
cumulative/once, ``followup_status_lag`` 0/0.3 s, ``first_token_delay`` 0/1.0 s (the client's
``settle_window`` is 0.5 s), ``followup_previews`` cleared/kept, ``user_log_time`` stamped/none.
Nine more are covered in pairs with each other and with those: ``stageless_turns``
none/follow-ups/all, ``framing`` sse/ndjson/message, ``model_pinning`` create/pin/auto, the
scenario's ``stage_mode`` changed/all, ``preview_mode`` all/changed and end (a ``done`` event, or the
status alone), ``create_model`` honour/ignore, ``context_usage`` off/on, ``builtin_tools``
hide/expose. ``support.covering`` builds the rows (deterministic: 36 of them); every conversation
runs under every row, reuse on and off, all at once, each run on a fake of its own (half of the rows
in a second process).

**Conversations** (``support.reuse_conversations``): 2 to 6 turns (the named ``long`` one 8), after a
system prompt or none, from one caller or two with equal histories (``user`` differs: SDK callers),
streamed or not. Turns: short replies ("yes", "ok", "continue"), a turn an earlier one quoted, code
whose indentation matters, images, two user messages at once, the previous turn word for word again
(its tool calls too), a search conol runs itself (with built-in tools exposed, the client stops at it
and the rest of the answer is the next follow-up's tail), weather questions answered with parallel
calls to one tool and identical or different results (``parallel_tool_calls`` false too; the results
followed by a user message or not); edits of earlier messages (a user text, indentation, line endings
and trailing spaces, an image, an assistant answer), cut answers (``stop``, ``max_tokens``), retries of
an answered request, and injected failures with reuse on: a create answering 429 or 500, the bound
session's follow-up answering 429, 500, 404, 409 or 410, a follow-up taken and then answered 500,
sessions gone (404, 410). (After an injected 404 that reads as "no follow-ups here", reuse on stops
pinning too: where create ignores the model, the effective model is then not compared.)

**Examples.** The named conversations (``NAMED``, one test each) plus ``CONOL_DIFF_EXAMPLES``
generated ones (default 2 in CI; ``derandomize``, so CI sees the same ones every time). ``make
reuse-differential`` is the long mode: ``CONOL_DIFF_EXAMPLES=60``. The proxy's three routes:
``tests/e2e/test_reuse_differential_proxy.py``.
"""

from __future__ import annotations

import os

import litellm
import pytest
from hypothesis import HealthCheck, given, settings
from support.covering import covering_array, covers
from support.reuse_conversations import SYSTEM, Conversation, Turn, conversations
from support.reuse_dx import BOUNDARY, FACTORS, Reading
from support.reuse_runs import Outcome, Trace, play_everywhere

import litellm_conol

litellm.suppress_debug_info = True
litellm_conol.register()

READINGS = [Reading(values) for values in covering_array(FACTORS, strength=3, strong=list(BOUNDARY))]
EXAMPLES = int(os.environ.get("CONOL_DIFF_EXAMPLES", "2"))
pytestmark = pytest.mark.timeout(3600)  # shrinking a failure takes long; a passing run takes minutes


@pytest.fixture(autouse=True)
def _no_failure_memory(monkeypatch):
    # a conversation repeats its requests on every row and in retries: the failure memory is tested elsewhere
    monkeypatch.setenv("CONOL_FAILURE_MEMORY_SECONDS", "0")


def test_the_readings_cover_every_three_boundary_readings_and_every_pair():
    assert len(READINGS) == 36
    assert covers(FACTORS, [r.values for r in READINGS], strength=3, strong=list(BOUNDARY))


def differences(on: Trace, off: Trace) -> list[str]:
    found = [f"reuse on: {p}" for p in on.problems] + [f"reuse off: {p}" for p in off.problems]
    for label in sorted(set(on.outcomes) | set(off.outcomes)):
        on_outcomes, off_outcomes = on.outcomes.get(label, []), off.outcomes.get(label, [])
        if not on_outcomes or not off_outcomes:
            found.append(f"{label}: answered with reuse {'on' if on_outcomes else 'off'} only")
            continue
        found += _judge(label, on_outcomes[-1], off_outcomes)
    if on.sessions > off.sessions + on.injected:
        found.append(
            f"reuse on created {on.sessions} sessions, reuse off {off.sessions} ({on.injected} injected failures)"
        )
    return found


def _judge(label: str, final: Outcome, off: list[Outcome]) -> list[str]:
    reference = off[-1]
    if len(off) > 1 or reference.answer is None:
        return [f"{label}: reuse off failed: {reference.error}"]
    if final.answer is None:
        return [f"{label}: reuse on failed: {final.error} (injected: {final.injected})"]
    on, off = final.answer.compared(final.unpinned), reference.answer.compared(final.unpinned)
    if on != off:
        return [f"{label}: reuse on {on}, reuse off {off}"]
    return []


def check(conversation: Conversation) -> list[tuple[Reading, Trace, Trace]]:
    results = play_everywhere(conversation, READINGS)
    report = []
    for reading, on, off in results:
        found = differences(on, off)
        if found:
            report.append(f"[{reading.label}]\n    " + "\n    ".join(found[:4]))
    assert not report, f"{len(report)} of {len(READINGS)} readings differ:\n" + "\n".join(report)
    return results


def continues_throughout(reading: Reading) -> bool:
    """Whether under ``reading`` every turn of a healthy plain conversation continues one session:
    not where turns carry no stages, and not where conol writes answer text (or, with built-in
    tools exposed, a call) after each answer: the session then holds more than the client."""
    v = reading.values
    tail = v["late_events"] == "answer" or (
        v["builtin_tools"] == "expose" and v["late_events"] == "tool_call"
    )
    return v["stageless_turns"] == "none" and not tail


PLAIN = Conversation((Turn("Tell me about stages."), Turn("continue"), Turn("ok")), system=SYSTEM)
QUOTED = Conversation((Turn('He answered "yes", then "ok, continue".'), Turn("ok, continue")))
REPEATED = Conversation((Turn("yes"), Turn("yes"), Turn("yes")), stream=True)
# the system prompt makes the first request's echo unlike the repeated turn's: that one is the case no
# structure places (docs/session-reuse.md#where-the-new-turn-starts), which "repeated" meets
TOOLS = Conversation(
    (
        Turn(cities=("Paris", "Tokyo"), results=("18°C", "18°C")),
        Turn(cities=("Paris", "Tokyo"), results=("18°C", "18°C")),  # the same calls again
        Turn(cities=("Oslo",), results=("rain",), after_results="thanks"),
        Turn("Tell me about stages."),
    ),
    system=SYSTEM,
)
LONG = Conversation(
    (
        Turn("Tell me about stages.", also="and one more thing"),
        Turn("search: stage ids"),
        Turn(cities=("Paris",), results=("rain",)),
        Turn("def add(a, b):\n    return a + b", image=0),
        Turn("continue"),
        Turn("continue"),
        Turn("ok", also="thanks"),
        Turn("yes"),
    ),
    stream=True,
    system=SYSTEM,
)
EDITED = Conversation(
    (Turn("def add(a, b):\n    return a + b", image=0), Turn("yes"), Turn("ok", edit="indent")),
)
IMAGE_SWAPPED = Conversation((Turn("Tell me about stages.", image=0), Turn("ok"), Turn("ok", edit="image")))
CUT = Conversation(
    (Turn("Tell me about stages.", cut="stop"), Turn("continue", cut="max_tokens"), Turn("ok"))
)
TWO_CALLERS = Conversation((Turn("Tell me about stages."), Turn("yes"), Turn("continue")), two_callers=True)
# each failure is followed by a healthy plain turn, which must continue the conversation's session
FAILING = Conversation(
    (
        Turn("Tell me about stages.", failure=("create", 429)),
        Turn("yes", failure=("followup", 429)),
        Turn("ok"),
        Turn("continue", failure=("followup", 500)),
        Turn("yes"),
        Turn("ok", failure=("taken", 500)),
        Turn("yes"),
        Turn("ok", failure=("followup", 409)),
        Turn("continue", failure=("gone", 410), retry=True),
        Turn("yes"),
    )
)

NAMED = {
    "plain": PLAIN,
    "quoted": QUOTED,
    "repeated": REPEATED,
    "tools": TOOLS,
    "long": LONG,
    "edited": EDITED,
    "image_swapped": IMAGE_SWAPPED,
    "cut": CUT,
    "two_callers": TWO_CALLERS,
    "failing": FAILING,
}


@pytest.mark.parametrize("name", NAMED)
def test_a_named_conversation(name: str) -> None:
    results = check(NAMED[name])
    if name == "plain":  # healthy, one caller, plain turns: one session wherever the session can go on
        sessions = {reading.label: on.sessions for reading, on, _ in results if continues_throughout(reading)}
        assert sessions == dict.fromkeys(sessions, 1)
    if name == "tools":  # tool results continue the session (most agent traffic is tool results)
        for reading, on, _ in results:
            if continues_throughout(reading):
                reused = [o[-1].reused for label, o in on.outcomes.items() if label.endswith("results")]
                assert reused == [True] * 3, reading.label


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(conversation=conversations())
def test_reuse_never_changes_an_answer(conversation: Conversation) -> None:
    check(conversation)
