"""The dense arm of a large SQLite index through an approximate nearest-neighbour index: an HNSW
graph (usearch) over the same int8 codes the exact arm scores, then exact rescoring.

Above :attr:`AnnOptions.min_rows` vector rows (chunks and sentence windows) the exact arm's
matrix product grows with the index (issue 28: 200 ms of a search at 144k chunks); the graph
finds the ``overfetch * limit`` nearest distinct vectors instead, the chunks of the rows that
hold them are gathered (a chunk scores the best of its own vector and its windows', as in the
exact arm), and every row of those chunks is rescored with the stored int8 codes and scales
(schema 21), the values the exact arm scores: on the candidates the two agree (up to float32's
order of summation). Below the threshold nothing changes.

Consistency with the file: the graph's keys are the rows of :class:`.search.CompactVectors`,
loaded once per index generation, and a graph belongs to one :attr:`CompactVectors.fingerprint`
(a hash of every row's id, kind, owner and scale: what the vector rows of the file hold). It is
kept beside the database (``<db>.ann`` and ``<db>.ann.json``, which names the fingerprint it was
built for) and reused by the next process while the fingerprint matches; a stale one (a
document added or deleted since) is rebuilt in a background thread while the exact arm
answers, so a write never makes a search wait minutes. The ranked chunks are looked up in the
file, as the exact arm's are: one deleted since the matrix was loaded is never returned,
whatever the sidecar holds. Scope filters (``doc_ids``) apply to the graph's candidates; when
fewer than ``limit`` chunks survive after the over-fetch grows, the exact arm answers."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ...records import ArmHit, FloatMatrix
from ..background import BackgroundValue
from .connection import Database
from .search import CompactVectors, VectorCache, stored_chunks

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = ["AnnOptions", "AnnState", "ann_search", "sidecar_paths"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class AnnOptions:
    """When the graph is used and how it is built and searched (settings.sqlite)."""

    min_rows: int | None = None  # None: never, exact always (settings.sqlite.ann_min_rows)
    connectivity: int = 16
    expansion_add: int = 128
    expansion_search: int = 2048
    overfetch: int = 8
    persist: bool = True  # keep the graph beside the database file


def sidecar_paths(db_path: Path) -> tuple[Path, Path]:
    """The graph's file and its JSON record beside the database."""
    return db_path.with_name(db_path.name + ".ann"), db_path.with_name(db_path.name + ".ann.json")


def _usearch_index() -> type[Index]:
    """usearch's Index class, onnxruntime loaded before it. usearch loads numkong, and
    onnxruntime loaded after numkong crashes the process (SIGSEGV in the embedder's first
    call, onnxruntime 1.x here); loaded the other way round both work (test_sqlite_ann's
    subprocess test). Imported here, not at module import: a process that never enables the
    graph (the default) loads neither for it."""
    import onnxruntime  # noqa: F401  (its libraries first; see above)
    from usearch.index import Index

    return Index


def _new_index(dim: int, options: AnnOptions) -> Index:
    index_class = _usearch_index()
    return index_class(
        ndim=dim,
        metric="cos",
        dtype="i8",
        connectivity=options.connectivity,
        expansion_add=options.expansion_add,
        expansion_search=options.expansion_search,
    )


@dataclass(frozen=True, slots=True)
class Graph:
    """The graph over the index's distinct stored vectors (key k: the k-th distinct one) and
    the rows that hold each: copies of a document, or a paragraph every page repeats, are one
    point of the graph. Copies filled each other's neighbour lists when every row was a point
    (recall .67 at 145,500 chunks of 1,000 copies: docs/evals/scale-search.md)."""

    index: Index
    rows: npt.NDArray[np.int64]  # every row, grouped by key, ascending within a key
    starts: npt.NDArray[np.int64]  # (keys + 1,): key k's rows are rows[starts[k]:starts[k + 1]]


