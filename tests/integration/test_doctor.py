"""``litellm-conol doctor`` against the fake conol: it passes on the faithful fake, and each drift of
the fake (``FakeConfig.drift``) makes exactly the checks fail that rely on what drifted."""

from __future__ import annotations

import json

import pytest
from support.doctor import CAPABILITIES, DRIFT_EFFECTS, SESSION_CHECKS

from litellm_conol import cli
from litellm_conol.core.models.catalog import default_catalog
from litellm_conol.fake import DOWNGRADE_MODEL, KNOWN_MODELS, FakeConol

pytestmark = pytest.mark.timeout(60)

MODEL_CHECKS = [f"model conol/{m.id}" for m in default_catalog().models]


# A drift that makes a session wait for its end is cut short by this (seconds).
DRIFT_SESSION_TIMEOUT = "1.2"


def _doctor(
    fake: FakeConol, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, str], str]:
    """Run the CLI in-process as JSON; (exit code, {check: outcome}, the raw output)."""
    code = cli.main(["doctor", "--token", fake.token, "--api-base", fake.base_url, "--json", *args])
    out, err = capsys.readouterr()
    assert fake.token not in out + err  # never printed, whatever happened
    report = json.loads(out)
    assert report["ok"] is (code == 0) and report["api_base"] == fake.base_url
    return code, {c["name"]: c["outcome"] for c in report["checks"]}, out


@pytest.fixture
def agent_fake(conol_fake: FakeConol) -> FakeConol:
    # the prompt-driven scenario: calls the tool it is given (the tool_call check), else says hello
    conol_fake.set_default_scenario("agent")
    return conol_fake


def test_doctor_passes_on_the_faithful_fake_as_text(agent_fake, capsys):
    code = cli.main(["doctor", "--token", agent_fake.token, "--api-base", agent_fake.base_url])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert [line.split()[0] for line in lines[:-1]] == ["PASS"] * len(SESSION_CHECKS) + [
        o.upper() for o in CAPABILITIES.values()
    ] + ["PASS"] * len(MODEL_CHECKS)
    assert [line[8:44].strip() for line in lines[:-1]] == [*SESSION_CHECKS, *CAPABILITIES, *MODEL_CHECKS]
    by_name = {line[8:44].strip(): line[55:] for line in lines[:-1]}
    assert by_name["balance"].startswith("total 12.5: daily 10, subscription 0, plan Free, extra 2.5; daily ")
    assert by_name["status"] == "'completed' after 1 poll(s)"
    assert by_name["tool_call"] == "doctor_ping({})"
    assert by_name["previews"] == "4 message snapshots; answer 'Hello! This is the fake conol agent.'"
    assert by_name["model conol/deepseek-v4-pro"] == "runs as deepseek/deepseek-v4-pro"
    assert lines[-1].startswith(f"doctor: {len(lines) - 2} passed, 0 failed, 0 skipped, 1 absent in ")
    assert lines[-1].endswith(f" s against {agent_fake.base_url}")
    assert agent_fake.token not in out


# what the failing check says (its start), for the drifts whose message names the new shape
DRIFT_DETAILS = {
    "auth_wrapped": {"token": "HTTP 200 but neither session nor user in the answer (keys: data)"},
    "balance_renamed": {"balance": "no number under 'total' (keys: balance, dailyCredits, "},
    "id_renamed": {"create": "conol's create-session response has no session id (looked for sessionId, id, "},
    "event_renamed": {"stream": "no history_delta among 7 events (types seen: historyDelta x7)"},
    "preview_renamed": {
        "previews": "no message snapshot under stages[].preview (stage keys seen: id, logs, previews)"
    },
    "tool_renamed": {"tool_call": "no call of doctor_ping (4 events, none a tool call); conol session "},
    "status_word": {"status": "unknown status word 'finished' (known: pending, queued, running; terminal: "},
    "status_wrapped": {"status": "the status answer has no 'status' field (keys: session)"},
}


@pytest.mark.parametrize("drift", sorted(DRIFT_EFFECTS))
def test_each_drift_fails_the_checks_that_rely_on_it(agent_fake, capsys, drift):
    agent_fake.configure(drift=drift)
    code, outcomes, out = _doctor(
        agent_fake, capsys, "--no-models", "--session-timeout", DRIFT_SESSION_TIMEOUT
    )
    failed, skipped = DRIFT_EFFECTS[drift]
    assert code == 1
    assert outcomes == {
        name: "fail" if name in failed else "skip" if name in skipped else "pass" for name in SESSION_CHECKS
    } | {name: "skip" if "create" in failed else outcome for name, outcome in CAPABILITIES.items()}
    details = {c["name"]: c["detail"] for c in json.loads(out)["checks"]}
    for name, detail in DRIFT_DETAILS.get(drift, {}).items():
        assert details[name].startswith(detail)


