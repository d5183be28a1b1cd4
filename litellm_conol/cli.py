"""``litellm-conol``: run the proxy with conol models, run the fake conol, list the catalog, check
that conol still speaks the protocol (``doctor``), print the references generated from the code."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from .core.protocol.endpoint import Endpoint

DEFAULT_CONFIG = "proxy_config.yaml"
DEFAULT_MASTER_KEY = "sk-conol-local"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    result: int = args.run(args)
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="litellm-conol", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    _add_serve(commands)
    _add_fake(commands)
    _add_models(commands)
    _add_doctor(commands)
    _add_accounts(commands)
    _add_record(commands)
    _add_references(commands)
    return parser


Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _add_serve(commands: Subcommands) -> None:
    serve = commands.add_parser(
        "serve",
        help="start the LiteLLM proxy with conol models (offline against the bundled fake without a token)",
    )
    serve.add_argument(
        "--config", default=None, help=f"proxy config (default: ./{DEFAULT_CONFIG}, else the bundled one)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address the proxy binds (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=4000, help="proxy port (default 4000)")
    serve.add_argument(
        "--fake-port", type=int, default=0, help="port of the bundled fake conol (default: any free)"
    )
    serve.add_argument(
        "--fake", action="store_true", help="use the bundled fake even if CONOL_SESSION_TOKEN is set"
    )
    serve.set_defaults(run=_serve)


def _add_fake(commands: Subcommands) -> None:
    """The fake's own flags (the same as ``python -m litellm_conol.fake``'s), on port 8765 by default:
    the address a person points a config or ``doctor`` at (``litellm_conol.fake.COMMAND_PORT``)."""
    from .fake import COMMAND_PORT, add_fake_arguments, run_from_args

    fake = commands.add_parser("fake", help="run the fake conol server (for offline tests)")
    add_fake_arguments(fake, default_port=COMMAND_PORT)
    fake.set_defaults(run=run_from_args)


def _add_models(commands: Subcommands) -> None:
    models = commands.add_parser("models", help="list the conol models of the catalog")
    models.add_argument(
        "--check",
        action="store_true",
        help="create one session per model and mark which ones conol runs as asked for this account",
    )
    models.add_argument(
        "--refresh",
        action="store_true",
        help="write the account's models (GET /api/agent-servers) as a catalog file for CONOL_MODELS_EXTRA, "
        "and show what changed against the packaged catalog",
    )
    models.add_argument(
        "--out", default="conol-models.json", help="the file --refresh writes (default conol-models.json)"
    )
    _add_connection_arguments(models)
    models.set_defaults(run=_models)


def _add_references(commands: Subcommands) -> None:
    """Two references generated from the code: docs/configuration.md's options, docs/cli.md."""
    for name, what in (
        ("settings", "the settings reference (options, scopes, ranges)"),
        ("commands", "the command-line reference (every command, option and default)"),
        ("metrics", "the metrics reference (conol's Prometheus metrics, docs/metrics.md)"),
    ):
        reference = commands.add_parser(name, help=f"print {what}")
        reference.add_argument(
            "--write-docs", metavar="PAGE", help="rewrite this page's generated block instead"
        )
        reference.set_defaults(run=_reference)


def _reference(args: argparse.Namespace) -> int:
    from . import ops

    if args.command == "settings":
        return ops.settings_command(args.write_docs)
    if args.command == "metrics":  # imports LiteLLM (never its cost map from the network): only this one
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        return int(importlib.import_module(".ops.metrics_doc", __package__).metrics_command(args.write_docs))
    return ops.cli_command(command_parsers(), args.write_docs)


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """The package's command-line parsers, by how each is run (docs/cli.md is generated from them)."""
    from .fake import fake_command_parser

    return {"litellm-conol": _parser(), "python -m litellm_conol.fake": fake_command_parser()}


