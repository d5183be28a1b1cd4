"""One command line for the fake (docs/cli.md): ``litellm-conol fake`` and ``python -m
litellm_conol.fake`` take the same flags, reach the same runner, and differ only in the default port."""

from __future__ import annotations

import argparse

import litellm_conol.fake._cli as fake_cli
from litellm_conol import cli, fake
from litellm_conol.fake import BUILTINS, DEFAULT_TOKEN

FLAGS = [
    "--host",
    "--port",
    "--token",
    "--ping-interval",
    "--default-scenario",
    "--list-scenarios",
    "--drift",
    "--framing",
    "--context-usage",
    "--context-model",
    "--balance",
    "--auth",
    "--assets",
    "--agent-servers",
    "--create-model",
    "--followup-status",
    "--followup-stage",
    "--followup-replayed-end",
    "--followup-previews",
    "--followup-taken-status",
    "--late-events",
    "--late-after",
    "--stageless-turns",
    "--first-token-delay",
    "--user-log-time",
    "--unknown-asset-status",
]

HELLO_LINE = (
    "hello                  thinking x3, answer x6, committed log, status completed 0.5 s after the last "
    "snapshot; no done; stream stays open. logs cumulative, previews all. As a model would: on a "
    "follow-up turn after tool results, 'The tool returned: R.', and asked for a word it was told to "
    "remember, the word ('OK.' when told); asked to call an offered tool by name, a call of it with {}"
)


def command_parser() -> argparse.ArgumentParser:
    """``litellm-conol fake``'s parser, as the CLI builds it."""
    root = cli.command_parsers()["litellm-conol"]
    action = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices["fake"]


def module_parser() -> argparse.ArgumentParser:
    return cli.command_parsers()["python -m litellm_conol.fake"]


def described(parser: argparse.ArgumentParser) -> dict[str, tuple[object, ...]]:
    """Each option by its flags: everything the user sees of it but its default."""
    return {
        "/".join(action.option_strings): (action.dest, action.type, action.choices, action.nargs, action.help)
        for action in parser._actions
        if action.option_strings and action.dest != "help"
    }


def test_both_entry_points_accept_the_same_flags():
    assert list(described(command_parser())) == FLAGS
    assert described(command_parser()) == described(module_parser())


def test_the_default_port_is_the_only_default_they_differ_in():
    by_command = vars(command_parser().parse_args([]))
    by_module = vars(module_parser().parse_args([]))
    assert (by_command.pop("port"), by_module.pop("port")) == (8765, 0)
    assert (fake.COMMAND_PORT, fake.FREE_PORT) == (8765, 0)
    assert by_command.pop("run") is fake.run_from_args  # how the subcommand is dispatched
    assert by_command == by_module
    assert by_command["token"] == DEFAULT_TOKEN == "fake-conol-token"
    assert by_command["ping_interval"] == 1.0


def test_list_scenarios_works_from_litellm_conol_fake(capsys):
    assert cli.main(["fake", "--list-scenarios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert HELLO_LINE in lines
    assert [line.split()[0] for line in lines] == list(BUILTINS)
    assert lines == [f"{s.name:22} {s.description}" for s in BUILTINS.values()]
    assert fake.main(["--list-scenarios"]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_both_entry_points_hand_every_flag_to_the_same_runner(monkeypatch):
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []
    monkeypatch.setattr(fake_cli, "run_forever", lambda *args, **options: calls.append((args, options)))
    argv = ["--host", "::1", "--port", "9", "--token", "t0k", "--ping-interval", "0.25"]
    argv += ["--default-scenario", "agent", "--drift", "status_word", "--framing", "ndjson"]
    argv += ["--context-usage", "--followup-status", "405", "--first-token-delay", "1.5"]
    argv += ["--late-events", "note", "--user-log-time", "none"]
    assert cli.main(["fake", *argv]) == 0
    assert fake.main(argv) == 0
    readings = {
        "framing": "ndjson",
        "context_usage": True,
        "context_model": None,
        "balance": "full",
        "auth": "ok",
        "assets": "on",
        "agent_servers": "list",
        "create_model": "honour",
        "followup_status": 405,
        "followup_stage": "new",
        "followup_replayed_end": "none",
        "followup_previews": "cleared",
        "followup_taken_status": None,
        "late_events": "note",
        "late_after": 0.2,
        "stageless_turns": "none",
        "first_token_delay": 1.5,
        "user_log_time": "none",
        "unknown_asset_status": 400,
    }
    expected = (
        ("::1", 9),
        {
            "token": "t0k",
            "ping_interval": 0.25,
            "default_scenario": "agent",
            "drift": "status_word",
            "readings": readings,
        },
    )
    assert calls == [expected, expected]


def test_without_flags_litellm_conol_fake_serves_on_8765_with_the_fixed_token(monkeypatch):
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []
    monkeypatch.setattr(fake_cli, "run_forever", lambda *args, **options: calls.append((args, options)))
    assert cli.main(["fake"]) == 0
    assert fake.main([]) == 0
    [(command_address, command_options), (module_address, module_options)] = calls
    assert (command_address, module_address) == (("127.0.0.1", 8765), ("127.0.0.1", 0))
    assert command_options == module_options
    assert (command_options["token"], command_options["ping_interval"]) == ("fake-conol-token", 1.0)


def test_list_scenarios_stops_quietly_when_the_reader_goes_away(monkeypatch):
    """``litellm-conol fake --list-scenarios | head``: the closed pipe ends the listing with 0 and
    stdout is pointed at /dev/null, so Python's flush at exit reports nothing."""
    redirected: list[int] = []

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            return 97

    monkeypatch.setattr(fake_cli.sys, "stdout", ClosedPipe())
    monkeypatch.setattr(fake_cli.os, "dup2", lambda source, target: redirected.append(target))
    monkeypatch.setattr(fake_cli.os, "open", lambda path, flags: 96)
    assert fake_cli.main(["--list-scenarios"]) == 0
    assert redirected == [97]
