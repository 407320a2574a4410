"""The search arms in SQLite: FTS5's BM25, and exact cosine over a matrix of every vector.

Vectors live in the chunks and windows tables as int8 codes with a float32 scale a row
(:func:`truthbase.store.codec.vector_code`, schema 21: a quarter of float32's bytes); the dense
arm holds them in memory as they are stored (:class:`VectorCache`, loaded once per index
generation) and scores every row with them, so its scores are the exact cosines of the stored
vectors, on a small index as on a large one (tests/integration/test_compact_vectors.py). On the
dev sets that ranks as the float32 vectors did (docs/evals/disk.md). This machine's Python
cannot load SQLite extensions, so sqlite-vec is out of reach without apsw; at tens of thousands
of chunks an exact matrix product is a few milliseconds (see `make bench`), so the extension
would buy nothing here.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...records import ArmHit, FloatMatrix
from ..codec import quantize, vector_codes
from .connection import Database

__all__ = [
    "CompactVectors",
    "VectorCache",
    "dense_search",
    "fts_search",
    "group_starts",
    "quantize",
    "stored_chunks",
]

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


#: Rows scored per step: each block of int8 codes is widened to float32 in one reused buffer
#: that stays in the CPU cache (3 MB at dim 384), so the scoring never holds a float32 copy of
#: the matrix and beats a float32 matrix-vector product, which waits on memory (100k x 384:
#: 25 ms against 45 ms, and 75 ms with blocks of 16k rows; benchmarks/search_bench.py).
SCORE_BLOCK = 2_048


@dataclass(frozen=True, slots=True)
class CompactVectors:
    """Every vector of one index in memory as stored: int8 codes with a float32 scale per row,
    grouped by chunk, with each chunk group's document id."""

    codes: npt.NDArray[np.int8]  # (rows, dim): round(vector / scale)
    scales: npt.NDArray[np.float32]  # (rows,): max |component| / 127 of the row
    chunk_ids: IdArray  # (chunks,) ascending
    starts: IdArray  # (chunks,) first row of each chunk's group
    docs: npt.NDArray[np.str_]  # (chunks,)
    owners: IdArray  # (rows,) the chunk id of each row
    fingerprint: str = ""  # sha256 of every row's id, kind, owner and scale (see ann.py)

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The cosine of every stored row with ``query``: ``(codes . query) * scale``."""
        out = np.empty(len(self.codes), dtype=np.float32)
        buffer = np.empty((min(SCORE_BLOCK, len(self.codes)), self.codes.shape[1]), np.float32)
        for lo in range(0, len(self.codes), SCORE_BLOCK):
            codes = self.codes[lo : lo + SCORE_BLOCK]
            block = buffer[: len(codes)]
            block[...] = codes
            out[lo : lo + len(codes)] = block @ query
        out *= self.scales
        return out

    def row_scores(self, rows: IdArray, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """:meth:`scores` of the rows ``rows`` only (the same codes and scales, so the same
        cosines up to float32's order of summation)."""
        return np.asarray((self.codes[rows].astype(np.float32) @ query) * self.scales[rows])


class VectorCache:
    """All vectors of one index, compact (:class:`CompactVectors`), reloaded when the index
    generation moves."""

    def __init__(self) -> None:
        self._vectors: CompactVectors | None = None
        self._generation = -1
        # Threads search in parallel (a connection each): one loads a new generation while the
        # others wait for it rather than load it too.
        self._lock = threading.Lock()

    def vectors(self, db: Database) -> CompactVectors:
        """The index's compact vectors, reloaded when the index generation moved (one thread
        loads a new generation while the others wait for it)."""
        generation = db.generation()
        with self._lock:
            if self._vectors is None or generation != self._generation:
                self._vectors = None  # the old matrix goes before the new one is built
                self._vectors = _load_compact(db)
                self._generation = generation
            return self._vectors


def _load_compact(db: Database) -> CompactVectors:
    """Read every vector in blocks of rows into preallocated arrays (a fetchall held every
    blob and the matrix at once)."""
    total = int(
        db.conn.execute(
            "SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM windows)"
        ).fetchone()[0]
    )
    meta = db.conn.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()
    dim = int(meta[0]) if meta is not None else 1
    cursor = db.conn.execute(
        "SELECT id, vector, doc_id, 0, id FROM chunks UNION ALL "
        "SELECT w.chunk_id, w.vector, c.doc_id, 1, w.id FROM windows w "
        "JOIN chunks c ON c.id = w.chunk_id ORDER BY 1, 4, 5"
    )
    owners = np.empty(total, dtype=np.int64)
    row_ids = np.empty(total, dtype=np.int64)  # chunks.id or windows.id, for the fingerprint
    is_window = np.empty(total, dtype=np.bool_)
    codes = np.empty((total, dim), dtype=np.int8)
    scales = np.empty(total, dtype=np.float32)
    doc_of: list[str] = []
    last = None
    n = 0
    while True:
        rows = cursor.fetchmany(4096)
        if not rows:
            break
        block = slice(n, n + len(rows))
        codes[block], scales[block] = vector_codes([bytes(r[1]) for r in rows], dim)
        for r in rows:
            owners[n], is_window[n], row_ids[n] = r[0], r[3], r[4]
            if r[0] != last:
                doc_of.append(r[2])
                last = r[0]
            n += 1
    owners = owners[:n]
    starts = group_starts(owners)
    # What the graph of .ann is built for: the rows, in order, with their owners and scales.
    digest = hashlib.sha256(str((n, dim)).encode())
    for array in (owners, row_ids[:n], is_window[:n], scales[:n]):
        digest.update(np.ascontiguousarray(array).tobytes())
    return CompactVectors(
        codes=codes[:n],
        scales=scales[:n],
        chunk_ids=owners[starts],
        starts=starts,
        docs=np.array(doc_of, dtype=np.str_),
        owners=owners,
        fingerprint=digest.hexdigest(),
    )


def dense_search(
    db: Database,
    cache: VectorCache,
    query_vector: FloatMatrix,
    limit: int,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """Exact cosine with the stored vectors (L2-normalized, so a dot product); a chunk scores
    the best of its own vector and its sentence windows' (max-sim). ``doc_ids`` (None: all)
    masks the chunks of other documents out before the top ``limit`` is taken. Ties (equal
    cosine) go to the lower chunk id, so the order is deterministic. A chunk that another
    process deleted since the matrix was loaded is left out (the top ids are looked up)."""
    query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    with db.lock:
        compact = cache.vectors(db)
    chunk_ids = compact.chunk_ids
    if len(chunk_ids) == 0 or limit <= 0:
        return []
    chunk_scores = np.maximum.reduceat(compact.scores(query), compact.starts)
    if doc_ids is not None:
        keep = np.flatnonzero(np.isin(compact.docs, np.array(sorted(doc_ids), dtype=np.str_)))
        chunk_ids, chunk_scores = chunk_ids[keep], chunk_scores[keep]
    wanted = limit
    while True:
        order = _top(chunk_ids, chunk_scores, wanted)
        with db.lock:
            stored = stored_chunks(db, chunk_ids[order].tolist())
        kept = [i for i in order.tolist() if int(chunk_ids[i]) in stored][:limit]
        if len(kept) >= limit or wanted >= len(chunk_ids):
            break
        wanted *= 2
    return [
        ArmHit(chunk_id=int(chunk_ids[i]), rank=rank, score=float(chunk_scores[i]))
        for rank, i in enumerate(kept, start=1)
    ]


def _top(chunk_ids: IdArray, scores: npt.NDArray[np.float32], count: int) -> IdArray:
    """Positions of the best ``count`` scores, best first, ties to the lower chunk id."""
    count = min(count, len(scores))
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    kth = -np.partition(-scores, count - 1)[count - 1]
    pick = np.flatnonzero(scores >= kth)  # every tie of the count-th score
    return np.asarray(pick[np.lexsort((chunk_ids[pick], -scores[pick]))][:count], np.int64)


def stored_chunks(db: Database, ids: list[int]) -> set[int]:
    """Which of the chunk ids ``ids`` the file still holds. The caller holds the lock."""
    found: set[int] = set()
    for lo in range(0, len(ids), 900):  # well under SQLite's bound on parameters
        part = ids[lo : lo + 900]
        rows = db.conn.execute(
            f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(part))})", part
        )
        found.update(int(r[0]) for r in rows)
    return found


def group_starts(sorted_ids: IdArray) -> IdArray:
    """Start index of each run of equal values in ``sorted_ids`` (for ``np.maximum.reduceat``)."""
    if len(sorted_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
