"""The search arms in SQLite: FTS5's BM25, and exact cosine over a matrix of every vector.

Vectors live in the chunks and windows tables as float32 blobs; the dense arm multiplies a numpy
matrix loaded once per index generation (:class:`VectorCache`). This machine's Python cannot load
SQLite extensions, so sqlite-vec is out of reach without apsw; at tens of thousands of chunks an
exact matrix product is a few milliseconds (see `make bench`), so the extension would buy
nothing here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ...records import ArmHit, FloatMatrix
from .connection import Database

__all__ = ["VectorCache", "dense_search", "fts_search", "group_starts"]

IdArray = npt.NDArray[np.int64]


def fts_search(
    db: Database, match_expression: str, limit: int, title_weight: float = 0.0
) -> list[ArmHit]:
    """BM25 over chunk text, plus the document title's column at ``title_weight`` (0: the
    title is not searched at all). FTS5's bm25() is lower-is-better: the score is negated."""
    if title_weight <= 0:
        match_expression = f"text : ({match_expression})"
    with db.lock:
        rows = db.conn.execute(
            "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS score FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?",
            (float(title_weight), match_expression, limit),
        ).fetchall()
    return [
        ArmHit(chunk_id=int(row[0]), rank=rank, score=-float(row[1]))
        for rank, row in enumerate(rows, start=1)
    ]


class VectorCache:
    """All vectors of one index, grouped by chunk, reloaded when the index generation moves."""

    def __init__(self) -> None:
        self._matrix: tuple[FloatMatrix, IdArray, IdArray] | None = None
        self._generation = -1

    def matrix(self, db: Database) -> tuple[FloatMatrix, IdArray, IdArray]:
        """(matrix, chunk ids, start row of each chunk's group); the caller holds the lock."""
        generation = db.generation()
        if self._matrix is None or generation != self._generation:
            # Each chunk's own vector and its windows', grouped by chunk id.
            rows = db.conn.execute(
                "SELECT id, vector FROM chunks UNION ALL SELECT chunk_id, vector FROM windows "
                "ORDER BY 1"
            ).fetchall()
            owners = np.array([row[0] for row in rows], dtype=np.int64)
            if rows:
                matrix = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
            else:
                matrix = np.zeros((0, 1), dtype=np.float32)
            starts = group_starts(owners)
            self._matrix = (matrix, owners[starts], starts)
            self._generation = generation
        return self._matrix


def dense_search(
    db: Database, cache: VectorCache, query_vector: FloatMatrix, limit: int
) -> list[ArmHit]:
    """Exact cosine (vectors are L2-normalized, so a dot product); a chunk scores the best of
    its own vector and its sentence windows' (max-sim)."""
    with db.lock:
        matrix, chunk_ids, starts = cache.matrix(db)
    if len(chunk_ids) == 0:
        return []
    scores = matrix @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    chunk_scores = np.maximum.reduceat(scores, starts)
    limit = min(limit, len(chunk_ids))
    top = np.argpartition(-chunk_scores, limit - 1)[:limit]
    # Ties (equal cosine) go to the lower chunk id, so the order is deterministic.
    top = top[np.lexsort((chunk_ids[top], -chunk_scores[top]))]
    return [
        ArmHit(chunk_id=int(chunk_ids[i]), rank=rank, score=float(chunk_scores[i]))
        for rank, i in enumerate(top, start=1)
    ]


def group_starts(sorted_ids: IdArray) -> IdArray:
    """Start index of each run of equal values in ``sorted_ids`` (for ``np.maximum.reduceat``)."""
    if len(sorted_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
