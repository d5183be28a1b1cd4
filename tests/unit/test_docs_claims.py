"""The docs cannot drift from the code: an option, a command-line flag or a ``make`` target the pages
name exists, and every one that exists is documented (docs/development.md#checks-on-the-structure).

Read from the pages (docs/*.md and the README): backticked option names in the option tables, the
flags and subcommands in code (inline spans and fenced blocks), ``make <target>`` in code, the
module tables of docs/development.md. Read from the code: the settings model, the argparse parsers,
the Makefile, the package's files. Pure file reads and imports: no sockets, no processes.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from support.paths import ROOT

from litellm_conol.cli import command_parsers
from litellm_conol.core.config.settings_table import SETTINGS
from litellm_conol.ops.cli_doc import cli_markdown, page_with_cli

PAGES = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
PAGES["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")

# Flags of programs that are not ours, named on the pages; where the program is in this repository,
# the file that defines the flag (the test checks it is there).
FOREIGN_FLAGS = {
    "--quick": "bench/__main__.py",
    "--only": "bench/__main__.py",
    "--write": "bench/reuse.py",
    "--no-deps": "pip",
    "--strict": "mkdocs",
    "--num_workers": "litellm",
    "--timeout_worker_healthcheck": "litellm",
    "--run_gunicorn": "litellm",
    "--save": "redis-server",
    "--appendonly": "redis-server",
    "--continue": "claude",
    "--skip-git-repo-check": "codex",
    "--last": "codex",
    "--yolo": "gemini",
    "--resume": "gemini",
    "--skip-trust": "gemini",
}

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*")
# `litellm-conol <command> …`, `python -m litellm_conol.fake …`, `make run|fake ARGS="…"`
INVOCATION = re.compile(
    r"(?<![\w/.-])(?:litellm-conol(?:\s+(?P<command>[a-z][a-z-]*))?|(?P<module>python -m litellm_conol\.fake)"
    r"|make (?P<target>run|fake) ARGS=)"
)
MAKE = re.compile(r"(?<![\w/.-])make ([a-z][a-z0-9._-]*)")
MAKE_TARGET = re.compile(r"^([a-z][a-z0-9_-]*):(?!=)", re.MULTILINE)


def code_of(page: str) -> list[str]:
    """The page's code: each line of a fenced block (without a trailing ``# comment``), each
    inline span."""
    pieces: list[str] = []
    prose: list[str] = []
    fenced = False
    for line in page.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            pieces.append(re.sub(r"\s#\s.*$", "", line))
        else:
            prose.append(line)
    text = "\n".join(prose)
    pieces += [match.group(2) for match in re.finditer(r"(`+)(.+?)\1", text)]
    return pieces


CODE = {name: code_of(page) for name, page in PAGES.items()}


# --- options ----------------------------------------------------------------------------------------

OPTIONS = {name for name, setting in SETTINGS.items() if setting.param}
ENV_VARS = {setting.env for setting in SETTINGS.values() if setting.env}


def option_tables(page: str) -> list[tuple[int, set[str]]]:
    """(line number, backticked names) of each row of a table whose first column holds options:
    its header starts with ``option`` or is ``litellm_params``."""
    rows: list[tuple[int, set[str]]] = []
    in_options = False
    lines = page.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.startswith("|"):
            in_options = False
            continue
        first = line.split("|")[1].strip()
        if number < len(lines) and re.fullmatch(r"\|(\s*-+\s*\|)+", lines[number].strip()):
            in_options = first.lower().startswith("option") or first == "`litellm_params`"
            continue
        if in_options and not re.fullmatch(r"(\s*-+\s*\|)+", line[1:]):
            rows.append((number, set(re.findall(r"`([a-z_][a-z0-9_]*)`", first))))
    return rows


def documented_options() -> dict[str, set[str]]:
    return {
        f"{name}:{number}": names for name, page in PAGES.items() for number, names in option_tables(page)
    }


def test_every_option_a_table_names_exists():
    unknown = {where: sorted(names - OPTIONS) for where, names in documented_options().items()}
    assert {where: names for where, names in unknown.items() if names} == {}


def test_every_option_is_documented_in_an_options_table():
    seen = set().union(*documented_options().values())
    assert sorted(OPTIONS - seen) == []


def test_every_documented_conol_environment_variable_exists():
    sources = [ROOT / "Makefile", *ROOT.glob("litellm_conol/**/*.py"), *ROOT.glob("tests/**/*.py")]
    code = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    named = {
        var
        for pieces in CODE.values()
        for piece in pieces
        for var in re.findall(r"\b[A-Z][A-Z0-9_]+\b", piece)
    }
    conol = {var for var in named if var.startswith("CONOL_")}
    assert sorted(var for var in conol - ENV_VARS if f'"{var}"' not in code and f"{var}=" not in code) == []
    assert sorted(ENV_VARS - named) == []


# --- the command line -------------------------------------------------------------------------------

PARSERS = command_parsers()


def flags_of(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    root = PARSERS["litellm-conol"]
    action = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


COMMANDS = subcommands()
PROGRAM_FLAGS = {name: flags_of(parser) for name, parser in COMMANDS.items()} | {
    "litellm-conol": flags_of(PARSERS["litellm-conol"]),
    "python -m litellm_conol.fake": flags_of(PARSERS["python -m litellm_conol.fake"]),
}
ALL_FLAGS = set().union(*PROGRAM_FLAGS.values()) - {"--help"}


def invocations() -> list[tuple[str, str, str]]:
    """(page, the command or program named, the text that follows it up to the next invocation)."""
    found = []
    for name, pieces in CODE.items():
        for piece in pieces:
            matches = list(INVOCATION.finditer(piece))
            for match, after in zip(matches, [*matches[1:], None][: len(matches)], strict=True):
                rest = piece[match.end() : after.start() if after else None]
                program = match["command"] or match["target"] or match["module"] or "litellm-conol"
                found.append((name, program, rest))
    return found


def test_every_subcommand_named_exists():
    named = {program for _, program, _ in invocations()}
    assert sorted(named - set(COMMANDS) - {"litellm-conol", "python -m litellm_conol.fake", "run"}) == []


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_flag_given_to_one_of_our_commands_is_one_of_its_flags(page):
    run = {"run": "serve"}
    wrong = {
        (program, flag)
        for name, program, rest in invocations()
        if name == page
        for flag in FLAG.findall(rest)
        if flag not in PROGRAM_FLAGS.get(run.get(program, program), set())
    }
    assert sorted(wrong) == []


def test_every_flag_named_exists_in_our_parsers_or_is_a_known_programs():
    named = {flag for pieces in CODE.values() for piece in pieces for flag in FLAG.findall(piece)}
    unknown = named - ALL_FLAGS - set(FOREIGN_FLAGS)
    assert sorted(unknown) == []
    for flag, where in FOREIGN_FLAGS.items():
        assert flag in named, f"{flag} ({where}) is no longer on any page: drop it from FOREIGN_FLAGS"
        if "/" in where:
            assert f'"{flag}"' in (ROOT / where).read_text(encoding="utf-8"), (flag, where)


def test_every_flag_and_subcommand_is_documented():
    named = {flag for pieces in CODE.values() for piece in pieces for flag in FLAG.findall(piece)}
    assert sorted(ALL_FLAGS - named) == []
    index = {program for name, program, _ in invocations() if name == "index.md"}
    assert sorted(set(COMMANDS) - index) == [], "docs/index.md's command table misses these"


def test_the_cli_page_holds_the_reference_generated_from_the_parsers():
    page = PAGES["cli.md"]
    assert page == page_with_cli(page, PARSERS), "run: litellm-conol commands --write-docs docs/cli.md"


def test_the_reference_renders_commands_options_defaults_and_help():
    parser = argparse.ArgumentParser(prog="tool", description="Does ``things``.")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run it | now")
    run.add_argument("--port", "-p", type=int, default=8, help="the port")
    run.add_argument("--mode", choices=["a", "b"], default="a")
    run.add_argument("--dry", action="store_true", help="do nothing")
    run.add_argument("--out", required=True, metavar="FILE")
    commands.add_parser("idle")
    assert cli_markdown({"tool": parser}) == (
        "## `tool`\n\nDoes `things`.\n\n"
        "| command | what it does |\n|---|---|\n"
        "| [`run`](#tool-run) | run it \\| now |\n| [`idle`](#tool-idle) |  |\n\n"
        "### `tool run`\n\nrun it \\| now\n\n"
        "| option | default | meaning |\n|---|---|---|\n"
        "| `--port PORT`, `-p PORT` | `8` | the port |\n"
        "| `--mode {a,b}` | `a` |  |\n"
        "| `--dry` | — | do nothing |\n"
        "| `--out FILE` | required |  |\n\n"
        "### `tool idle`\n\n\n\nNo options.\n"
    )


# --- make targets -----------------------------------------------------------------------------------

TARGETS = set(MAKE_TARGET.findall((ROOT / "Makefile").read_text(encoding="utf-8")))


def test_every_make_target_named_exists_and_every_target_is_named():
    named = {target for pieces in CODE.values() for piece in pieces for target in MAKE.findall(piece)}
    assert (sorted(named - TARGETS), sorted(TARGETS - named)) == ([], [])


# --- the module tables of docs/development.md ---------------------------------------------------------


def _modules_of(folder: Path) -> set[str]:
    """Every module of a package, as a path below it without ``.py`` (``protocol/wire``); a private
    sub-package (``_library``) counts as one."""
    found = set()
    for path in folder.rglob("*.py"):
        relative = path.relative_to(folder)
        private = next((part for part in relative.parts[:-1] if part.startswith("_")), None)
        if private is not None:
            found.add("/".join(relative.parts[: relative.parts.index(private) + 1]))
        elif path.stem not in ("__init__", "__main__"):
            found.add(relative.with_suffix("").as_posix())
    return found


@pytest.mark.parametrize("package", ["core", "reuse", "client", "provider", "ops", "fake"])
def test_the_development_page_lists_every_module_of_each_package(package):
    page = PAGES["development.md"]
    block = page[page.index(f"<!-- modules:{package} -->") : page.index(f"<!-- /modules:{package} -->")]
    listed = set(re.findall(r"^\| `([\w/]+)` \|", block, re.MULTILINE))
    present = _modules_of(ROOT / "litellm_conol" / package)
    assert (sorted(listed - present), sorted(present - listed)) == ([], [])


def test_every_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert sorted(name for name in PAGES if name != "README.md" and f": {name}\n" not in nav) == []


def test_the_readme_links_the_tutorial_and_fits_one_screen():
    readme = PAGES["README.md"]
    assert "(docs/tutorial.md)" in readme
    assert len(readme.splitlines()) <= 60


# --- module paths named in the docs and in the code's own comments ---------------------------------

MODULE_PATH = re.compile(r"(?<![\w/.-])((?:core|reuse|client|provider|ops|fake)/[\w/]+\.py)\b")


def _texts_naming_modules() -> dict[str, str]:
    texts = {f"docs/{name}": text for name, text in PAGES.items()}
    for folder in ("litellm_conol", "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            texts[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return texts


def test_every_module_path_named_in_the_docs_and_comments_exists():
    """``core/protocol/wire.py`` in a page or a comment is a promise that the file is there: a move
    that forgets a pointer fails here (LiteLLM's own paths name ``litellm/…`` and do not match)."""
    missing = sorted(
        f"{where}: {path}"
        for where, text in _texts_naming_modules().items()
        for path in set(MODULE_PATH.findall(text))
        if not (ROOT / "litellm_conol" / path).exists()
    )
    assert missing == []
