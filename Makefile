# TruthBase: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= var/demo.sqlite
CORPUS ?=

.PHONY: demo test lint typecheck unit bench install clean

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh $(PYTHON) $(VENV)
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest tests

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

demo: $(STAMP)
	bash scripts/demo.sh "$(BIN)" "$(DEMO_DB)" "$(CORPUS)"

clean:
	rm -rf $(VENV) var build .mypy_cache .ruff_cache .pytest_cache