def test_a_renamed_downgrade_flag_fails_every_model_check(agent_fake, capsys):
    agent_fake.configure(drift="downgrade_renamed")
    code, outcomes, out = _doctor(agent_fake, capsys)
    assert code == 1
    assert {name for name, outcome in outcomes.items() if outcome == "fail"} == set(MODEL_CHECKS)
    detail = next(c["detail"] for c in json.loads(out)["checks"] if c["name"] == MODEL_CHECKS[0])
    assert detail == "the create answer has no modelDowngraded field (fields read: effectiveModel, sessionId)"


def test_models_the_account_may_not_use_fail_as_downgraded(capsys):
    allowed = KNOWN_MODELS - {"x-ai/grok-4.3", "tencent/hy3"}
    with FakeConol(default_scenario="agent", known_models=allowed) as fake:
        code, outcomes, out = _doctor(fake, capsys)
    assert code == 1
    assert {name for name, outcome in outcomes.items() if outcome == "fail"} == {
        "model conol/grok-4.3",
        "model conol/hy3",
    }
    detail = next(c["detail"] for c in json.loads(out)["checks"] if c["name"] == "model conol/hy3")
    assert detail == f"downgraded: conol runs {DOWNGRADE_MODEL} instead"


def test_a_dead_token_fails_the_token_check_and_skips_the_rest(agent_fake, capsys):
    agent_fake.configure(revoke_token=True)
    code, outcomes, out = _doctor(agent_fake, capsys, "--no-models")
    assert code == 1
    assert outcomes == {"token": "fail", **{name: "skip" for name in [*SESSION_CHECKS[1:], *CAPABILITIES]}}
    assert json.loads(out)["checks"][0]["detail"] == "HTTP 401: the token is invalid or expired"
    assert len(agent_fake.requests) == 1  # nothing else was tried


def test_unreachable_conol_fails_without_a_traceback(capsys):
    from support.proxyproc import free_port

    base = f"http://127.0.0.1:{free_port()}"
    code = cli.main(["doctor", "--token", "tok-secret-123", "--api-base", base, "--no-models", "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 1 and "tok-secret-123" not in out + err
    assert report["checks"][0]["detail"].startswith(
        "could not reach conol while checking the session token: "
    )
    assert [c["detail"] for c in report["checks"][1:]] == ["conol is not reachable"] * (
        len(SESSION_CHECKS) - 1 + len(CAPABILITIES)
    )


def test_the_token_from_the_environment_is_used_and_never_printed(agent_fake, capsys, monkeypatch):
    monkeypatch.setenv("CONOL_SESSION_TOKEN", agent_fake.token)
    monkeypatch.setenv("CONOL_API_BASE", agent_fake.base_url)
    assert cli.main(["doctor", "--no-models"]) == 0
    out, err = capsys.readouterr()
    assert agent_fake.token not in out + err and "doctor: 10 passed, 0 failed" in out


def test_unknown_drift_names_are_refused(conol_fake):
    with pytest.raises(ValueError, match="unknown drift nope; known: auth_wrapped, "):
        conol_fake.configure(drift="nope")


def test_a_drift_given_at_start_survives_reset_and_the_cli_offers_it(capsys):
    with pytest.raises(ValueError, match="unknown drift bogus"):
        FakeConol(drift="bogus")
    with FakeConol(drift="status_word,balance_renamed") as fake:
        fake.reset()
        assert fake.config.drift == "balance_renamed,status_word"
        fake.configure(drift=None)  # back to the faithful server until the next reset
        assert not fake.config.drifts
    with pytest.raises(SystemExit):
        cli.main(["fake", "--help"])
    assert "--drift DRIFT" in capsys.readouterr().out


def test_the_whole_run_is_bounded_by_the_budget(conol_fake, capsys):
    conol_fake.set_default_scenario("stall_before_first")  # no event for 30 s
    code, outcomes, out = _doctor(conol_fake, capsys, "--no-models", "--budget", "1")
    report = json.loads(out)
    assert code == 1 and report["seconds"] < 10
    assert outcomes == {
        "token": "pass",
        "balance": "pass",
        "assets": "pass",
        "discovery": "pass",
        **{n: "fail" for n in [*SESSION_CHECKS[4:], *CAPABILITIES]},
    }
    assert {c["detail"] for c in report["checks"][4:]} == {"did not finish within the 1 s budget"}
