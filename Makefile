# TruthBase: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DB ?= var/demo.sqlite
CORPUS ?=
# Synthetic chunk counts for the PostgreSQL bench; 100000 and 1000000 take long on 2 cores.
PG_BENCH_SIZES ?= 10000

.PHONY: demo test lint typecheck unit bench install clean

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh $(PYTHON) $(VENV)
	touch $(STAMP)

install: $(STAMP)
	bash scripts/install-system.sh
	bash scripts/install-web.sh

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest tests

test: lint typecheck unit

bench: install
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/pg_bench.py --sizes $(PG_BENCH_SIZES)

demo: install
	bash scripts/demo.sh "$(BIN)" "$(DEMO_DB)" "$(CORPUS)"

clean:
	rm -rf $(VENV) var build .mypy_cache .ruff_cache .pytest_cache
