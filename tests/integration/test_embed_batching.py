"""Length-aware batching of the bundled ONNX embedder: little padding, and the same vectors and
token vectors as fixed batches of 32 (the batching before it) and as one text per call."""

from __future__ import annotations

import numpy as np
import pytest

from truthbase.embed import OnnxEmbedder, _onnx, default_embedder
from truthbase.embed._onnx import length_batches

WORDS = [
    "risk",
    "governance",
    "framework",
    "outcomes",
    "tiers",
    "profiles",
    "organizations",
    "suppliers",
    "retrieval",
    "generation",
    "reflection",
    "tokens",
    "critique",
    "summaries",
    "clusters",
    "tree",
    "recursive",
    "abstractive",
]


def texts(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 90)))) for _ in range(n)]


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    return default_embedder()


def test_length_batches_cover_every_text_once_with_little_padding() -> None:
    rng = np.random.default_rng(1)
    lengths = [int(x) for x in rng.integers(3, 257, size=500)]
    batches = length_batches(lengths, 32)
    assert sorted(i for rows in batches for i in rows) == list(range(500))
    for rows in batches:
        widths = [lengths[i] for i in rows]
        assert len(rows) <= min(32, max(1, _onnx.MAX_BATCH_TOKENS // widths[0]))
        assert widths == sorted(widths, reverse=True)
        assert min(widths) >= 0.95 * widths[0]
    flat = [lengths[i] for rows in batches for i in rows]
    assert flat == sorted(lengths, reverse=True)
    assert length_batches([], 32) == []


def fixed_32(lengths: list[int], max_rows: int, min_fill: float = 0.0) -> list[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    return [order[b : b + 32] for b in range(0, len(order), 32)]


def test_same_vectors_as_fixed_batches_and_single_texts(
    minilm: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = texts(48)
    vectors, tokens = minilm.embed_with_tokens(sample)
    assert tokens is not None
    singles = np.vstack([minilm.embed([text]) for text in sample[:12]])
    np.testing.assert_allclose(vectors[:12], singles, atol=1e-5)
    monkeypatch.setattr(_onnx, "length_batches", fixed_32)
    before, before_tokens = minilm.embed_with_tokens(sample)
    assert before_tokens is not None
    # Bit-identical: a text's vectors do not depend on what it is batched with (so the cap on
    # tokens per call, set for memory, changes no stored vector).
    np.testing.assert_array_equal(vectors, before)
    for now, then in zip(tokens, before_tokens, strict=True):
        assert now.tokens == then.tokens
        np.testing.assert_array_equal(now.vectors, then.vectors)
