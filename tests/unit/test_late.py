"""Late interaction (retrieve/late.py): packed token signs and MaxSim, against a reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from truthbase.embed import TokenVectors, l2_normalize
from truthbase.ingest import pack_signs
from truthbase.ingest.embedding import stored_rows
from truthbase.records import token_sign_row_bytes
from truthbase.retrieve.late import late_ranking, late_scores, query_rows, unpack_signs


def _random_tokens(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return l2_normalize(rng.normal(size=(n, dim)))


@pytest.mark.parametrize("dim", [384, 10, 8, 1])
def test_signs_round_trip(dim: int) -> None:
    rng = np.random.default_rng(dim)
    tokens = _random_tokens(rng, 7, dim)
    blob = pack_signs(tokens)
    assert len(blob) == 7 * token_sign_row_bytes(dim)
    back = unpack_signs(blob, dim)
    assert back.shape == (7, dim)
    np.testing.assert_array_equal(back > 0, tokens > 0)
    np.testing.assert_allclose(np.linalg.norm(back, axis=1), 1.0, rtol=1e-6)


def test_signs_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        pack_signs(np.zeros((0, 384), dtype=np.float32))
    with pytest.raises(ValueError, match="whole token rows"):
        unpack_signs(b"\x00" * 47, 384)
    with pytest.raises(ValueError, match="whole token rows"):
        unpack_signs(b"", 384)


def test_late_scores_match_a_reference_maxsim() -> None:
    """One matrix product over chunks of different lengths gives each chunk its own MaxSim."""
    rng = np.random.default_rng(1)
    dim = 32
    query = _random_tokens(rng, 5, dim)
    chunks = {10 + i: _random_tokens(rng, n, dim) for i, n in enumerate((1, 9, 3, 40, 2))}
    signs = {chunk_id: pack_signs(m) for chunk_id, m in chunks.items()}
    scores = late_scores(query, signs, dim)
    assert set(scores) == set(chunks)
    for chunk_id, matrix in chunks.items():
        reference = (query @ (np.sign(matrix) / math.sqrt(dim)).T).max(axis=1).mean()
        assert scores[chunk_id] == pytest.approx(reference, abs=1e-5)


def test_a_chunk_holding_the_question_tokens_ranks_first() -> None:
    rng = np.random.default_rng(2)
    dim = 64
    question = _random_tokens(rng, 4, dim)
    holding = np.concatenate([_random_tokens(rng, 20, dim), question])
    signs = {1: pack_signs(_random_tokens(rng, 24, dim)), 2: pack_signs(holding)}
    signs[3] = pack_signs(_random_tokens(rng, 24, dim))
    assert late_ranking(late_scores(question, signs, dim))[0] == 2


def test_no_chunks_or_no_query_rows_score_nothing() -> None:
    rng = np.random.default_rng(3)
    assert late_scores(_random_tokens(rng, 3, 16), {}, 16) == {}
    empty = np.zeros((0, 16), dtype=np.float32)
    assert late_scores(empty, {1: pack_signs(_random_tokens(rng, 2, 16))}, 16) == {}


def test_query_rows_drop_punctuation_word_pieces() -> None:
    vectors = np.eye(5, dtype=np.float32)
    question = TokenVectors(vectors=vectors, tokens=("what", "is", "rap", "##tor", "?"))
    np.testing.assert_array_equal(query_rows(question), vectors[:4])


def test_ranking_ties_break_by_id() -> None:
    assert late_ranking({5: 0.5, 2: 0.5, 9: 0.7}) == [9, 2, 5]


def test_punctuation_only_pieces_are_not_scored_and_can_be_left_unstored() -> None:
    rng = np.random.default_rng(7)
    pieces = ("\\", "cm", "##id", "##rule", "{", "}", "3", "?")
    tokens = TokenVectors(_random_tokens(rng, len(pieces), 16), pieces)
    words = [i for i, p in enumerate(pieces) if p not in {"\\", "{", "}", "?"}]
    assert np.array_equal(query_rows(tokens), tokens.vectors[words])
    assert np.array_equal(stored_rows(tokens), tokens.vectors)  # the default: every row
    stored = stored_rows(tokens, punctuation=False)  # chunking.punctuation_tokens off
    assert np.array_equal(stored, tokens.vectors[words])
    assert len(pack_signs(stored)) == len(words) * token_sign_row_bytes(16)
    # A chunk of punctuation alone keeps its rows: every chunk has some to be scored by.
    marks = TokenVectors(_random_tokens(rng, 3, 16), ("(", "-", ")"))
    assert query_rows(marks).shape[0] == 0
    assert np.array_equal(stored_rows(marks, punctuation=False), marks.vectors)