def _distinct(
    compact: CompactVectors,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct stored vectors (int8 codes and scale alike): one row of each, and every
    row grouped by the vector it holds, with where each group starts."""
    both = np.concatenate([compact.codes, compact.scales.reshape(-1, 1).view(np.int8)], axis=1)
    packed = np.ascontiguousarray(both).view(np.dtype((np.void, both.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable").astype(np.int64)
    starts = np.zeros(len(first) + 1, dtype=np.int64)
    np.cumsum(np.bincount(inverse, minlength=len(first)), out=starts[1:])
    return first.astype(np.int64), order, starts


def _build_params(compact: CompactVectors, options: AnnOptions) -> dict[str, object]:
    return {
        "fingerprint": compact.fingerprint,
        "points": "distinct vectors",
        "rows": len(compact.codes),
        "dim": int(compact.codes.shape[1]),
        "connectivity": options.connectivity,
        "expansion_add": options.expansion_add,
    }


def load_or_build(db_path: Path | None, compact: CompactVectors, options: AnnOptions) -> Graph:
    """The graph for ``compact``: the sidecar's when it was built for the same rows with the
    same parameters (memory-mapped, no load time), else built and saved (atomically: a reader
    sees the old pair or the new one, and a mismatched pair is only rebuilt)."""
    wanted = _build_params(compact, options)
    first, rows, starts = _distinct(compact)
    paths = sidecar_paths(db_path) if db_path is not None and options.persist else None
    if paths is not None and paths[0].exists() and paths[1].exists():
        try:
            if json.loads(paths[1].read_text("utf-8")) == wanted:
                index = _new_index(int(compact.codes.shape[1]), options)
                index.view(str(paths[0]))
                if len(index) == len(first):
                    return Graph(index, rows, starts)
        except (OSError, ValueError, RuntimeError) as exc:
            log.warning("ANN sidecar %s unreadable, rebuilt: %s", paths[0], exc)
    index = _new_index(int(compact.codes.shape[1]), options)
    index.add(np.arange(len(first), dtype=np.uint64), compact.codes[first], threads=0)
    if paths is not None:
        try:
            tmp = [p.with_name(p.name + f".tmp{os.getpid()}") for p in paths]
            index.save(str(tmp[0]))
            tmp[1].write_text(json.dumps(wanted), "utf-8")
            for part, path in zip(tmp, paths, strict=True):
                os.replace(part, path)
        except OSError as exc:  # a read-only folder: the graph serves this process only
            log.warning("ANN sidecar %s not written: %s", paths[0], exc)
    return Graph(index, rows, starts)


class AnnState:
    """The graph of one store: the one for the current rows, or None while it is built in a
    background thread (the exact arm answers meanwhile; one build at a time, a failed build
    not retried for the same rows: :class:`..background.BackgroundValue`)."""

    def __init__(self, db_path: Path | None, options: AnnOptions) -> None:
        self.db_path = db_path
        self.options = options
        # A graph is minutes of both cores at scale: one build at a time, for the newest rows.
        self._value: BackgroundValue[str, Graph] = BackgroundValue(
            "truthbase-ann", "ANN build failed; the dense arm stays exact for these rows"
        )

    @property
    def builds(self) -> int:
        """Graphs built or loaded by this store (the tests count rebuilds)."""
        return self._value.builds

    def wanted(self, compact: CompactVectors) -> bool:
        rows = self.options.min_rows
        return rows is not None and len(compact.codes) >= max(rows, 1)

    def index_for(self, compact: CompactVectors, *, wait: bool = False) -> Graph | None:
        """The graph of ``compact``'s rows when it is ready; otherwise None, after starting its
        build (``wait``: the build runs first and the graph is returned)."""
        if not self.wanted(compact):
            return None
        return self._value.get(
            compact.fingerprint,
            lambda: load_or_build(self.db_path, compact, self.options),
            wait=wait,
        )

    def describe(self) -> dict[str, object]:
        return {**asdict(self.options), "ready": self._value.has_value()}


def _query_codes(query: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """The query in int8 like the rows (cosine does not see the scale)."""
    scale = max(float(np.abs(query).max()), 1e-12) / 127.0
    return np.asarray(np.rint(query / scale), dtype=np.int8)


def _candidate_rows(
    graph: Graph,
    compact: CompactVectors,
    keys: npt.NDArray[np.int64],
    query: npt.NDArray[np.float32],
    keep: npt.NDArray[np.bool_] | None,
    per_key: int,
    count: int,
) -> npt.NDArray[np.int64]:
    """Rows of the graph's ``keys`` for rescoring: key by key in the order of their exact
    scores (a key's rows hold one vector, so one row scores them all), at most ``per_key`` of
    each among the chunks ``keep`` admits (the lowest chunk ids, as ties go: all a top
    ``per_key`` can take from one vector), until ``count`` rows are taken."""
    scores = compact.row_scores(graph.rows[graph.starts[keys]], query)
    taken: list[npt.NDArray[np.int64]] = []
    total = 0
    for key in keys[np.argsort(-scores, kind="stable")].tolist():
        rows = graph.rows[graph.starts[key] : graph.starts[key + 1]]
        if keep is not None:
            rows = rows[keep[np.searchsorted(compact.starts, rows, side="right") - 1]]
        taken.append(rows[:per_key])
        total += len(taken[-1])
        if total >= count:
            break
    return np.concatenate(taken) if taken else np.zeros(0, np.int64)


def ann_search(
    db: Database,
    cache: VectorCache,
    state: AnnState,
    query_vector: FloatMatrix,
    limit: int,
    doc_ids: Collection[str] | None = None,
) -> list[ArmHit] | None:
    """The dense arm through the graph: the top ``limit`` chunks of ``doc_ids`` (None: all) by
    their exact best-row cosine, among the chunks of the graph's nearest vectors. None when the
    graph is not used (below the threshold, or not built yet) or too few of its candidates are
    in ``doc_ids``: the caller runs the exact arm."""
    query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    with db.lock:
        compact = cache.vectors(db)
    index = state.index_for(compact)
    if index is None or limit < 1:
        return None
    keep: npt.NDArray[np.bool_] | None = None
    if doc_ids is not None:
        keep = np.isin(compact.docs, np.array(sorted(doc_ids), dtype=np.str_))
        if int(keep.sum()) < limit:
            return None  # a small scope: exact over it is as cheap and never short
    total = len(compact.codes)
    points = len(index.starts) - 1
    codes = _query_codes(query)
    # Counted in distinct vectors, not rows, and ordered by their exact scores before their
    # rows are taken: counted in rows in the graph's order, a vector three copies hold took
    # three of k = 1's eight places, and the graph's int8 order of two near-equal vectors
    # (cosines .6315 and .6304 on the seed index) decided the top chunk alone.
    count = min(points, state.options.overfetch * limit)
    while True:
        found = index.index.search(codes, count, threads=1)
        keys = np.asarray(found.keys, dtype=np.int64).reshape(-1)
        rows = _candidate_rows(index, compact, keys, query, keep, limit, count)
        groups = np.searchsorted(compact.starts, rows, side="right") - 1
        groups = groups[np.sort(np.unique(groups, return_index=True)[1])]
        if len(groups) >= limit:
            break
        if count >= points or count >= 64 * state.options.overfetch * limit:
            return None
        count = min(points, count * 4)
    ends = np.append(compact.starts[1:], total)
    sizes = ends[groups] - compact.starts[groups]
    rows = np.concatenate([np.arange(compact.starts[g], ends[g]) for g in groups.tolist()])
    # Each candidate chunk's best row, scored from the stored codes as the exact arm scores them.
    best = np.maximum.reduceat(compact.row_scores(rows, query), np.cumsum(sizes) - sizes)
    chunk_ids = compact.chunk_ids[groups]
    order = np.lexsort((chunk_ids, -best))  # ties to the lower chunk id, as in the exact arm
    with db.lock:
        stored = stored_chunks(db, chunk_ids[order].tolist())
    kept = [i for i in order.tolist() if int(chunk_ids[i]) in stored][:limit]
    if len(kept) < limit:
        return None  # deleted since the matrix was loaded: the exact arm reloads and answers
    return [
        ArmHit(chunk_id=int(chunk_ids[i]), rank=rank, score=float(best[i]))
        for rank, i in enumerate(kept, start=1)
    ]
