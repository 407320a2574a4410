"""``python tests/helpers/llama_serve.py ARGS``: llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server ARGS``) with llama.cpp's weight repacking off.

Why: on a CPU with AVX-512 (this project's machines), llama.cpp's CPU backend repacks Q4 weights
into its "extra" buffer types for faster matrix products, and llama-cpp-python 0.3.36 as
compiled here crashes (the server process dies, the client sees the connection closed) on any
prompt of more than one token with repacked weights. llama.cpp's own CLI turns repacking off
with ``--no-repack`` (``llama_model_params.use_extra_bufts = false``); the Python server has no
such option, so the default model parameters are changed here, before the server loads its
model. Older releases without the field are left as they are. Repacking only makes the
products faster: the tokens a model gives are the same."""

from __future__ import annotations

import runpy
import sys
from typing import Any

import llama_cpp.llama_cpp as bindings

_default_params = bindings.llama_model_default_params


def _params_without_repacking() -> Any:
    params = _default_params()
    if hasattr(params, "use_extra_bufts"):
        params.use_extra_bufts = False
    return params


def main() -> None:
    bindings.llama_model_default_params = _params_without_repacking
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
