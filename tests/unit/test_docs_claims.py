"""The docs cannot drift from the code: an option, a command-line flag or a ``make`` target the pages
name exists, and every one that exists is documented (docs/development.md#checks-on-the-structure).

Read from the pages (docs/*.md and the README): backticked option names in the option tables, the
flags and subcommands in code (inline spans and fenced blocks), ``make <target>`` in code, the
module tables of docs/development.md. Read from the code: the settings model, the argparse parsers,
the Makefile, the package's files. Pure file reads and imports: no sockets, no processes.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import litellm
import pytest
import yaml
from markdown.extensions.toc import slugify
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
    "--no-compile": "pip",
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


# --- the list of pages: mkdocs.yml's nav is the one list; the README's is it, rendered -----------------


def site_navigation() -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(title, page)]) of mkdocs.yml's nav, in order."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    sections = []
    for entry in nav:
        ((section, pages),) = entry.items()
        sections.append((section, [next(iter(page.items())) for page in pages]))
    return sections


def pages_table(sections: list[tuple[str, list[tuple[str, str]]]]) -> str:
    """The README's list of pages, rendered from the site navigation."""
    rows = ["| docs | |", "|---|---|"]
    for section, pages in sections:
        rows.append(f"| {section.lower()} | " + ", ".join(f"[{t}](docs/{page})" for t, page in pages) + " |")
    return "\n".join(rows)


def test_every_page_is_in_the_site_navigation_once():
    listed = [page for _, pages in site_navigation() for _, page in pages]
    assert sorted(listed) == sorted(name for name in PAGES if name != "README.md")


def test_the_readme_lists_the_pages_of_the_site_navigation():
    readme = PAGES["README.md"]
    block = readme[readme.index("<!-- pages -->\n") + 15 : readme.index("\n<!-- /pages -->")]
    expected = pages_table(site_navigation())
    assert block == expected, f"the README's list of pages, from mkdocs.yml's nav:\n{expected}"


def test_the_readme_links_the_tutorial_and_fits_one_screen():
    readme = PAGES["README.md"]
    assert "(docs/tutorial.md)" in readme
    assert len(readme.splitlines()) <= 60


# --- references: every file, page anchor and dotted name the repository cites resolves --------------
#
# Read from everything a reader follows a pointer from: the comments and docstrings of the Python code
# (the package, the tests, the benchmark, noxfile.py), the pages and READMEs, pyproject.toml, the
# Makefile, mkdocs.yml, the deploy files and the constraints. Not read: CHANGELOG.md (history: it names
# what was) and bench/RESULTS.md (a run's output, quoted as printed).

# not the repository's own: environments, caches and build output (deploy/install.sh builds into build/)
SKIPPED_DIRS = {
    *(".git", ".venv", ".nox", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache", "__pycache__"),
    *("build", "dist", "site", "node_modules"),
}
SCANNED_FOLDERS = ("litellm_conol", "tests", "bench", "docs", "deploy", "constraints", ".ci")
SCANNED_FILES = ("README.md", "pyproject.toml", "Makefile", "noxfile.py", "mkdocs.yml", "proxy_config.yaml")
NOT_SCANNED = {"CHANGELOG.md", "bench/RESULTS.md"}
SCANNED_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".sh", ".service", ""}

# Files named that are not in this repository, and whose they are (each must still be named somewhere).
FOREIGN_FILES = {
    "first.py": "the reader's own file (docs/tutorial.md)",
    "notes.md": "the reader's own notes (bench/README.md)",
    "tests/local_testing/test_streaming.py": "LiteLLM's repository (its tests are not in the wheel)",
    "tests/llm_translation/base_llm_unit_tests.py": "LiteLLM's repository",
    "base_llm_unit_tests.py": "LiteLLM's repository",
    "test_streaming.py": "LiteLLM's repository",
    "router_utils/cooldown_handlers.py": "LiteLLM's package (docs/team-deployment.md)",
    "litellm/router_rust/core.py": "LiteLLM 1.110's package (docs/litellm-versions.md)",
    "core.py": "LiteLLM 1.110's router_rust/core.py (docs/litellm-versions.md)",
    "router_rust/surface/health.py": "LiteLLM 1.110's package (docs/litellm-versions.md)",
    "litellm_core_utils/litellm_logging.py": "LiteLLM's package (docs/litellm-versions.md)",
}
# Private names of other packages' internals that comments and pages name (each must still be named).
FOREIGN_NAMES = {
    "_should_retry": "openai",
    "_hidden_params": "litellm",
    "_iter_with_keepalive": "litellm",
    "_Prisma__engine": "prisma",
    "_should_cooldown_deployment": "litellm",
    "_is_allowed_fails_set_on_router": "litellm",
    "_sleep_seconds": "litellm 1.110",
    "_records_blocked": "litellm 1.110 (router_rust/core.py)",
}
# Variables the docs name by convention: ``fake.assets`` is an attribute of a ``FakeConol``.
INSTANCE_NAMES = {"fake": "FakeConol", "conol_fake": "FakeConol", "proxy_fake": "FakeConol"}
ROOMS = ("core", "reuse", "client", "provider", "ops", "fake")
FILE_SUFFIXES = "py|md|toml|ya?ml|txt|json|sh|service|cfg|ini|rs"