def _add_doctor(commands: Subcommands) -> None:
    doctor = commands.add_parser(
        "doctor", help="check, one line each, that conol still speaks the protocol this package expects"
    )
    _add_connection_arguments(doctor)
    doctor.add_argument(
        "--model", default=DOCTOR_MODEL, help=f"catalog id for the session checks (default {DOCTOR_MODEL})"
    )
    doctor.add_argument(
        "--no-models", action="store_true", help="skip the per-model downgrade checks (one session each)"
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument(
        "--session-timeout", type=float, default=20.0, help="seconds one check session may take (default 20)"
    )
    doctor.add_argument("--budget", type=float, default=55.0, help="seconds for the whole run (default 55)")
    doctor.add_argument(
        "--reuse",
        action="store_true",
        help="check follow-up turns (session reuse) and how each model must be pinned; print the settings",
    )
    doctor.set_defaults(run=_doctor)


def _add_accounts(commands: Subcommands) -> None:
    accounts = commands.add_parser("accounts", help="each conol deployment's account and its balance")
    accounts.add_argument("--config", default=None, help="the proxy config (default: proxy_config.yaml)")
    accounts.add_argument("--json", action="store_true", help="machine-readable output")
    accounts.set_defaults(run=_accounts)


def _accounts(args: argparse.Namespace) -> int:
    from .ops import accounts_command

    return accounts_command(_config_path(args.config), as_json=args.json)


def _add_record(commands: Subcommands) -> None:
    record = commands.add_parser(
        "record", help="run one session and save conol's raw SSE lines and status polls, scrubbed, for replay"
    )
    _add_connection_arguments(record)
    record.add_argument("--out", "-o", required=True, help="the recording file to write (JSON)")
    record.add_argument("--prompt", required=True, help="the user message of the session")
    record.add_argument("--model", default=DOCTOR_MODEL, help=f"catalog id (default {DOCTOR_MODEL})")
    record.add_argument("--effort", default=None, help="reasoning effort (minimal, low, medium, high, max)")
    record.add_argument(
        "--tools", default=None, help="a JSON file with a list of tools (OpenAI or Anthropic format)"
    )
    record.add_argument("--timezone", default="UTC", help="IANA timezone sent with the session (default UTC)")
    record.add_argument(
        "--timeout", type=float, default=120.0, help="seconds the session may take (default 120)"
    )
    record.set_defaults(run=_record)


DOCTOR_MODEL = "deepseek-v4-flash"


def _add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--token", default=None, help="session token (default: $CONOL_SESSION_TOKEN)")
    parser.add_argument(
        "--api-base", default=None, help="where conol is (default: $CONOL_API_BASE or conol.ai)"
    )


def _connection(args: argparse.Namespace) -> Endpoint | None:
    """Where conol is and the token, from the flags or the environment; None (after saying so)
    without a token."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch of the cost map
    from .core.config.options import request_endpoint
    from .core.config.settings_table import SETTINGS
    from .core.errors import MissingCredential

    token = args.token or os.environ.get(str(SETTINGS["api_key"].env))
    if not token:
        print(
            f"litellm-conol {args.command}: no token (set CONOL_SESSION_TOKEN or pass --token)",
            file=sys.stderr,
        )
        return None
    try:
        # the token in any form it is pasted in; the base from the flag, else the settings' environment
        endpoint: Endpoint = request_endpoint(token, args.api_base)
    except MissingCredential as exc:
        print(f"litellm-conol {args.command}: {exc.message}", file=sys.stderr)
        return None
    return endpoint


def _doctor(args: argparse.Namespace) -> int:
    endpoint = _connection(args)
    if endpoint is None:
        return 2
    import asyncio
    import time

    from .client.pool import shared_client
    from .core.config.options import configured_catalog
    from .core.errors import ConolError
    from .ops import DoctorSettings, report_json, report_text, run_doctor, run_reuse_doctor

    catalog = configured_catalog()
    try:
        model = catalog.resolve(args.model)
    except ConolError as exc:
        print(f"litellm-conol doctor: {exc.message}", file=sys.stderr)
        return 2
    models = () if args.no_models else catalog.models
    settings = DoctorSettings(
        endpoint, model, models, session_timeout=args.session_timeout, budget=args.budget
    )
    unique = list({each.id: each for each in (model, *models)}.values())  # --reuse: the asked one first

    async def run() -> tuple[list[Any], str | None]:
        if args.reuse:
            return await run_reuse_doctor(endpoint, unique, shared_client(), args.session_timeout)
        return await run_doctor(settings, shared_client()), None

    started = time.monotonic()
    checks, deployment_settings = asyncio.run(run())
    report = report_json if args.json else report_text
    print(report(checks, endpoint.base_url, time.monotonic() - started), flush=True)
    if deployment_settings is not None:
        print(deployment_settings, flush=True)
    return 1 if any(check.failed for check in checks) else 0


def _record(args: argparse.Namespace) -> int:
    endpoint = _connection(args)
    if endpoint is None:
        return 2
    import asyncio
    import json

    from .client.pool import shared_client
    from .core.config.options import configured_catalog
    from .core.errors import ConolError
    from .core.models.effort import map_effort
    from .core.protocol.wire import CreateSessionBody, TextPart
    from .core.request.render import convert_tools
    from .ops import record_session

    try:
        tools = convert_tools(json.loads(Path(args.tools).read_text(encoding="utf-8"))) if args.tools else []
        body = CreateSessionBody(
            messages=[TextPart(content=args.prompt)],
            timezone=args.timezone,
            agent_model=configured_catalog().resolve(args.model).agent_model,
            agent_effort=map_effort(args.effort),
            tools=tools or None,
        )
    except (OSError, ValueError, ConolError) as exc:
        print(f"litellm-conol record: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 2

    async def run() -> dict[str, Any]:
        return await record_session(endpoint, shared_client(), body, timeout=args.timeout)

    try:
        recording = asyncio.run(run())
    except ConolError as exc:
        print(f"litellm-conol record: {exc.message}", file=sys.stderr)
        return 1
    Path(args.out).write_text(json.dumps(recording, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    timeline = recording["timeline"]
    lines = sum("line" in entry for entry in timeline)
    polls = sum("status" in entry for entry in timeline)
    ended = recording["ended_by"] or recording["error"]
    print(f"recorded {lines} SSE lines and {polls} status polls (ended by: {ended}) to {args.out}")
    return 0


def _models(args: argparse.Namespace) -> int:
    from .core.config.options import configured_catalog

    models = configured_catalog().models
    if not (args.check or args.refresh):
        for model in models:
            print(f"conol/{model.id:<24} agentModel={model.agent_model}")
        return 0
    endpoint = _connection(args)
    if endpoint is None:
        return 2
    from .ops import check_command, refresh_command

    return refresh_command(endpoint, Path(args.out)) if args.refresh else check_command(endpoint, models)


def _serve(args: argparse.Namespace) -> int:
    from .core.config.options import ENV_BASE, ENV_TOKEN

    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch of the cost map at start
    env.setdefault("LITELLM_MASTER_KEY", DEFAULT_MASTER_KEY)
    fake = None
    if args.fake or not env.get(ENV_TOKEN):
        from .fake import FakeConol

        fake = FakeConol(port=args.fake_port)
        fake.start()
        env[ENV_TOKEN] = fake.token
        env[ENV_BASE] = fake.base_url
    config = _config_path(args.config)
    _banner(args, env, config, fake_url=fake.base_url if fake else None)
    command = [sys.executable, "-m", "litellm.proxy.proxy_cli", "--config", str(config)]
    command += ["--host", args.host, "--port", str(args.port)]
    proxy = subprocess.Popen(command, env=env)
    try:
        return proxy.wait()
    except KeyboardInterrupt:
        proxy.send_signal(signal.SIGINT)
        try:
            return proxy.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            return proxy.wait()
    finally:
        if fake is not None:
            fake.stop()


def _config_path(config: str | None) -> Path:
    if config:
        return Path(config)
    local = Path(DEFAULT_CONFIG)
    if local.exists():
        return local
    return Path(__file__).with_name(DEFAULT_CONFIG)


def _banner(args: argparse.Namespace, env: dict[str, str], config: Path, fake_url: str | None) -> None:
    from .core.config.options import ENV_BASE, ENV_TOKEN
    from .core.protocol.endpoint import DEFAULT_BASE_URL

    base = f"http://{args.host}:{args.port}"
    lines = [
        "",
        "litellm-conol: starting the LiteLLM proxy with conol models",
        f"  proxy:  {base}  (config {config})",
    ]
    if fake_url:
        lines += [
            f"  conol:  OFFLINE — the bundled fake conol at {fake_url}",
            f"          ({_why_offline(args)}; answers are scripted, nothing leaves this machine)",
        ]
    else:
        lines.append(f"  conol:  {env.get(ENV_BASE) or DEFAULT_BASE_URL} (token from {ENV_TOKEN})")
    master = env["LITELLM_MASTER_KEY"]
    shown_key = master if master == DEFAULT_MASTER_KEY else "$LITELLM_MASTER_KEY"
    lines += [
        f"  key:    {shown_key}",
        "  try:",
        f"    curl {base}/v1/chat/completions -H 'Authorization: Bearer {shown_key}' \\",
        "      -H 'Content-Type: application/json' \\",
        """      -d '{"model": "conol/claude-haiku-4-5", "messages": [{"role": "user", "content": "Hi"}]}'""",
        "",
    ]
    print("\n".join(lines), flush=True)


def _why_offline(args: argparse.Namespace) -> str:
    from .core.config.options import ENV_TOKEN

    if args.fake and os.environ.get(ENV_TOKEN):
        return f"--fake: {ENV_TOKEN} is set and not used"
    return "--fake" if args.fake else f"no {ENV_TOKEN} set"


if __name__ == "__main__":
    raise SystemExit(main())
