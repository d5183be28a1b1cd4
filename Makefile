# Two commands matter: `make run` (the proxy with conol models; offline against the bundled fake
# when CONOL_SESSION_TOKEN is unset) and `make test` (lint, types, the docs, the whole test suite on
# the LiteLLM 1.108 line, then on the 1.110 line the tests that depend on LiteLLM's version:
# noxfile.py). Each sets up .venv itself on first use: `make run` with what the proxy needs,
# `make test` (and the other targets) with the development tools too.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the default LiteLLM line's pins: its own, then the shared constraints.txt it reads
CONSTRAINTS := constraints/litellm-1.108.txt
PINS := pyproject.toml constraints.txt $(CONSTRAINTS)
RUN_STAMP := $(VENV)/.run-stamp
STAMP := $(VENV)/.installed-stamp
# pytest's worker processes in `make test` (pytest-xdist, a test file per worker at a time): the
# end-to-end tests spend most of their time waiting on the proxies and fakes they start
TEST_WORKERS ?= 3
export LITELLM_LOCAL_MODEL_COST_MAP := True
# Bytecode is cached (in .venv and the ignored __pycache__ folders) even where the environment turns
# it off: otherwise every test process and every proxy the tests start compiles LiteLLM from source,
# about 3 s each (docs/development.md#commands).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint typecheck docs unit bench bench-agent bench-reuse reuse-differential fake clean redis-server nox

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# --no-compile: bytecode is written as modules are first imported (cached, see above), not for every
# file of every package at install, most of which nothing here imports (pip's pass: ~40 s of CPU)
PIP_INSTALL := $(BIN)/python -m pip install --quiet --no-compile -c $(CONSTRAINTS)

# what `make run` needs: the package and the LiteLLM proxy's runtime (the proxy-runtime extra)
$(RUN_STAMP): $(PINS) | $(BIN)/python
	$(PIP_INSTALL) -e ".[proxy-runtime]"
	touch $(RUN_STAMP)

# everything else: the dev extra (the proxy runtime, the test clients and the tools). instructor (a
# structured-output client the tests drive) caps jiter below what openai needs: it is installed with
# --no-deps (its other requirements come with the test extra; it runs on the newer jiter).
$(STAMP): $(PINS) | $(BIN)/python
	$(PIP_INSTALL) -e ".[dev]"
	$(PIP_INSTALL) --no-deps instructor
	touch $(STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/litellm-conol serve $(ARGS)

# The 1.110 line's environment installs while the 1.108 tests run (a fresh machine waits on the
# package index more than on the CPU); its tests run after them, on that environment as installed.
NOX_INSTALL_LOG := .nox/tests-1.110-install.log
test: $(STAMP) redis-server lint typecheck docs
	@mkdir -p .nox
	@$(BIN)/nox -s tests-1.110 --install-only >$(NOX_INSTALL_LOG) 2>&1 & installing=$$!; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS); tested=$$?; \
	if ! wait $$installing; then cat $(NOX_INSTALL_LOG); exit 1; fi; \
	exit $$tested
	$(BIN)/nox -s tests-1.110 --no-install

# Other LiteLLM lines (noxfile.py): `make nox ARGS="-s proxy-1.110"`; `make nox ARGS=-l` lists them.
nox: $(STAMP)
	$(BIN)/nox $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The docs site (mkdocs.yml, docs/) must build without a warning; the site goes to a temporary
# directory that is removed, so nothing is left in the tree.
docs: $(STAMP)
	@site=$$(mktemp -d) && trap 'rm -rf "$$site"' EXIT \
		&& NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir "$$site"

# The tests of two proxy instances sharing Redis need a redis-server binary (they start their own on a
# free port). Installed with apt-get only when it is missing and we are root with apt; otherwise those
# tests skip with the reason (and fail under CI=true, so a green CI never hides a missing install).
redis-server:
	@if command -v redis-server >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "redis-server is missing: installing it with apt-get"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			-o DPkg::Lock::Timeout=300 redis-server; } \
		|| echo "apt-get could not install redis-server: the Redis tests will skip (and fail under CI=true)"; \
	else \
		echo "redis-server is missing and cannot be installed here (needs root and apt-get):" \
			"the Redis tests will skip (and fail under CI=true)"; \
	fi

# The unit tier (tests/README.md): no sockets, no subprocesses, under 15 s. The property tests run
# fewer examples here (CONOL_FUZZ_EXAMPLES); `make test` runs them in full.
unit: $(STAMP)
	CONOL_FUZZ_EXAMPLES=$${CONOL_FUZZ_EXAMPLES:-20} $(BIN)/python -m pytest tests/unit $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(ARGS)

# The agent-shaped rows of `make bench` alone (bench/agent.py): Claude Code's /v1/messages requests,
# conol/ against LiteLLM's anthropic/ provider (~2.5 min; ARGS=--quick < 1.5 min); prints only.
bench-agent: $(STAMP)
	$(BIN)/python -m bench.agent $(ARGS)

fake: $(RUN_STAMP)
	$(BIN)/litellm-conol fake $(ARGS)

clean:
	rm -rf $(VENV) .nox build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Session reuse on vs off: a 20-turn Claude-Code-shaped task (bench/reuse.py): bytes sent and received
# and the client's CPU per turn, follow-up streams replaying earlier turns or not, and a profile of a
# replaying run (~1.5 min); ARGS=--write writes the tables to bench/RESULTS.md (replacing the earlier ones).
bench-reuse: $(STAMP)
	$(BIN)/python -m bench.reuse $(ARGS)

# The reuse differential test's long mode (tests/integration/test_reuse_differential.py): the named
# conversations and 60 generated ones (CI runs 2), each under all 36 readings, reuse on and off
# (~30 min on 2 cores).
reuse-differential: $(STAMP)
	CONOL_DIFF_EXAMPLES=$${CONOL_DIFF_EXAMPLES:-60} $(BIN)/python -m pytest tests/integration/test_reuse_differential.py $(PYTEST_ARGS)
