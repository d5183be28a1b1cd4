"""``litellm-conol doctor --reuse`` against the fake in each upstream reading: follow-ups that work
(turn 2 recalls turn 1's word; a client tool's result sent as a follow-up comes back in the answer),
pinning by create or by ``/model``, follow-ups refused, and what the checks cost in sessions."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from litellm_conol import cli
from litellm_conol.fake import (
    BUILTINS,
    CommitMessage,
    FakeConol,
    Scenario,
    ScenarioContext,
    SetStatus,
    Step,
    ToolCall,
    snapshots,
    tool_result_in,
)

pytestmark = pytest.mark.timeout(120)

SETTINGS_HEADER = "# the deployment settings this account needs (litellm_params of each conol model):"


def doctor(fake: FakeConol) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "litellm_conol.cli", "doctor", "--reuse", "--no-models"]
    command += ["--api-base", fake.base_url, "--token", fake.token, "--model", "claude-haiku-4-5"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=100, check=False)


def doctor_in_process(fake: FakeConol, capsys, *more: str) -> tuple[int, list[str]]:
    # in process (one process per reading would spend its time importing LiteLLM; the last test
    # runs the CLI as a process)
    args = ["doctor", "--reuse", "--no-models", "--api-base", fake.base_url, "--token", fake.token, *more]
    returncode = cli.main([*args, "--model", "claude-haiku-4-5"])
    out, err = capsys.readouterr()
    assert fake.token not in out + err
    return returncode, out.splitlines()


def squeezed(line: str) -> str:
    """A report line without its column padding (the outcome column fits ABSENT) and its timing."""
    return re.sub(r" \d+\.\d\d s ", " ", " ".join(line.split()), count=1)


def spent(sessions: int, empty: int) -> str:
    return f"# sessions these checks created: {sessions} ({sessions - empty} ran turns, {empty} empty for pinning, ran nothing)"


TOOL_PASSED = re.compile(
    r"PASS followup tool get_weather\(\{\"city\": \"Paris\"\}\) called; the answer quoted '(wx[0-9a-f]{6})' "
    r"from its result: 'The weather in Paris is light rain, 14 C, station code (wx[0-9a-f]{6})\.'"
)


@pytest.mark.parametrize(
    ("config", "pinning", "mode"),
    [
        ({}, "create: create honours agentModel", "create"),
        ({"create_model": "ignore"}, "pin: create ran 'deepseek/deepseek-v4-flash'; /model pins it", "pin"),
        ({"followup_replay": False}, "create: create honours agentModel", "create"),
    ],
)
def test_doctor_reuse_passes_where_follow_ups_work(config, pinning, mode, capsys):
    with FakeConol(default_scenario="recall") as fake:
        fake.configure(**config)
        code, lines = doctor_in_process(fake, capsys)
        sessions = list(fake.sessions)
    assert code == 0, "\n".join(lines)
    assert re.fullmatch(
        r"PASS followup turn 2 recalled the word from turn 1 \('zebra[0-9a-f]{6}'\)", squeezed(lines[0])
    )
    quoted = TOOL_PASSED.fullmatch(squeezed(lines[1]))
    assert quoted is not None, lines[1]
    assert quoted.group(1) == quoted.group(2)  # the code the result held, not another one
    assert squeezed(lines[2]) == f"PASS pinning claude-haiku-4-5 {pinning}"
    assert lines[-4:] == [spent(3, 1), SETTINGS_HEADER, "session_reuse: auto", f"model_pinning: {mode}"]
    assert len(sessions) == 3  # the recall session, the tool session, one empty create


TOOL_ANSWERED = re.compile(
    r"PASS followup tool get_weather\(\{\}\) called; the answer quoted '(wx[0-9a-f]{6})' "
    r"from its result: 'The tool returned: light rain, 14 C, station code (wx[0-9a-f]{6})\.'"
)


@pytest.mark.parametrize("default_scenario", ["hello", "agent"])
def test_the_bundled_fake_answers_the_checks_as_a_model_would(default_scenario, capsys):
    # `litellm-conol fake` and `make run` (hello), and `--default-scenario agent`: a model recalls a
    # word from an earlier turn of its session, and answers with a tool's result once it has it
    with FakeConol(default_scenario=default_scenario) as fake:
        code, lines = doctor_in_process(fake, capsys)
    assert code == 0, "\n".join(lines)
    assert re.fullmatch(
        r"PASS followup turn 2 recalled the word from turn 1 \('zebra[0-9a-f]{6}'\)", squeezed(lines[0])
    )
    quoted = TOOL_ANSWERED.fullmatch(squeezed(lines[1]))
    assert quoted is not None and quoted.group(1) == quoted.group(2), lines[1]
    assert lines[-2:] == ["session_reuse: auto", "model_pinning: create"]


@pytest.mark.parametrize("status", [404, 405])
def test_a_refused_follow_up_endpoint_skips_the_tool_round_trip(status, capsys):
    with FakeConol(default_scenario="recall") as fake:
        fake.configure(followup_status=status)
        code, lines = doctor_in_process(fake, capsys)
        sessions = len(fake.sessions)
    assert code == 1
    assert squeezed(lines[0]).startswith(
        "FAIL followup conol refused the follow-up: conol refused a turn on session "
    )
    assert lines[0].endswith(f"while sending the turn to the session ({status}): Not found")
    assert " ".join(lines[1].split()) == (
        f"SKIP followup tool not tried: conol refused the follow-up call above (HTTP {status}), which the "
        "tool result would be posted with too (one session saved)"
    )
    assert lines[-4:] == [spent(2, 1), SETTINGS_HEADER, "session_reuse: off", "model_pinning: create"]
    assert sessions == 2


def test_a_follow_up_stream_that_never_shows_the_turn_says_why_and_turns_reuse_off(capsys):
    """Follow-up turns come without stages: their stream never shows the turn we posted, so the
    provider cannot cut it; at run time that is the fail-safe's retryable error."""
    with FakeConol(default_scenario="recall") as fake:
        fake.configure(stageless_turns="follow-ups")
        code, lines = doctor_in_process(fake, capsys, "--session-timeout", "8")  # the turn within 4 s
    assert code == 1
    for line, name in zip(lines[:2], ("followup", "followup tool"), strict=True):
        # found by the budget (4 s) or, when the poll saw the session run and end, sooner
        assert re.fullmatch(
            f"FAIL {name} the follow-up's stream cannot be read safely: conol's "
            r"(stream of session [0-9a-f-]+ never showed the turn we posted: \d+ other event\(s\) in 4 s "
            r"\(first_event_timeout\)|session [0-9a-f-]+ ran and finished, and its stream never showed the "
            r"turn we posted)\. At run time a request that meets this gets a retryable error and session "
            r"reuse turns itself off for this upstream for session_reuse_backoff seconds "
            r"\(docs/session-reuse\.md#fail-safe\)",
            squeezed(line),
        ), line
    assert lines[-2:] == ["session_reuse: off", "model_pinning: create"]


