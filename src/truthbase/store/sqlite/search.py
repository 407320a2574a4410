"""The search arms in SQLite: FTS5's BM25, and exact cosine over a matrix of every vector.

Vectors live in the chunks and windows tables as float32 blobs; the dense arm multiplies a numpy
matrix loaded once per index generation (:class:`VectorCache`). This machine's Python cannot load
SQLite extensions, so sqlite-vec is out of reach without apsw; at tens of thousands of chunks an
exact matrix product is a few milliseconds (see `make bench`), so the extension would buy
nothing here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection

import numpy as np
import numpy.typing as npt

from ...records import ArmHit, FloatMatrix
from .connection import Database

__all__ = ["VectorCache", "dense_search", "fts_search", "group_starts"]

IdArray = npt.NDArray[np.int64]


def fts_search(
    db: Database,
    match_expression: str,
    limit: int,
    title_weight: float = 0.0,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """BM25 over chunk text, plus the document title's column at ``title_weight`` (0: the
    title is not searched at all). FTS5's bm25() is lower-is-better: the score is negated.
    ``doc_ids`` (None: all) keeps the chunks of those documents only, in the query itself,
    before the ORDER BY .. LIMIT, so the arm returns the best ``limit`` of them."""
    if title_weight <= 0:
        match_expression = f"text : ({match_expression})"
    if doc_ids is not None and not doc_ids:
        return []
    where = "chunks_fts MATCH ?"
    params: list[object] = [float(title_weight), match_expression]
    if doc_ids is not None:
        where += (
            " AND rowid IN (SELECT c.id FROM chunks c "
            "WHERE c.doc_id IN (SELECT value FROM json_each(?)))"
        )
        params.append(json.dumps(sorted(doc_ids)))
    with db.lock:
        rows = db.conn.execute(
            "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS score FROM chunks_fts "
            f"WHERE {where} ORDER BY score LIMIT ?",
            (*params, limit),
        ).fetchall()
    return [
        ArmHit(chunk_id=int(row[0]), rank=rank, score=-float(row[1]))
        for rank, row in enumerate(rows, start=1)
    ]


class VectorCache:
    """All vectors of one index, grouped by chunk, reloaded when the index generation moves;
    with each chunk group its document id (the access filter masks groups by it)."""

    def __init__(self) -> None:
        self._matrix: tuple[FloatMatrix, IdArray, IdArray, npt.NDArray[np.str_]] | None = None
        self._generation = -1
        # Threads search in parallel (a connection each): one loads a new generation while the
        # others wait for it rather than load it too.
        self._lock = threading.Lock()

    def matrix(self, db: Database) -> tuple[FloatMatrix, IdArray, IdArray, npt.NDArray[np.str_]]:
        """(matrix, chunk ids, start row of each chunk's group, each chunk's document id)."""
        generation = db.generation()
        with self._lock:
            return self._load(db, generation)

    def _load(
        self, db: Database, generation: int
    ) -> tuple[FloatMatrix, IdArray, IdArray, npt.NDArray[np.str_]]:
        if self._matrix is None or generation != self._generation:
            # Each chunk's own vector and its windows', grouped by chunk id.
            rows = db.conn.execute(
                "SELECT id, vector, doc_id FROM chunks UNION ALL "
                "SELECT w.chunk_id, w.vector, c.doc_id FROM windows w "
                "JOIN chunks c ON c.id = w.chunk_id ORDER BY 1"
            ).fetchall()
            owners = np.array([row[0] for row in rows], dtype=np.int64)
            if rows:
                matrix = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
            else:
                matrix = np.zeros((0, 1), dtype=np.float32)
            starts = group_starts(owners)
            docs = np.array([rows[i][2] for i in starts.tolist()], dtype=np.str_)
            self._matrix = (matrix, owners[starts], starts, docs)
            self._generation = generation
        return self._matrix


def dense_search(
    db: Database,
    cache: VectorCache,
    query_vector: FloatMatrix,
    limit: int,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """Exact cosine (vectors are L2-normalized, so a dot product); a chunk scores the best of
    its own vector and its sentence windows' (max-sim). ``doc_ids`` (None: all) masks the
    chunks of other documents out before the top ``limit`` is taken."""
    with db.lock:
        matrix, chunk_ids, starts, docs = cache.matrix(db)
    if len(chunk_ids) == 0:
        return []
    scores = matrix @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    chunk_scores = np.maximum.reduceat(scores, starts)
    if doc_ids is not None:
        keep = np.flatnonzero(np.isin(docs, np.array(sorted(doc_ids), dtype=np.str_)))
        chunk_ids, chunk_scores = chunk_ids[keep], chunk_scores[keep]
        if len(chunk_ids) == 0:
            return []
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
