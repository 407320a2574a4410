"""Chunks without a pass of their own (``chunking.chunk_pass`` off): the windows are embedded
exactly as before, and a chunk's vector and token signs come from its windows' pass, with about
half the text sent to the real embedder (docs/evals/pooled-chunks.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from truthbase.config import ChunkingSettings
from truthbase.embed import OnnxEmbedder, TokenVectors, Vectors, default_embedder, l2_normalize
from truthbase.extract import extract_path
from truthbase.ingest.embedding import index_document
from truthbase.ingest.options import IngestOptions
from truthbase.model import ExtractedDocument
from truthbase.records import IndexedDocument

SEED = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "seed"


class Counting:
    """The real embedder, counting the characters it is given (the embedding work)."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.chars = 0
        self.cut: list[str] = []  # the texts cut at the model's 256 pieces
        self.model_id = inner.model_id
        self.dim = inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.chars += sum(map(len, texts))
        return self.inner.embed(texts)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        self.chars += sum(map(len, texts))
        vectors, tokens = self.inner.embed_with_tokens(texts)
        for text, token in zip(texts, tokens or [], strict=False):
            if len(token.tokens) >= 254:  # 256 with the model's two special tokens
                self.cut.append(text)
        return vectors, tokens


@pytest.fixture(scope="module")
def document() -> ExtractedDocument:
    extracted = extract_path(SEED / "nist-csf-2.0.pdf")
    # The cover (one chunk of 197 characters: no windows) and pages 2-4 (prose).
    return dataclasses.replace(extracted, units=extracted.units[:4])


def indexed(document: ExtractedDocument, chunk_pass: bool) -> tuple[IndexedDocument, Counting]:
    embedder = Counting(default_embedder())
    options = IngestOptions(chunking=ChunkingSettings(chunk_pass=chunk_pass))
    return index_document(document, embedder, options, screen=None), embedder


def test_windows_alone_are_embedded_and_the_chunks_pooled(document: ExtractedDocument) -> None:
    before, whole_pass = indexed(document, chunk_pass=True)
    after, windows_pass = indexed(document, chunk_pass=False)
    assert after.chunks == before.chunks and after.windows == before.windows
    assert windows_pass.chars < 0.65 * whole_pass.chars
    # The windows' vectors are the ones a window's own pass gives, bit for bit.
    np.testing.assert_array_equal(after.window_vectors, before.window_vectors)
    assert before.token_signs is not None and after.token_signs is not None
    by_chunk: dict[int, list[int]] = {}
    for row, window in enumerate(after.windows):
        by_chunk.setdefault(window.chunk, []).append(row)
    assert by_chunk and len(by_chunk) < len(after.chunks)  # some chunks have no windows
    for index, draft in enumerate(after.chunks):
        rows = by_chunk.get(index)
        if rows is None:  # a short chunk is its own one part: as before
            np.testing.assert_array_equal(after.vectors[index], before.vectors[index])
            assert after.token_signs[index] == before.token_signs[index]
            continue
        weights = np.array(
            [after.windows[r].end - after.windows[r].start for r in rows], dtype=np.float32
        )
        mean = (after.window_vectors[rows] * weights[:, None]).sum(axis=0)
        np.testing.assert_allclose(after.vectors[index], l2_normalize(mean[None, :])[0], atol=1e-5)
        # Its tokens are its windows' (the title's pieces once): about as many as a whole
        # pass, or more where the whole chunk was cut at the model's 256 pieces (a contents
        # page of dot leaders) and its windows are not.
        tokens_after = len(after.token_signs[index]) * 8 // after.embedder.token_bits
        tokens_before = len(before.token_signs[index]) * 8 // before.embedder.token_bits
        assert tokens_after >= 0.9 * tokens_before, draft.text
        if not any(draft.text in text for text in whole_pass.cut):
            assert tokens_after <= 1.15 * tokens_before + 4, draft.text
        # and the pooled vector still says what the chunk says.
        assert float(after.vectors[index] @ before.vectors[index]) > 0.8


@pytest.mark.parametrize("chunk_pass", [True, False])
def test_punctuation_rows_can_be_left_unstored(
    document: ExtractedDocument, chunk_pass: bool
) -> None:
    # chunking.punctuation_tokens off: a chunk's token signs are its word pieces' rows only,
    # on both embedding paths, and nothing else of the index changes.
    every, _ = indexed(document, chunk_pass=chunk_pass)
    embedder = Counting(default_embedder())
    chunking = ChunkingSettings(chunk_pass=chunk_pass, punctuation_tokens=False)
    words = index_document(document, embedder, IngestOptions(chunking=chunking), screen=None)
    assert every.token_signs is not None and words.token_signs is not None
    assert words.chunks == every.chunks
    np.testing.assert_array_equal(words.vectors, every.vectors)
    width = words.embedder.token_bits // 8
    rows = [len(blob) // width for blob in words.token_signs]
    before = [len(blob) // width for blob in every.token_signs]
    assert all(0 < n <= m for n, m in zip(rows, before, strict=True))
    assert sum(rows) < 0.95 * sum(before)  # the seed's prose: about a sixth are punctuation
