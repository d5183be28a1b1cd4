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
import warnings
from collections.abc import Sequence
from typing import Any

from ._drift import DRIFTS
from ._records import CHOICES
from ._runner import DEFAULT_TOKEN, run_forever

COMMAND_PORT = 8765
FREE_PORT = 0
MODULE_PROGRAM = "python -m litellm_conol.fake"

# the FakeConfig switches for the readings other clients report, in the order of their flags
READING_NAMES = (
    "framing",
    "context_usage",
    "context_model",
    "balance",
    "auth",
    "assets",
    "agent_servers",
    "create_model",
    "followup_status",
    "followup_stage",
    "followup_replayed_end",
)


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
    """The readings other clients report (docs/protocol.md#readings), one switch each (``FakeConfig`` says
    more)."""
    parser.add_argument("--framing", choices=CHOICES["framing"], default="sse", help="event stream framing")
    parser.add_argument("--context-usage", action="store_true", help="events carry contextUsage")
    parser.add_argument("--context-model", default=None, help="the modelId contextUsage reports")
    parser.add_argument("--balance", choices=CHOICES["balance"], default="full", help="the balance answer")
    parser.add_argument("--auth", choices=CHOICES["auth"], default="ok", help="how get-session answers")
    parser.add_argument("--assets", choices=CHOICES["assets"], default="on", help="POST /api/assets")
    parser.add_argument(
        "--agent-servers",
        choices=CHOICES["agent_servers"],
        default="list",
        help="the shape of GET /api/agent-servers (absent: 404)",
    )
    parser.add_argument(
        "--create-model",
        choices=CHOICES["create_model"],
        default="honour",
        help="whether create runs the agentModel it names (ignore: only /model pins it)",
    )
    parser.add_argument(
        "--followup-status",
        type=int,
        default=None,
        help="refuse every follow-up turn with this HTTP status (default: follow-ups work)",
    )
    parser.add_argument(
        "--followup-stage",
        choices=CHOICES["followup_stage"],
        default="new",
        help="a follow-up turn's events in new stages or appended to the previous turn's stages",
    )
    parser.add_argument(
        "--followup-replayed-end",
        choices=CHOICES["followup_replayed_end"],
        default="none",
        help="what ends each earlier turn a follow-up's stream replays: nothing added, done or error",
    )


def readings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    return {name: getattr(args, name) for name in READING_NAMES}


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Deprecated: ``add_fake_arguments(parser, default_port=FREE_PORT)``."""
    warnings.warn(
        "litellm_conol.fake.add_arguments is deprecated; use add_fake_arguments(parser, default_port=0)",
        DeprecationWarning,
        stacklevel=2,
    )
    add_fake_arguments(parser, default_port=FREE_PORT)
