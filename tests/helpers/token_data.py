"""Small made-up documents with token signs, for the store tests of ``chunk_tokens``
(test_postgres_tokens, test_backfill_tokens): real extracted units, random unit vectors and
random packed token signs of a small dimension."""

from __future__ import annotations

import numpy as np

from truthbase.ingest import pack_signs
from truthbase.model import ChunkDraft, ExtractedDocument
from truthbase.records import IndexEmbedder

DIM = 20  # 3 bytes a token, the last one padded
EMBEDDER = IndexEmbedder("m", DIM)


def chunks_of(document: ExtractedDocument, n: int) -> list[ChunkDraft]:
    """``n`` consecutive 40-character chunks of the document's first unit long enough."""
    text = next(u.text for u in document.units if len(u.text) > 40 * n)
    unit = next(u.index for u in document.units if u.text == text)
    return [
        ChunkDraft(
            unit=unit, start=40 * i, end=40 * i + 40, text=text[40 * i : 40 * i + 40], rects=()
        )
        for i in range(n)
    ]


def unit_vectors(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def random_signs(n_tokens: list[int], seed: int) -> list[bytes]:
    """One packed blob per chunk, with that many tokens of dimension ``DIM``."""
    rng = np.random.default_rng(seed)
    return [pack_signs(rng.standard_normal((n, DIM)).astype(np.float32)) for n in n_tokens]
