"""The fake's command line: one parser definition for both ways of running it.

``litellm-conol fake`` and ``python -m litellm_conol.fake`` accept the same flags (docs/cli.md) and
differ only in the default port, which each entry point passes to ``add_fake_arguments``:

* ``litellm-conol fake``: ``COMMAND_PORT`` (8765). A person starts it by hand and then points a
  config or ``litellm-conol doctor --api-base http://127.0.0.1:8765`` at it, so the address must
  be known before it starts.
* ``python -m litellm_conol.fake``: ``FREE_PORT`` (0, any free port, printed). Tests and the bench
  spawn it, several at once, and read the address from its first line.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ._drift import DRIFTS
from ._records import READINGS
from ._runner import DEFAULT_TOKEN, run_forever

COMMAND_PORT = 8765
FREE_PORT = 0
MODULE_PROGRAM = "python -m litellm_conol.fake"


def add_fake_arguments(parser: argparse.ArgumentParser, *, default_port: int) -> None:
    """Every flag of the fake's command line, on ``parser``. ``default_port`` is the one default
    the entry points differ in (``COMMAND_PORT`` or ``FREE_PORT``; the module docstring says why)."""
    parser.add_argument("--host", default="127.0.0.1", help="the address it binds")
    parser.add_argument(
        "--port",
        type=int,
        default=default_port,
        help="the port it listens on; 0 picks a free one (the address is printed)",
    )
    parser.add_argument("--token", default=DEFAULT_TOKEN, help="the session token the fake accepts")
    parser.add_argument("--ping-interval", type=float, default=1.0, help="seconds of idleness per ': ping'")
    parser.add_argument(
        "--default-scenario", default="hello", help="scenario for requests without a [[fake:NAME]] marker"
    )
    parser.add_argument("--list-scenarios", action="store_true", help="print the scenarios and exit")
    add_drift_argument(parser)
    add_reading_arguments(parser)


def add_reading_arguments(parser: argparse.ArgumentParser) -> None:
    """The readings other clients report (docs/protocol.md#readings), one flag per ``FakeConfig``
    reading field (``_records.READINGS``: its default, choices and help)."""
    for reading in READINGS:
        flag = "--" + reading.name.replace("_", "-")
        help_text, choices = reading.metadata["help"], reading.metadata["choices"]
        if reading.default is False:
            parser.add_argument(flag, action="store_true", help=help_text)
        elif choices:
            parser.add_argument(flag, choices=choices, default=reading.default, help=help_text)
        else:
            annotation = str(reading.type)
            kind = float if "float" in annotation else int if "int" in annotation else str
            parser.add_argument(flag, type=kind, default=reading.default, help=help_text)


def readings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    return {reading.name: getattr(args, reading.name) for reading in READINGS}


def add_drift_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--drift",
        default=None,
        help="comma-separated deliberate departures from the spec, to test clients against a conol "
        f"that changed: {', '.join(DRIFTS)}",
    )


def scenario_lines() -> list[str]:
    """What ``--list-scenarios`` prints: each built-in scenario's name and description."""
    from ._library import BUILTINS

    return [f"{scenario.name:22} {scenario.description}" for scenario in BUILTINS.values()]


def run_from_args(args: argparse.Namespace) -> int:
    """Do what the parsed flags of ``add_fake_arguments`` ask: list the scenarios, or serve until
    SIGINT/SIGTERM."""
    if args.list_scenarios:
        return _print_lines(scenario_lines())
    run_forever(
        args.host,
        args.port,
        token=args.token,
        ping_interval=args.ping_interval,
        default_scenario=args.default_scenario,
        drift=args.drift,
        readings=readings_from_args(args),
    )
    return 0


def _print_lines(lines: list[str]) -> int:
    """Print, and stop quietly when the reader stops reading (``--list-scenarios | head``)."""
    try:
        print("\n".join(lines), flush=True)
    except BrokenPipeError:
        # Python would report the closed pipe again while flushing at exit: point stdout elsewhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def fake_command_parser() -> argparse.ArgumentParser:
    """``python -m litellm_conol.fake``'s parser (docs/cli.md is generated from it)."""
    parser = argparse.ArgumentParser(prog=MODULE_PROGRAM, description="Run the fake conol.ai server.")
    add_fake_arguments(parser, default_port=FREE_PORT)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_from_args(fake_command_parser().parse_args(argv))
