"""One test session per LiteLLM line we support (``litellm>=1.108,<1.111``).

* ``tests-1.108``: the whole suite on the 1.108 LTS line (``constraints/litellm-1.108.txt``: the
  project's ``constraints.txt``; what ``make test`` runs in ``.venv``).
* ``tests-1.110``: the unit and SDK tiers on 1.110 (``constraints/litellm-1.110.txt``); ``make test``
  runs it too, so CI covers both ends of the range.
* ``proxy-1.110``: the proxy tier on 1.110. ``litellm[proxy]`` 1.110 needs the ``litellm-proxy``
  package (the CLI entry point, absent from the registry here); the proxy code ships in the
  ``litellm`` wheel and starts from ``python -m litellm.proxy.proxy_cli`` with the extra's other
  dependencies (our ``proxy-runtime`` extra), which is how the tests start it.

Virtualenvs are reused (``.nox/``): a second run only checks the pins. ``nox -l`` lists the sessions.
"""

from __future__ import annotations

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests-1.108", "tests-1.110"]

ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
# the tiers (tests/unit: no sockets; tests/integration: the SDK in process against the fake)
SDK_TIERS = ["tests/unit", "tests/integration"]
PROXY_TIER = ["tests/e2e"]


def _install(session: nox.Session, line: str) -> None:
    constraints = f"constraints/litellm-{line}.txt"
    session.install("-c", constraints, "-e", ".[dev]")
    # instructor caps jiter below what openai needs: installed without its dependencies (see Makefile)
    session.install("--no-deps", "-c", constraints, "instructor")


def _pytest(session: nox.Session, *paths: str) -> None:
    # paths after `--` replace the session's own (make test picks a shorter 1.110 set to keep CI short)
    session.run("python", "-m", "pytest", *(session.posargs or paths), env=ENV)


@nox.session(name="tests-1.108")
def tests_1_108(session: nox.Session) -> None:
    _install(session, "1.108")
    _pytest(session)


@nox.session(name="tests-1.110")
def tests_1_110(session: nox.Session) -> None:
    _install(session, "1.110")
    _pytest(session, *SDK_TIERS)


@nox.session(name="proxy-1.110")
def proxy_1_110(session: nox.Session) -> None:
    _install(session, "1.110")
    _pytest(session, *PROXY_TIER)
