# Two commands matter: `make run` (the proxy with conol models; offline against the bundled fake
# when CONOL_SESSION_TOKEN is unset) and `make test` (lint, types, the whole test suite on the LiteLLM
# 1.108 line, then the unit and SDK tiers on the 1.110 line: noxfile.py).
# Each sets up .venv itself on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export LITELLM_LOCAL_MODEL_COST_MAP := True
# Bytecode is cached (in .venv and the ignored __pycache__ folders) even where the environment turns
# it off: otherwise every test process and every proxy the tests start compiles LiteLLM from source,
# about 3 s each (docs/development.md#commands).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint typecheck docs unit bench bench-reuse reuse-differential fake clean redis-server nox

# instructor (a structured-output client the tests drive) caps jiter below what openai needs: it is
# installed with --no-deps (its other requirements come with the test extra; it runs on the newer jiter).
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt instructor
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/litellm-conol serve $(ARGS)

# On the 1.110 line CI runs the unit tier and the SDK files that touch what LiteLLM versions change
# (chunks, params, model map, conformance); `make nox ARGS=-s tests-1.110` runs both whole tiers.
TESTS_1_110 := tests/unit tests/integration/test_sdk.py tests/integration/test_litellm_conformance.py \
	tests/integration/test_model_map.py tests/integration/test_tools.py tests/integration/test_reuse_sdk.py \
	tests/integration/test_images_sdk.py tests/integration/test_readings_sdk.py

test: $(STAMP) redis-server lint typecheck docs
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(BIN)/nox -s tests-1.110 -- $(TESTS_1_110)

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

fake: $(STAMP)
	$(BIN)/litellm-conol fake $(ARGS)

clean:
	rm -rf $(VENV) .nox build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Session reuse on vs off: a 20-turn Claude-Code-shaped task (bench/reuse.py): bytes sent and received
# and the client's CPU per turn, follow-up streams replaying earlier turns or not, and a profile of a
# replaying run (~1.5 min); ARGS=--write appends the tables to bench/RESULTS.md.
bench-reuse: $(STAMP)
	$(BIN)/python -m bench.reuse $(ARGS)

# The reuse differential test's long mode (tests/integration/test_reuse_differential.py): the named
# conversations and 60 generated ones (CI runs 2), each under all 36 readings, reuse on and off
# (~30 min on 2 cores).
reuse-differential: $(STAMP)
	CONOL_DIFF_EXAMPLES=$${CONOL_DIFF_EXAMPLES:-60} $(BIN)/python -m pytest tests/integration/test_reuse_differential.py $(PYTEST_ARGS)