def _recalls_but_ignores_tool_results(ctx: ScenarioContext) -> list[Step]:
    """``recall``, except that a tool's result is answered with a made-up weather."""
    if ctx.tools and tool_result_in(ctx.messages) is not None:
        text = "It is sunny in Paris."
        return [*snapshots(text, 2, 0.01), CommitMessage(text), SetStatus("completed")]
    return BUILTINS["recall"].script(ctx)


def test_a_tool_result_the_answer_ignores_fails_the_round_trip_and_turns_reuse_off(capsys):
    scenario = Scenario("ignores_results", _recalls_but_ignores_tool_results)
    with FakeConol(default_scenario="ignores_results", scenarios=[scenario]) as fake:
        code, lines = doctor_in_process(fake, capsys)
    assert code == 1
    assert squeezed(lines[0]).startswith("PASS followup turn 2 recalled the word")
    assert re.fullmatch(
        r"FAIL followup tool turn 2 did not use the tool result \(no 'wx[0-9a-f]{6}' in the answer\): "
        r"'It is sunny in Paris\.'",
        squeezed(lines[1]),
    )
    # text follow-ups work, so pinning (a turn after an empty create) does; tool loops would not
    assert lines[-2:] == ["session_reuse: off", "model_pinning: create"]


def _recalls_but_calls_again(ctx: ScenarioContext) -> list[Step]:
    """``recall``, except that offered tools it calls the first one again, whatever came back."""
    if ctx.tools:
        return [*snapshots("Call it.", 2, 0.01, kind="thinking"), ToolCall(ctx.tools[0], {})]
    return BUILTINS["recall"].script(ctx)


def test_a_tool_call_repeated_instead_of_an_answer_is_named(capsys):
    scenario = Scenario("calls_again", _recalls_but_calls_again)
    with FakeConol(default_scenario="calls_again", scenarios=[scenario]) as fake:
        code, lines = doctor_in_process(fake, capsys)
    assert code == 1
    assert squeezed(lines[1]) == (
        "FAIL followup tool turn 2 called get_weather({}) again instead of answering with the result"
    )


FORGETFUL = "Hello! How can I help you today?"


def _forgets(ctx: ScenarioContext) -> list[Step]:
    """The same greeting whatever the session was told or offered."""
    return [*snapshots(FORGETFUL, 2, 0.01), CommitMessage(FORGETFUL), SetStatus("completed")]


def test_the_recall_check_fails_when_turn_two_forgets():
    # a follow-up answered 2xx that does not continue the conversation is not a working follow-up
    with FakeConol(default_scenario="forgets", scenarios=[Scenario("forgets", _forgets)]) as fake:
        result = doctor(fake)
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert squeezed(lines[0]).startswith("FAIL followup turn 2 did not recall")
    assert squeezed(lines[1]) == (f"FAIL followup tool turn 1 did not call get_weather: '{FORGETFUL}'")
    assert lines[-4:] == [spent(3, 1), SETTINGS_HEADER, "session_reuse: off", "model_pinning: create"]