PATH_REF = re.compile(
    r"(?<![\w/.:~@<$-])((?:\.\.?/)?[\w.*-]+(?:/[\w.*-]+)*\.(?:" + FILE_SUFFIXES + r"))(?![\w/])"
    r"((?:#[\w-]+)(?:,\s*#[\w-]+)*)?"
)
SPAN = re.compile(r"(`+)([^`\n]+?)\1")
DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?")
PRIVATE = re.compile(r"_[A-Za-z]\w*")


def _repository_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        found += [Path(folder) / name for name in files]
    return found


def _prose_of_python(source: str) -> str:
    """A module's comments and docstrings: where it points a reader elsewhere."""
    lines = io.StringIO(source).readline
    pieces = [token.string for token in tokenize.generate_tokens(lines) if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            pieces.append(ast.get_docstring(node, clean=False) or "")
    return "\n".join(pieces)


def _scanned_texts(files: list[Path]) -> dict[str, str]:
    texts = {}
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        top = name.split("/")[0]
        scanned = (top in SCANNED_FOLDERS and "/" in name) or name in SCANNED_FILES
        if not scanned or name in NOT_SCANNED or path.suffix not in SCANNED_SUFFIXES:
            continue
        if name.startswith("tests/fixtures/") and path.suffix not in (".py", ".md"):
            continue  # recorded data
        text = path.read_text(encoding="utf-8")
        texts[name] = _prose_of_python(text) if path.suffix == ".py" else text
    return texts


FILES = _repository_files()
TEXTS = _scanned_texts(FILES)
BASENAMES = {name: [path for path in FILES if path.name == name] for name in {path.name for path in FILES}}


# --- what the Python code defines (read with ast, not imported)


def _module_names() -> dict[str, Path]:
    """``litellm_conol.core.errors`` and ``support.chat`` → their files (packages: ``__init__.py``)."""
    modules = {}
    for base, package in ((ROOT, "litellm_conol"), (ROOT / "tests", "support")):
        for path in (base / package).rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A module's statements, through ``if``/``try`` blocks (``if TYPE_CHECKING:`` imports count)."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.Try):
            yield from _top_level([*node.body, *node.orelse, *getattr(node, "finalbody", [])])


def _bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {
        name.id for target in targets if target for name in ast.walk(target) if isinstance(name, ast.Name)
    }


def _class_members(cls: ast.ClassDef) -> set[str]:
    """What a class defines: methods, class-level names and fields, and what its methods set on self."""
    members = set().union(*(_bound_names(node) for node in cls.body))
    for node in ast.walk(cls):
        stored = isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        if stored and isinstance(node.value, ast.Name) and node.value.id == "self":
            members.add(node.attr)
    return members


def _definitions(paths: list[Path]) -> tuple[dict[str, set[str]], set[str], set[str]]:
    """Every class and its members, every name bound anywhere, every logger's name."""
    classes: dict[str, set[str]] = {}
    defined: set[str] = set()
    loggers: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, set()).update(_class_members(node))
            if isinstance(node, ast.stmt) and not isinstance(node, ast.Import):
                defined |= _bound_names(node)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            if isinstance(node, ast.arg):
                defined.add(node.arg)
            named = isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "getLogger"
            if named and node.args and isinstance(node.args[0], ast.Constant):
                loggers.add(str(node.args[0].value))
    return classes, defined, loggers


MODULES = _module_names()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}
TOP_NAMES = {name: set().union(*map(_bound_names, _top_level(tree.body))) for name, tree in TREES.items()}
CLASSES, DEFINED, LOGGERS = _definitions([path for path in FILES if path.suffix == ".py"])
DEFINED |= {name.rpartition(".")[2] for name in MODULES}
PRIVATE_MODULES = {
    name.rpartition(".")[2]: name for name in MODULES if name.rpartition(".")[2].startswith("_")
}


def _in_modules(parts: list[str]) -> bool:
    """``parts`` name a module, then a name it defines, then (for a class) one of its members."""
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in MODULES:
            break
    else:
        return False
    rest = parts[cut:]
    if not rest:
        return True
    if rest[0] not in TOP_NAMES[module]:
        return False
    return len(rest) == 1 or rest[0] not in CLASSES or rest[1] in CLASSES[rest[0]]


