"""The search arms in SQLite: FTS5's BM25, and exact cosine over a matrix of every vector.

Vectors live in the chunks and windows tables as float32 blobs; the dense arm scores every row
with an int8 copy of them, loaded once per index generation (:class:`VectorCache`, a quarter of
the float32 matrix: a server over 100k chunks stays small), then rescores its shortlist exactly
with the float32 vectors of the file. A small index (at most :data:`EXACT_IN_MEMORY_ROWS` rows)
keeps its float32 rows in memory too and scores them directly: there the shortlist's reads
from the file cost more than the whole matrix product (the seed index: 11 of 29 ms of a
search). This machine's Python cannot load
SQLite extensions, so sqlite-vec is out of reach without apsw; at tens of thousands of chunks an
exact matrix product is a few milliseconds (see `make bench`), so the extension would buy
nothing here.
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
from .connection import Database

__all__ = [
    "EXACT_IN_MEMORY_ROWS",
    "CompactVectors",
    "VectorCache",
    "dense_search",
    "exact_row_scores",
    "fts_search",
    "group_starts",
    "quantize",
]

IdArray = npt.NDArray[np.int64]

#: Up to this many vector rows (chunks and windows; 30 MB of float32 at dim 384) the float32
#: rows stay in memory and the dense arm scores them exactly, without the int8 shortlist.
EXACT_IN_MEMORY_ROWS = 20_000


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
    """Every vector of one index in memory as int8 codes with a float32 scale per row (a
    quarter of float32's bytes), grouped by chunk, with each chunk group's document id."""

    codes: npt.NDArray[np.int8]  # (rows, dim): round(vector / scale)
    scales: npt.NDArray[np.float32]  # (rows,): max |component| / 127 of the row
    chunk_ids: IdArray  # (chunks,) ascending
    starts: IdArray  # (chunks,) first row of each chunk's group
    docs: npt.NDArray[np.str_]  # (chunks,)
    owners: IdArray  # (rows,) the chunk id of each row
    row_ids: IdArray  # (rows,) the row's id in its table: chunks.id, or windows.id
    is_window: npt.NDArray[np.bool_]  # (rows,) the row is a window's vector
    exact: FloatMatrix | None = None  # (rows, dim) float32, for a small index only
    fingerprint: str = ""  # sha256 of every row's id, kind, owner and scale (see ann.py)

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Approximate cosine of every row with ``query`` (error about 1e-3 at dim 384)."""
        out = np.empty(len(self.codes), dtype=np.float32)
        buffer = np.empty((min(SCORE_BLOCK, len(self.codes)), self.codes.shape[1]), np.float32)
        for lo in range(0, len(self.codes), SCORE_BLOCK):
            codes = self.codes[lo : lo + SCORE_BLOCK]
            block = buffer[: len(codes)]
            block[...] = codes
            out[lo : lo + len(codes)] = block @ query
        out *= self.scales
        return out


def quantize(
    vectors: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Rows as int8 codes and a scale each: ``codes * scale`` is the row within scale / 2."""
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, dtype=np.float32)
    scales = np.maximum(peak, np.float32(1e-12)).astype(np.float32) / np.float32(127.0)
    codes = np.rint(vectors / scales[:, None]).astype(np.int8)
    return codes, scales


class VectorCache:
    """All vectors of one index, compact (:class:`CompactVectors`), reloaded when the index
    generation moves. The float32 vectors stay in the file: dense_search rescores its
    shortlist with them."""

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
    """Read every vector row by row into preallocated arrays: the float32 blobs are never all
    in memory at once (a fetchall held them twice, as rows and as the stacked matrix)."""
    total = int(
        db.conn.execute(
            "SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM windows)"
        ).fetchone()[0]
    )
    cursor = db.conn.execute(
        "SELECT id, vector, doc_id, 0, id FROM chunks UNION ALL "
        "SELECT w.chunk_id, w.vector, c.doc_id, 1, w.id FROM windows w "
        "JOIN chunks c ON c.id = w.chunk_id ORDER BY 1, 4, 5"
    )
    owners = np.empty(total, dtype=np.int64)
    row_ids = np.empty(total, dtype=np.int64)
    is_window = np.empty(total, dtype=np.bool_)
    codes: npt.NDArray[np.int8] | None = None
    exact: FloatMatrix | None = None
    scales = np.empty(total, dtype=np.float32)
    doc_of: list[str] = []
    last = None
    n = 0
    while True:
        rows = cursor.fetchmany(4096)
        if not rows:
            break
        block = np.vstack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
        if codes is None:
            codes = np.empty((total, block.shape[1]), dtype=np.int8)
            if total <= EXACT_IN_MEMORY_ROWS:
                exact = np.empty((total, block.shape[1]), dtype=np.float32)
        codes[n : n + len(rows)], scales[n : n + len(rows)] = quantize(block)
        if exact is not None:
            exact[n : n + len(rows)] = block
        for row in rows:
            owners[n], is_window[n], row_ids[n] = row[0], row[3], row[4]
            if row[0] != last:
                doc_of.append(row[2])
                last = row[0]
            n += 1
    owners = owners[:n]
    starts = group_starts(owners)
    digest = hashlib.sha256(str(codes.shape if codes is not None else 0).encode())
    for array in (owners, row_ids[:n], is_window[:n], scales[:n]):
        digest.update(np.ascontiguousarray(array).tobytes())
    return CompactVectors(
        codes=codes[:n] if codes is not None else np.zeros((0, 1), dtype=np.int8),
        scales=scales[:n],
        chunk_ids=owners[starts],
        starts=starts,
        docs=np.array(doc_of, dtype=np.str_),
        owners=owners,
        row_ids=row_ids[:n],
        is_window=is_window[:n],
        exact=exact[:n] if exact is not None else None,
        fingerprint=digest.hexdigest(),
    )


def exact_row_scores(
    db: Database, compact: CompactVectors, rows: IdArray, query: FloatMatrix
) -> tuple[IdArray, npt.NDArray[np.float32]]:
    """The exact float32 cosine with ``query`` of the matrix rows ``rows``, from the vectors in
    the file (by primary key): (the rows still in the file, their scores). A row that another
    process deleted since the matrix was loaded, or whose id now names a window of another
    chunk, is left out. The caller holds the lock."""
    found: dict[tuple[bool, int], tuple[int, bytes]] = {}
    for window, sql in (
        (False, "SELECT id, id, vector FROM chunks WHERE id IN "),
        (True, "SELECT id, chunk_id, vector FROM windows WHERE id IN "),
    ):
        wanted = [int(i) for i in compact.row_ids[rows[compact.is_window[rows] == window]]]
        for lo in range(0, len(wanted), 900):  # well under SQLite's bound on parameters
            part = wanted[lo : lo + 900]
            for row_id, owner, blob in db.conn.execute(
                sql + f"({','.join('?' * len(part))})", part
            ):
                found[(window, int(row_id))] = (int(owner), blob)
    kept: list[int] = []
    blobs: list[bytes] = []
    for r in rows.tolist():
        hit = found.get((bool(compact.is_window[r]), int(compact.row_ids[r])))
        if hit is not None and hit[0] == int(compact.owners[r]):
            kept.append(r)
            blobs.append(hit[1])
    if not blobs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    matrix = np.vstack([np.frombuffer(blob, dtype=np.float32) for blob in blobs])
    return np.array(kept, dtype=np.int64), np.asarray(matrix @ query, dtype=np.float32)


def dense_search(
    db: Database,
    cache: VectorCache,
    query_vector: FloatMatrix,
    limit: int,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit]:
    """Exact cosine (vectors are L2-normalized, so a dot product); a chunk scores the best of
    its own vector and its sentence windows' (max-sim). ``doc_ids`` (None: all) masks the
    chunks of other documents out before the top ``limit`` is taken.

    The int8 codes in memory pick a shortlist that provably holds the float32 top ``limit``:
    rounding moves a component by at most half its row's scale, so an approximate score is
    within ``eps = max scale / 2 * |query|_1`` of the exact one, and every true top chunk scores
    at least the approximate ``limit``-th minus ``2 eps``. The float32 vectors of the
    shortlist, read from the file, give the exact scores and the order: the result is the
    float32 search's (tests/integration/test_compact_vectors.py checks it on the seed index)."""
    query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    with db.lock:
        compact = cache.vectors(db)
    chunk_ids = compact.chunk_ids
    if len(chunk_ids) == 0:
        return []
    if compact.exact is not None:
        return _exact_search(compact, compact.exact, query, limit, doc_ids)
    row_scores = compact.scores(query)
    chunk_scores = np.maximum.reduceat(row_scores, compact.starts)
    if doc_ids is not None:
        keep = np.flatnonzero(np.isin(compact.docs, np.array(sorted(doc_ids), dtype=np.str_)))
        chunk_ids, chunk_scores = chunk_ids[keep], chunk_scores[keep]
        if len(chunk_ids) == 0:
            return []
    limit = min(limit, len(chunk_ids))
    kth = -np.partition(-chunk_scores, limit - 1)[limit - 1]
    eps = float(compact.scales.max()) / 2 * float(np.abs(query).sum())
    floor = kth - 2 * eps - 1e-6
    # The rows that can be a top chunk's best: a row below the floor scores, exactly, less
    # than the limit-th chunk, so it decides no top chunk's score.
    rows = np.flatnonzero(row_scores >= floor)
    if doc_ids is not None:
        rows = rows[np.isin(compact.owners[rows], chunk_ids)]
    with db.lock:
        rows, exact = exact_row_scores(db, compact, rows, query)
    best: dict[int, float] = {}
    for owner, score in zip(compact.owners[rows].tolist(), exact.tolist(), strict=True):
        if owner not in best or score > best[owner]:
            best[owner] = score
    # Ties (equal cosine) go to the lower chunk id, so the order is deterministic.
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [
        ArmHit(chunk_id=chunk_id, rank=rank, score=score)
        for rank, (chunk_id, score) in enumerate(ranked, start=1)
    ]


def _exact_search(
    compact: CompactVectors,
    exact: FloatMatrix,
    query: npt.NDArray[np.float32],
    limit: int,
    doc_ids: Collection[str] | None,
) -> list[ArmHit]:
    """The dense arm over the float32 rows in memory: every chunk's best row, top ``limit``."""
    chunk_ids = compact.chunk_ids
    chunk_scores = np.maximum.reduceat(np.asarray(exact @ query, dtype=np.float32), compact.starts)
    if doc_ids is not None:
        keep = np.flatnonzero(np.isin(compact.docs, np.array(sorted(doc_ids), dtype=np.str_)))
        chunk_ids, chunk_scores = chunk_ids[keep], chunk_scores[keep]
    # Ties (equal cosine) go to the lower chunk id, as in the shortlist's ranking.
    order = np.lexsort((chunk_ids, -chunk_scores))[:limit]
    return [
        ArmHit(chunk_id=int(chunk_ids[i]), rank=rank, score=float(chunk_scores[i]))
        for rank, i in enumerate(order.tolist(), start=1)
    ]


def group_starts(sorted_ids: IdArray) -> IdArray:
    """Start index of each run of equal values in ``sorted_ids`` (for ``np.maximum.reduceat``)."""
    if len(sorted_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
