"""Token codes (truthbase.embed.token_code): every dimension's sign, or the signs of the shipped
projection; what an index records, and which code a document written to it is packed in."""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np
import pytest

from truthbase.config import ChunkingSettings
from truthbase.embed import DEFAULT_MODEL_ID, E5_MODEL_ID, EmbeddingError
from truthbase.embed._base import INT8_MODEL_ID
from truthbase.embed.token_code import PCA_CODE, default_token_code, token_code
from truthbase.errors import InvalidInput
from truthbase.ingest import IngestOptions
from truthbase.records import SIGN_CODE, IndexEmbedder, token_code_bits
from truthbase.store.base import StoreError, check_same_embedder


def _rows(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)


def test_signs_pack_every_dimension_and_leave_the_question_as_it_is() -> None:
    rows = _rows(5)
    code = token_code(SIGN_CODE, 384)
    assert code.bits == 384
    assert code.pack(rows) == np.packbits(rows > 0, axis=1).tobytes()
    assert len(code.pack(rows)) == 5 * 48
    np.testing.assert_array_equal(code.query(rows), rows)


def test_the_projection_packs_16_bytes_a_token_from_its_centered_directions() -> None:
    code = token_code(PCA_CODE, 384)
    assert code.bits == 128 and code.basis is not None and code.mean is not None
    rows = _rows(7, seed=1)
    packed = code.pack(rows)
    assert len(packed) == 7 * 16
    bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8).reshape(7, 16), axis=1)
    np.testing.assert_array_equal(bits, ((rows - code.mean) @ code.basis.T > 0).astype(np.uint8))
    # the question's rows go onto the same directions, not centered
    np.testing.assert_allclose(code.query(rows), rows @ code.basis.T, rtol=1e-6)
    # the directions are orthonormal: a row's projection is no longer than the row
    np.testing.assert_allclose(code.basis @ code.basis.T, np.eye(128), atol=1e-4)
    assert (np.linalg.norm(code.query(rows), axis=1) <= 1.0 + 1e-5).all()


def test_the_projection_is_the_file_its_name_hashes() -> None:
    data = resources.files("truthbase.embed").joinpath("data", "minilm-pca128.npy").read_bytes()
    assert "pca128:" + hashlib.sha256(data).hexdigest()[:12] == PCA_CODE


def test_code_names_give_their_bits_and_unknown_ones_are_refused() -> None:
    assert token_code_bits(SIGN_CODE, 384) == 384
    assert token_code_bits(PCA_CODE, 384) == 128
    assert IndexEmbedder("m", 384, PCA_CODE).token_bits == 128
    assert IndexEmbedder("m", 384).token_bits == 384  # an index that records no code
    for bad in ("pca:abc", "pca0:abc", "pca128", "float", ""):
        with pytest.raises(InvalidInput):
            token_code_bits(bad, 384)
    with pytest.raises(EmbeddingError, match="cannot read"):
        token_code("pca64:0123456789ab", 384)
    with pytest.raises(EmbeddingError, match="another embedder"):
        token_code(PCA_CODE, 768)  # the projection is of 384 dimensions


def test_a_new_index_takes_the_projection_only_for_the_bundled_model() -> None:
    assert default_token_code(DEFAULT_MODEL_ID, 384, projection=True) == PCA_CODE
    assert default_token_code(INT8_MODEL_ID, 384, projection=True) == PCA_CODE
    assert default_token_code(DEFAULT_MODEL_ID, 384, projection=False) == SIGN_CODE
    assert default_token_code(E5_MODEL_ID, 384, projection=True) == SIGN_CODE
    assert default_token_code("onnx:/models/x@sha256:00", 384, projection=True) == SIGN_CODE
    assert ChunkingSettings().token_projection is False  # opt-in: token-codes.md says why


def test_a_document_is_packed_in_the_code_of_the_index_it_goes_to() -> None:
    options = IngestOptions(chunking=ChunkingSettings(token_projection=True))
    assert options.token_code is None and options.for_index(None) is options
    kept = options.for_index(IndexEmbedder(DEFAULT_MODEL_ID, 384))  # an index of signs
    assert kept.token_code == SIGN_CODE and kept.chunking == options.chunking
    assert options.for_index(IndexEmbedder(DEFAULT_MODEL_ID, 384, PCA_CODE)).token_code == PCA_CODE


def test_the_store_refuses_a_document_packed_in_another_code() -> None:
    check_same_embedder(IndexEmbedder("m", 384, PCA_CODE), IndexEmbedder("m", 384, PCA_CODE))
    with pytest.raises(StoreError, match="token codes 'signs'"):
        check_same_embedder(IndexEmbedder("m", 384), IndexEmbedder("m", 384, PCA_CODE))
    with pytest.raises(StoreError, match="built with m "):
        check_same_embedder(IndexEmbedder("m", 384), IndexEmbedder("n", 384))