def dotted_name_resolves(dotted: str) -> bool | None:
    """Whether a dotted name in a code span names something that exists; ``None`` when it is not ours
    (``litellm.token_counter``, ``response.choices``)."""
    parts = dotted.split(".")
    first = parts[0]
    if dotted in LOGGERS:
        return True
    if first in ("litellm_conol", "support"):
        return _in_modules(parts)
    if first in INSTANCE_NAMES and parts[1] in CLASSES[INSTANCE_NAMES[first]]:
        return True
    if first in ROOMS:
        return _in_modules(["litellm_conol", *parts])
    if first in PRIVATE_MODULES:
        return _in_modules([*PRIVATE_MODULES[first].split("."), *parts[1:]])
    if PRIVATE.fullmatch(first):
        return first in DEFINED or first in FOREIGN_NAMES
    if first in CLASSES and first[0].isupper():
        return parts[1] in CLASSES[first]
    return None


# --- what the pages and files are


def _slugs(page: str) -> set[str]:
    """The anchors of a page's headings, as mkdocs makes them (Python-Markdown's toc slugify)."""
    slugs: set[str] = set()
    fenced = False
    for line in page.splitlines():
        fenced ^= line.lstrip().startswith("```")
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading and not fenced:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).replace("`", "")
            slug = base = slugify(text, "-")
            count = 0
            while slug in slugs:
                count += 1
                slug = f"{base}_{count}"
            slugs.add(slug)
    return slugs


LITELLM_SOURCE = Path(litellm.__file__).resolve().parents[1]


def _file_of(reference: str, cited_in: str) -> Path | None:
    """Where a file named in ``cited_in`` is: next to it, or from the repository's top, the package,
    the tests or the pages (``litellm/…``: LiteLLM's installed source); a bare name (``./name``): the
    one file so named below the citing file's folder, else in the repository."""
    here = (ROOT / cited_in).parent
    for base in (here, ROOT, ROOT / "litellm_conol", ROOT / "tests", ROOT / "docs", LITELLM_SOURCE):
        matches = sorted(base.glob(reference)) if "*" in reference else [base / reference]
        if matches and matches[0].exists():
            return matches[0]
    bare = reference.removeprefix("./")
    if "/" in bare:
        return None
    named = BASENAMES.get(bare, [])
    below = [path for path in named if path.is_relative_to(here)]
    return below[0] if len(below) == 1 else named[0] if len(named) == 1 else None


def path_references() -> Iterator[tuple[str, str, Path | None, list[str]]]:
    """(where, the path as written, the file it names or None, the anchors it names)."""
    for where, text in TEXTS.items():
        for match in PATH_REF.finditer(text):
            reference = match.group(1)
            if "/" not in reference and not reference.endswith((".py", ".md")):
                continue  # a bare config.yaml or x.json: an example of the reader's own file
            anchors = re.findall(r"#([\w-]+)", match.group(2) or "")
            yield where, reference, _file_of(reference, where), anchors


def span_names() -> Iterator[tuple[str, str]]:
    """(where, a dotted or private name written as code: ``a.b`` in a docstring, `a.b` on a page)."""
    for where, text in TEXTS.items():
        for match in SPAN.finditer(text):
            span = match.group(2).strip()
            dotted = DOTTED.fullmatch(span)
            if dotted and not re.search(r"\.(" + FILE_SUFFIXES + r")$", dotted.group(1)):
                yield where, dotted.group(1)
            elif PRIVATE.fullmatch(span):
                yield where, span


def test_every_file_named_exists():
    """``core/protocol/wire.py``, ``docs/cli.md`` or ``tests/e2e/conftest.py`` in a comment, a page or
    pyproject.toml is a promise that the file is there: a move that forgets a pointer fails here."""
    missing = sorted(
        f"{where}: {reference}"
        for where, reference, found, _ in path_references()
        if found is None and reference not in FOREIGN_FILES
    )
    assert missing == []
    named = {reference for _, reference, _, _ in path_references()}
    assert sorted(set(FOREIGN_FILES) - named) == [], "no longer named: drop them from FOREIGN_FILES"


def test_every_page_anchor_named_exists():
    """``docs/protocol.md#follow-up-turns`` (and ``, #readings`` after it) names a heading of that page."""
    slugs: dict[Path, set[str]] = {}
    broken = []
    for where, reference, found, anchors in path_references():
        if found is None or found.suffix != ".md" or not anchors:
            continue
        known = slugs.setdefault(found, _slugs(found.read_text(encoding="utf-8")))
        broken += [f"{where}: {reference}#{anchor}" for anchor in anchors if anchor not in known]
    assert sorted(broken) == []


def test_every_dotted_name_named_exists():
    """``litellm_conol.fake.FakeConol``, ``reuse.shared_state``, ``support.timing.bound``,
    ``Reuse.bind``, ``_records.READINGS`` or a private ``_name`` written as code names something the
    code defines (read with ast)."""
    missing = sorted(
        {f"{where}: {name}" for where, name in span_names() if dotted_name_resolves(name) is False}
    )
    assert missing == []
    named = {name for _, name in span_names()}
    assert sorted(set(FOREIGN_NAMES) - named) == [], "no longer named: drop them from FOREIGN_NAMES"
