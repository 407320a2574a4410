"""Late interaction: the candidate chunks re-ranked word piece by word piece.

A chunk's sentence vector is one average of its token vectors; a paraphrase of one clause
("drive every risk down to zero" for "eliminate negative risk entirely") is diluted by the rest
of the chunk. Here every word piece of the question looks for its most similar token of the
chunk, and the chunk scores the mean of those best matches (MaxSim, as in ColBERT), using the
same embedder's contextual token vectors. The list ranks the union of the other arms'
candidates and joins the fusion with ``late_weight``.

Storage: a chunk's token vectors are kept as bits, in the index's token code
(:mod:`truthbase.embed.token_code`): the signs of 128 fixed principal directions (16 bytes a
token, with ``chunking.token_projection``) or of every dimension (48 bytes at dim 384, the
default); with ``chunking.punctuation_tokens`` off only the word pieces that hold a letter or a
digit, as on the question's side. The question's token vectors stay real-valued, put in the
same code's space (:meth:`TokenCode.query`). On golden/dev.json the signs of every dimension
ranked as well as the full float vectors (Recall@8 0.875 with either) at 1/32 of the size;
the projection's codes keep the three dev sets' retrieval numbers at a third of that, not all
of their answers (docs/evals/token-codes.md).

Pure functions: ``dim`` below is the code's bits a token; the store holds the packed bits (see
``Store.token_signs``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ..embed import TokenVectors, Vectors
from ..records import token_sign_row_bytes


def unpack_signs(blob: bytes, dim: int) -> npt.NDArray[np.float32]:
    """Packed signs (:func:`truthbase.ingest.pack_signs`, at ingest) back to a (n, dim)
    matrix of +-1/sqrt(dim): rows of unit norm."""
    width = token_sign_row_bytes(dim)
    if not blob or len(blob) % width:
        raise ValueError(f"{len(blob)} bytes are not whole token rows of {width} bytes")
    bits = np.unpackbits(np.frombuffer(blob, dtype=np.uint8).reshape(-1, width), axis=1)
    signs = bits[:, :dim].astype(np.float32) * 2.0 - 1.0
    return np.asarray(signs / math.sqrt(dim), dtype=np.float32)


def query_rows(question: TokenVectors) -> Vectors:
    """The question's token vectors that carry words: punctuation-only word pieces ("?", ",")
    match punctuation anywhere and say nothing about relevance."""
    return question.word_rows()


def late_scores(query: Vectors, signs: Mapping[int, bytes], dim: int) -> dict[int, float]:
    """MaxSim of each chunk: the mean over the query rows of the best cosine with a chunk token.

    ``query`` holds the question's token rows in the code's space (see :func:`query_rows` and
    ``TokenCode.query``), ``dim`` wide; ``signs`` maps chunk ids to their packed token bits,
    ``dim`` a row. All chunks are scored with one matrix product.
    """
    if not signs or query.shape[0] == 0:
        return {}
    ids = list(signs)
    width = token_sign_row_bytes(dim)
    counts = [len(signs[chunk_id]) // width for chunk_id in ids]
    if any(
        count * width != len(signs[chunk_id]) or not count
        for chunk_id, count in zip(ids, counts, strict=True)
    ):
        raise ValueError(f"token signs that are not whole token rows of {width} bytes")
    # One unpack of every chunk's signs at once; the +-1 matrix is never built:
    # q . (2b - 1) / sqrt(dim) = (2 (q . b) - sum(q)) / sqrt(dim), b the 0/1 bits.
    packed = np.frombuffer(b"".join(signs[chunk_id] for chunk_id in ids), dtype=np.uint8)
    bits = np.unpackbits(packed.reshape(-1, width), axis=1)[:, :dim].astype(np.float32)
    query = np.asarray(query, dtype=np.float32)
    similarity = bits @ (2.0 * query.T)  # (all chunk tokens, query tokens)
    similarity -= query.sum(axis=1)
    starts = np.cumsum([0, *counts[:-1]])
    best = np.maximum.reduceat(similarity, starts, axis=0)  # (chunks, query tokens)
    means = best.mean(axis=1) / np.float32(math.sqrt(dim))
    return {chunk_id: float(score) for chunk_id, score in zip(ids, means, strict=True)}


def late_ranking(scores: Mapping[int, float]) -> list[int]:
    """Chunk ids by score, best first; ties by id, so the order is reproducible."""
    return sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))
