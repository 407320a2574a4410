"""The local ONNX embedders on the real bundled model: the default and a user's ``onnx:DIR``."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.helpers.embed_texts import TEXTS
from truthbase.config import EmbedderSettings
from truthbase.embed import (
    DEFAULT_MODEL_ID,
    Embedder,
    EmbedderMismatchError,
    EmbeddingError,
    OnnxEmbedder,
    TokenEmbedder,
    _onnx,
    bundled_model_files,
    check_compatible,
    default_embedder,
    load_embedder,
)
from truthbase.embed._graph import loadable_model
from truthbase.ingest import pack_signs
from truthbase.retrieve.late import late_ranking, late_scores, query_rows


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return default_embedder()


def test_default_embedder_contract(minilm: OnnxEmbedder) -> None:
    _: Embedder = minilm
    assert minilm.model_id == DEFAULT_MODEL_ID == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    assert minilm.dim == 384
    vectors = minilm.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert vectors.dtype == np.float32 and vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert minilm.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.embed("one string")


def test_batching_and_sorting_keep_each_text_in_its_row(minilm: OnnxEmbedder) -> None:
    # One at a time (no padding) against batches of 2 with texts of mixed lengths (padding,
    # reordering): each row must be its own text's vector.
    alone = np.stack([minilm.embed([text])[0] for text in TEXTS])
    small_batches = default_embedder(batch_size=2).embed(TEXTS)
    np.testing.assert_allclose(small_batches, alone, atol=2e-4)
    reversed_rows = minilm.embed(TEXTS[::-1])[::-1]
    np.testing.assert_allclose(reversed_rows, alone, atol=2e-4)


def test_semantic_sanity(minilm: OnnxEmbedder) -> None:
    query, para, other = minilm.embed(
        [
            "How should an organization govern AI risk?",
            "Governance of artificial intelligence risks within a company.",
            "Bake the bread at 220 degrees for thirty minutes.",
        ]
    )
    assert float(query @ para) > float(query @ other) + 0.3


def test_long_text_is_truncated_not_rejected(minilm: OnnxEmbedder) -> None:
    long_text = "risk " * 5000
    vector = minilm.embed([long_text])[0]
    # Past 256 tokens nothing counts: a longer text gives the same vector.
    np.testing.assert_allclose(vector, minilm.embed([long_text + "garden " * 500])[0], atol=1e-6)


def test_session_is_loaded_once_per_process(minilm: OnnxEmbedder) -> None:
    again = load_embedder(EmbedderSettings())
    assert isinstance(again, OnnxEmbedder)
    assert again._session is minilm._session


def test_onnx_dir_uses_the_same_code_path(tmp_path: Path, minilm: OnnxEmbedder) -> None:
    model, tokenizer = bundled_model_files()
    folder = tmp_path / "my model"
    folder.mkdir()
    shutil.copyfile(model, folder / "model.onnx")
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    mine = load_embedder(EmbedderSettings(name=f"onnx:{folder}", batch_size=4))
    assert isinstance(mine, OnnxEmbedder)
    assert mine.dim == 384
    assert mine.model_id.startswith(f"onnx:{folder.resolve()}@sha256:")
    np.testing.assert_allclose(mine.embed(TEXTS), minilm.embed(TEXTS), atol=2e-4)

    # The same model file in another folder is the same embedder; the default id is not.
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    check_compatible(mine.model_id, 384, load_embedder(EmbedderSettings(name=f"onnx:{moved}")))
    with pytest.raises(EmbedderMismatchError, match=f"TRUTHBASE_EMBEDDER__NAME=onnx:{folder}"):
        check_compatible(mine.model_id, 384, minilm)


def test_the_bundled_model_runs_without_its_nan_guards_and_gives_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exporter's NaN guards are gone from what onnxruntime loads, and every sentence and
    token vector is bit for bit what the model file as shipped gives (batched, padded texts)."""
    model_path, _ = bundled_model_files()
    shipped = onnx.load(str(model_path))
    with loadable_model(model_path) as loadable:
        assert loadable != model_path
        edited = onnx.load(str(loadable))
    assert not loadable.exists()
    assert sum(node.op_type == "IsNaN" for node in shipped.graph.node) == 6
    assert sum(node.op_type == "IsNaN" for node in edited.graph.node) == 0
    assert len(edited.graph.node) == len(shipped.graph.node) - 12

    guarded = default_embedder(batch_size=4, threads=1)
    vectors, tokens = guarded.embed_with_tokens(TEXTS)
    _onnx._session.cache_clear()
    monkeypatch.setattr(_onnx, "loadable_model", contextlib.nullcontext)
    try:
        as_shipped = default_embedder(batch_size=4, threads=1)
        assert as_shipped._session is not guarded._session
        shipped_vectors, shipped_tokens = as_shipped.embed_with_tokens(TEXTS)
    finally:
        _onnx._session.cache_clear()
    assert np.array_equal(vectors, shipped_vectors)
    assert tokens is not None and shipped_tokens is not None
    for mine, theirs in zip(tokens, shipped_tokens, strict=True):
        assert mine.tokens == theirs.tokens
        assert np.array_equal(mine.vectors, theirs.vectors)


