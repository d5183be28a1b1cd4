"""The fake's command-line switches for the readings left open (docs/protocol.md#readings): each reaches
``FakeConfig`` (so ``make run`` / ``litellm-conol fake`` can play any upstream)."""

from __future__ import annotations

import argparse

import pytest

from litellm_conol.fake._cli import add_reading_arguments, readings_from_args
from litellm_conol.fake._records import FakeConfig


def parse(*argv: str) -> dict:
    parser = argparse.ArgumentParser()
    add_reading_arguments(parser)
    return readings_from_args(parser.parse_args(argv))


def test_the_defaults_are_the_faithful_fake():
    assert parse() == {
        "framing": "sse",
        "context_usage": False,
        "context_model": None,
        "balance": "full",
        "auth": "ok",
        "assets": "on",
        "agent_servers": "list",
        "create_model": "honour",
        "followup_status": None,
        "followup_stage": "new",
        "followup_replayed_end": "none",
        "followup_previews": "cleared",
        "followup_taken_status": None,
        "late_events": "none",
        "late_after": 0.2,
        "stageless_turns": "none",
        "first_token_delay": 0.0,
        "user_log_time": "stamped",
        "unknown_asset_status": 400,
    }
    assert {name: getattr(FakeConfig(), name) for name in parse()} == parse()


def test_every_switch_reaches_the_config():
    readings = parse(
        "--framing=ndjson",
        "--context-usage",
        "--context-model=deepseek-v4-flash",
        "--balance=zero",
        "--auth=dead_200",
        "--assets=absent",
        "--agent-servers=servers",
        "--create-model=ignore",
        "--followup-status=405",
        "--followup-stage=same",
        "--followup-replayed-end=error",
        "--followup-previews=kept",
        "--followup-taken-status=500",
        "--late-events=answer",
        "--late-after=1.5",
        "--stageless-turns=follow-ups",
        "--first-token-delay=0.8",
        "--user-log-time=none",
        "--unknown-asset-status=404",
    )
    config = FakeConfig()
    config.update(readings)
    assert {name: getattr(config, name) for name in readings} == readings


def test_a_value_outside_the_choices_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse("--create-model=sometimes")
    assert "invalid choice: 'sometimes'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse("--followup-stage=old")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("followup_stage", "old"),
        ("followup_replayed_end", "failed"),
        ("followup_stage", 1),
        ("late_events", "later"),
        ("stageless_turns", "some"),
    ],
)
def test_the_config_refuses_a_reading_it_does_not_have(key, value):
    with pytest.raises(ValueError, match=key):
        FakeConfig().update({key: value})
