"""The public API is the documented list: ``__all__`` holds exactly it, each name resolves lazily to
the object its module defines, other names raise, importing the package loads no LiteLLM, and docs/api.md renders each public name
and no other."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
import warnings

import griffe
import pytest
from support.paths import ROOT

import litellm_conol

pytestmark = pytest.mark.timeout(120)

# What a user imports (docs/api.md); changing it is an API change: CHANGELOG.md says which way.
DOCUMENTED = [
    "register",
    "conol_llm",
    "ConolLLM",
    "PROVIDER",
    "ConolError",
    "BadRequest",
    "ImageTooLarge",
    "ImageTypeUnsupported",
    "ModelDowngraded",
    "MissingCredential",
    "AuthenticationFailed",
    "PermissionDenied",
    "ModelNotFound",
    "RequestTimeout",
    "RateLimited",
    "AgentFailed",
    "AgentFailedPermanently",
    "OutOfCredits",
    "AccountResting",
    "UpstreamError",
    "UpstreamUnavailable",
    "InvalidStructuredOutput",
    "FakeConol",
    "FakeConfig",
    "Scenario",
    "record_session",
    "load_recording",
    "replay_scenario",
]


def test_all_is_exactly_the_documented_list():
    assert litellm_conol.__all__ == DOCUMENTED
    assert dir(litellm_conol) == sorted(DOCUMENTED)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_each_public_name_resolves_to_its_modules_object_without_a_warning(name):
    defining = importlib.import_module(litellm_conol._PUBLIC[name], "litellm_conol")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = getattr(litellm_conol, name)
    assert value is getattr(defining, name)
    if isinstance(value, type) or inspect.isfunction(value):
        assert value.__module__ == defining.__name__  # the defining module, not a re-export


def test_every_error_class_a_caller_can_catch_is_public():
    errors = importlib.import_module("litellm_conol.core.errors")
    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.ConolError)
    }
    assert sorted(defined - set(DOCUMENTED)) == []


def test_internal_and_unknown_names_raise():
    for name in ("Assembler", "Catalog", "Nothing"):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(litellm_conol, name)


def _type_checking_imports() -> dict[str, str]:
    """name → relative module of each import under ``if TYPE_CHECKING:`` in the package's __init__."""
    tree = ast.parse((ROOT / "litellm_conol" / "__init__.py").read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: "." * node.level + (node.module or "")
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_type_checking_imports_mirror_the_public_list():
    # type checkers and the API reference (griffe) read these; the run time reads _PUBLIC
    assert _type_checking_imports() == litellm_conol._PUBLIC


NO_LITELLM_PROBE = """
import sys
import litellm_conol, litellm_conol.pytest_plugin
print(sorted(litellm_conol.__all__) == sorted(litellm_conol._PUBLIC))
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "httpx", "aiohttp"))))
"""


@pytest.mark.allow_subprocess(reason="a fresh interpreter: this one has litellm imported already")
def test_importing_the_package_and_its_pytest_plugin_loads_no_litellm():
    result = subprocess.run(
        [sys.executable, "-c", NO_LITELLM_PROBE], capture_output=True, text=True, timeout=100, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["True", ""]


# --- the API reference (docs/api.md) ---------------------------------------------------------------

API_PAGE = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
RENDERED = re.findall(r"^::: ([\w.]+)$", API_PAGE, re.MULTILINE)


def test_the_api_page_renders_every_public_name_once_and_nothing_else():
    # the pytest plugin's fixtures are documented by rendering its module: they are not imported
    expected = [f"litellm_conol.{name}" for name in DOCUMENTED] + ["litellm_conol.pytest_plugin"]
    assert sorted(RENDERED) == sorted(expected)


def _static_package() -> griffe.Module:
    """The package as the API page's renderer (griffe, through mkdocstrings) reads it."""
    package = griffe.load("litellm_conol", search_paths=[str(ROOT)], resolve_aliases=True)
    assert isinstance(package, griffe.Module)
    return package


STATIC = _static_package()


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_renderer_sees_each_public_name_with_a_docstring_of_its_own(name):
    found = STATIC[name]
    assert found.target_path == f"litellm_conol{litellm_conol._PUBLIC[name]}.{name}"
    docstring = found.docstring.value if found.docstring else ""
    assert len(docstring.split()) >= 8, f"{name}: {docstring!r}"


def test_the_renderer_sees_every_fixture_of_the_pytest_plugin_with_a_docstring():
    plugin = importlib.import_module("litellm_conol.pytest_plugin")
    fixtures = sorted(
        name for name, value in vars(plugin).items() if hasattr(value, "_fixture_function_marker")
    )
    assert fixtures == ["conol_fake", "conol_fake_session"]
    for fixture in fixtures:
        docstring = STATIC["pytest_plugin"][fixture].docstring
        assert docstring is not None and len(docstring.value.split()) >= 8, fixture
