# Two commands matter: `make run` (the proxy with conol models; offline against the bundled fake
# when CONOL_SESSION_TOKEN is unset) and `make test` (lint, types and the whole test suite).
# Each sets up .venv itself on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test lint typecheck unit bench fake clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/litellm-conol serve $(ARGS)

test: $(STAMP) lint typecheck
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest tests/test_core.py $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(ARGS)

fake: $(STAMP)
	$(BIN)/litellm-conol fake $(ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
