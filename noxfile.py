"""One test session per LiteLLM line we support (``litellm>=1.108,<1.111``).

* ``tests-1.108``: the whole suite on the 1.108 LTS line (``constraints/litellm-1.108.txt``, which
  reads the shared ``constraints.txt``); ``make test`` runs the same in ``.venv``.
* ``tests-1.110``: on the 1.110 line (``constraints/litellm-1.110.txt``), the tests whose outcome a
  LiteLLM release can change (``LITELLM_SEAMS``); ``make test`` runs it after the 1.108 run, so CI
  covers both ends of the range. ``nox -s tests-1.110 -- tests/unit tests/integration`` runs both
  in-process tiers whole.
* ``proxy-1.110``: the proxy tier on 1.110. ``litellm[proxy]`` 1.110 needs the ``litellm-proxy``
  package (the CLI entry point), which not every package index has; the proxy code ships in the
  ``litellm`` wheel and starts from ``python -m litellm.proxy.proxy_cli`` with the extra's other
  dependencies (our ``proxy-runtime`` extra), which is how the tests start it.

Which tests depend on LiteLLM's version: those that check a seam where LiteLLM meets our code, by
what they exercise. The internals we read or patch; the LiteLLM types we build; and LiteLLM's entry
points, Router and provider checks driving the handler, with what they hand it (messages, tools,
images, params) and what they make of what comes back (chunks, usage, costs, errors). The rest checks
our own logic behind those seams (reuse, failures, structured output, faults, the fake, the core)
and runs on the default line only. A new test of a seam goes into ``LITELLM_SEAMS``.

Virtualenvs are reused (``.nox/``): a second run only checks the pins. ``nox -l`` lists the sessions.
"""

from __future__ import annotations

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests-1.108", "tests-1.110"]

ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
PROXY_TIER = ["tests/e2e"]
# each seam where LiteLLM meets our code, and the tests that check it (see the docstring)
LITELLM_SEAMS = {
    "LiteLLM internals we read or patch (provider/litellm_compat, params_patch, client/aiohttp_stream)": [
        "tests/unit/test_litellm_compat_contract.py",
        "tests/unit/test_params_patch.py",
        "tests/unit/test_aiohttp_internals.py",
    ],
    "LiteLLM types we build, and its exception mapping of our errors": [
        "tests/unit/test_chunks.py",
        "tests/unit/test_error_mapping.py",
        "tests/unit/test_failure_classes.py",
        "tests/unit/test_cutter.py",  # max_tokens counted with LiteLLM's token counter
    ],
    "completion, acompletion and streaming driving the handler, and LiteLLM's own provider checks": [
        "tests/integration/test_sdk.py",
        "tests/integration/test_litellm_conformance.py",
        "tests/integration/test_tools.py",
        "tests/integration/test_limits.py",
        "tests/integration/test_bad_input_sdk.py",
        "tests/integration/test_generate_content_sdk.py",  # the generateContent shim (litellm_compat)
    ],
    "the Router and its health checks": [
        "tests/integration/test_router.py",
        "tests/integration/test_router_in_code.py",
        "tests/integration/test_health_check.py",
        "tests/integration/test_accounts_sdk.py",  # our 429's retry-after as the Router's cooldown
        "tests/integration/test_accounts_router.py",  # the team config's Router over a pool of accounts
    ],
    "what LiteLLM hands the handler (histories, images) and makes of its usage and costs": [
        "tests/integration/test_reuse_sdk.py",
        "tests/integration/test_images_sdk.py",
        "tests/integration/test_readings_sdk.py",
        "tests/integration/test_model_map.py",
    ],
}
# worker processes (pytest-xdist), a test file per worker at a time (`-- … -n 0` runs in one process)
WORKERS = ["-n", "2", "--dist", "loadfile", "--no-loadscope-reorder"]


def _install(session: nox.Session, line: str) -> None:
    # --no-compile: bytecode is written as modules are first imported (see Makefile)
    pins = ["--no-compile", "-c", f"constraints/litellm-{line}.txt"]
    session.install(*pins, "-e", ".[dev]")
    # instructor caps jiter below what openai needs: installed without its dependencies (see Makefile)
    session.install(*pins, "--no-deps", "instructor")


def _pytest(session: nox.Session, *paths: str) -> None:
    # paths after `--` replace the session's own
    session.run("python", "-m", "pytest", *WORKERS, *(session.posargs or paths), env=ENV)


@nox.session(name="tests-1.108")
def tests_1_108(session: nox.Session) -> None:
    _install(session, "1.108")
    _pytest(session)


@nox.session(name="tests-1.110")
def tests_1_110(session: nox.Session) -> None:
    _install(session, "1.110")
    _pytest(session, *(test for tests in LITELLM_SEAMS.values() for test in tests))


@nox.session(name="proxy-1.110")
def proxy_1_110(session: nox.Session) -> None:
    _install(session, "1.110")
    _pytest(session, *PROXY_TIER)