def test_onnx_dir_with_a_broken_model_fails_clearly(tmp_path: Path) -> None:
    _, tokenizer = bundled_model_files()
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    shutil.copyfile(tokenizer, tmp_path / "tokenizer.json")
    with pytest.raises(EmbeddingError, match="cannot load ONNX model"):
        load_embedder(EmbedderSettings(name=f"onnx:{tmp_path}"))


def test_token_vectors_come_from_the_same_pass(minilm: OnnxEmbedder) -> None:
    """embed_with_tokens gives the same sentence vectors as embed, and one unit row per word
    piece of each text, [CLS] and [SEP] left out."""
    assert isinstance(minilm, TokenEmbedder)
    vectors, tokens = minilm.embed_with_tokens(TEXTS)
    np.testing.assert_allclose(vectors, minilm.embed(TEXTS), atol=1e-6)
    assert tokens is not None and len(tokens) == len(TEXTS)
    for item in tokens:
        assert item.vectors.shape == (len(item.tokens), minilm.dim)
        assert "[CLS]" not in item.tokens and "[SEP]" not in item.tokens
        if item.tokens:
            np.testing.assert_allclose(np.linalg.norm(item.vectors, axis=1), 1.0, rtol=1e-5)
    assert tokens[1].tokens[0] == "rap" and tokens[3].tokens == ()
    # Each piece's start is where its text begins (ingest keeps a window's title pieces once
    # by it); pieces of one word start after the word's first.
    for item in tokens:
        assert len(item.starts) == len(item.tokens)
        assert list(item.starts) == sorted(item.starts)
    words = tokens[1]
    assert [
        TEXTS[1][a:].lower().startswith(t.removeprefix("##"))
        for t, a in zip(words.tokens, words.starts, strict=True)
    ] == [True] * len(words.tokens)
    assert words.starts[:3] == (0, 3, 7)  # rap ##tor rec(ursively)


def test_late_interaction_finds_the_paraphrased_passage(minilm: OnnxEmbedder) -> None:
    """MaxSim over packed token signs of the real model ranks the passage that answers a
    paraphrased question above passages that share its topic words."""
    question = "Why can trying to drive every risk down to zero backfire?"
    passages = [
        "Risk management can help organizations identify and prioritize risk across functions.",
        "Attempting to eliminate negative risk entirely can be counterproductive in practice "
        "because not all incidents and failures can be eliminated.",
        "The organization's risk appetite and risk tolerance statements are communicated.",
    ]
    _, q_tokens = minilm.embed_with_tokens([question])
    _, p_tokens = minilm.embed_with_tokens(passages)
    assert q_tokens is not None and p_tokens is not None
    signs = {i: pack_signs(t.vectors) for i, t in enumerate(p_tokens)}
    scores = late_scores(query_rows(q_tokens[0]), signs, minilm.dim)
    assert late_ranking(scores)[0] == 1, scores
