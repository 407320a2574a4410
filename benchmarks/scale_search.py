"""Search at library scale (issue 28 item 5): hybrid search p50/p95 with the exact dense arm and
with the approximate one (SQLite: the usearch graph of store/sqlite/ann.py; PostgreSQL: HNSW),
and the approximate dense arm's recall of the exact arm's top chunks, on indexes made of the
seed corpus repeated under distinct ids (benchmarks/scale_bench.py's copies: synthetic scale,
the seed's real vectors; identical copies make duplicate hits, so ranking quality is not what
is measured, latency and recall against exact are)::

    PYTHONPATH=src:. .venv/bin/python benchmarks/scale_search.py --make 70 1000 --dir /tmp/scale
    PYTHONPATH=src:. .venv/bin/python benchmarks/scale_search.py --sqlite /tmp/scale/s70.sqlite \\
        /tmp/scale/s1000.sqlite --pg-docs 70 --json docs/evals/scale-search.json

``--make N..`` stores N copies into ``--dir``/sN.sqlite first. Each query is timed as the
product runs it (``search``: query embedding, every arm, fusion), wall-clock and CPU seconds of
this process (the host is shared: CPU time is what an idle machine's wall time would be, the
search being one thread). The graph is built (or loaded from its sidecar) before timing; its
build time is reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.scale_bench import GOLDEN, SEED, base_documents, copy_of  # noqa: E402

from truthbase.config import Settings  # noqa: E402
from truthbase.embed import Embedder, load_embedder  # noqa: E402
from truthbase.eval.golden import load_golden  # noqa: E402
from truthbase.retrieve.hybrid import search  # noqa: E402
from truthbase.store import SQLiteStore, Store  # noqa: E402
from truthbase.store.sqlite import AnnOptions  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(
    store: Store, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, float]:
    """Hybrid search p50/p95 (wall and CPU ms) and the p50 of each stage."""
    search(store, embedder, queries[0], settings.retrieval)  # warm
    wall: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {"fts": [], "embed": [], "dense": [], "late": [], "fb": []}
    for query in queries:
        w, c = time.perf_counter(), time.process_time()
        result = search(store, embedder, query, settings.retrieval)
        wall.append(1000 * (time.perf_counter() - w))
        cpu.append(1000 * (time.process_time() - c))
        t = result.timings
        for name, value in (
            ("fts", t.fts),
            ("embed", t.embed),
            ("dense", t.dense),
            ("late", t.late),
            ("fb", t.feedback),
        ):
            stages[name].append(1000 * value)
    return {
        "p50_ms": _pct(wall, 0.5),
        "p95_ms": _pct(wall, 0.95),
        "cpu_p50_ms": _pct(cpu, 0.5),
        "cpu_p95_ms": _pct(cpu, 0.95),
        **{f"{name}_p50_ms": _pct(v, 0.5) for name, v in stages.items()},
    }


def dense_recall(
    approximate: Any, exact: Any, vectors: Any, k: int, doc_ids: list[str] | None = None
) -> dict[str, float]:
    """The approximate dense arm's recall of the exact arm's top ``k``, averaged over the
    queries: by chunk id, and tie-aware (the share of the approximate top ``k`` scoring at
    least the exact ``k``-th score: the copies of a document have identical vectors, so a top
    chunk's copies tie with it and the id-wise recall counts an equal-scoring copy a miss).
    The approximate scores are exact (rescored), so a chunk at or above the exact ``k``-th
    score is a true top-``k`` member."""
    by_id: list[float] = []
    tie_aware: list[float] = []
    for vector in vectors:
        want = exact(vector, k, doc_ids)
        got = approximate(vector, k, doc_ids)
        ids = {h.chunk_id for h in want}
        by_id.append(len(ids & {h.chunk_id for h in got}) / max(len(want), 1))
        floor = want[-1].score - 1e-6 if want else 0.0
        tie_aware.append(sum(h.score >= floor for h in got) / max(len(want), 1))
    return {"by_id": sum(by_id) / len(by_id), "tie_aware": sum(tie_aware) / len(tie_aware)}


def ann_figures(
    exact: SQLiteStore, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, Any]:
    """The same index searched through the graph (built or loaded first, timed) and the dense
    arm's recall of the exact top chunks: all documents, and a third of them (a scope)."""
    fast = SQLiteStore(
        exact.path,
        ann=AnnOptions(min_rows=1),
        fts_postings_min_rows=settings.sqlite.fts_postings_min_rows,
    )
    fast._vectors = exact._vectors  # the same matrix, loaded once
    row: dict[str, Any] = {}
    started = time.perf_counter()
    assert fast.prepare_ann()
    row["ann_prepare_s"] = time.perf_counter() - started
    row["ann_with_postings"] = fast.prepare_postings()  # the full-text arm as the product has it
    row["ann"] = latency(fast, embedder, queries, settings)
    vectors = embedder.embed(queries)
    k = settings.retrieval.candidates
    row["dense_recall_at_candidates"] = dense_recall(
        fast.dense_search, exact.exact_dense_search, vectors, k
    )
    row["dense_recall_at_10"] = dense_recall(
        fast.dense_search, exact.exact_dense_search, vectors, 10
    )
    some = [d.id for d in exact.list_documents()][::3]
    row["dense_recall_scoped"] = dense_recall(
        fast.dense_search, exact.exact_dense_search, vectors[:10], k, some
    )
    fast.close()
    return row


def hnsw_figures(
    url: str, exact: Store, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, Any]:
    """The PostgreSQL index opened with the automatic threshold at 1 row (opening builds the
    HNSW indexes, timed), searched, and its dense arm's recall of the exact top chunks."""
    from truthbase.store.postgres import PostgresStore

    started = time.perf_counter()
    auto = PostgresStore(url, hnsw_min_rows=1)
    row: dict[str, Any] = {"hnsw_build_s": time.perf_counter() - started}
    row["hnsw"] = latency(auto, embedder, queries, settings)
    vectors = embedder.embed(queries)
    row["dense_recall_at_candidates"] = dense_recall(
        auto.dense_search, exact.dense_search, vectors, settings.retrieval.candidates
    )
    auto.close()
    return row


def postings_figures(
    exact: SQLiteStore, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, Any]:
    """The same index with the full-text arm from postings in memory (built first, timed; the
    same ranking as FTS5's, store/sqlite/postings.py), the dense arm exact."""
    fast = SQLiteStore(exact.path, ann=AnnOptions(min_rows=None), fts_postings_min_rows=1)
    fast._vectors = exact._vectors  # the same matrix, loaded once
    started = time.perf_counter()
    assert fast.prepare_postings()
    row: dict[str, Any] = {"postings_build_s": time.perf_counter() - started}
    postings = fast._postings.postings(fast._db)
    assert postings is not None
    row["postings_mb"] = postings.nbytes / 1e6
    row["postings"] = latency(fast, embedder, queries, settings)
    fast.close()
    return row


def sqlite_row(
    path: Path, embedder: Embedder, queries: list[str], settings: Settings, graph: bool = True
) -> dict[str, Any]:
    exact = SQLiteStore(path, ann=AnnOptions(min_rows=None), fts_postings_min_rows=None)
    row: dict[str, Any] = {"index": str(path), **exact.counts()}
    started = time.perf_counter()
    row["vector_rows"] = len(exact._vectors.vectors(exact._db).codes)
    row["matrix_load_s"] = time.perf_counter() - started
    row["exact"] = latency(exact, embedder, queries, settings)
    print(f"  {path.name}: {row['chunks']} chunks, exact, FTS5 {row['exact']}", flush=True)
    row.update(postings_figures(exact, embedder, queries, settings))
    print(f"  {path.name}: exact, postings {row['postings']}", flush=True)
    if not graph:
        exact.close()
        return row
    row.update(ann_figures(exact, embedder, queries, settings))
    print(f"  {path.name}: ann {row['ann']} recall {row['dense_recall_at_candidates']}")
    exact.close()
    return row


def pg_row(
    source: Path, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, Any]:
    """The SQLite index ``source`` copied into a fresh PostgreSQL database (the test helper's
    server), searched exact, then with HNSW built by the automatic threshold."""
    from tests.helpers.pg_server import PgServer

    from truthbase.store.copy import copy_sqlite_index
    from truthbase.store.postgres import PostgresStore

    with PgServer() as server:
        url = server.create_database()
        exact = PostgresStore(url)
        started = time.perf_counter()
        copy_sqlite_index(source, exact)
        row: dict[str, Any] = {"index": f"postgres <- {source.name}", **exact.counts()}
        row["copy_s"] = time.perf_counter() - started
        row["exact"] = latency(exact, embedder, queries, settings)
        print(f"  pg {row['chunks']} chunks exact {row['exact']}", flush=True)
        row.update(hnsw_figures(url, exact, embedder, queries, settings))
        print(f"  pg hnsw {row['hnsw']} recall {row['dense_recall_at_candidates']}")
        exact.close()
    return row


def make(sizes: list[int], folder: Path, embedder: Embedder, settings: Settings) -> None:
    base = base_documents(sorted(SEED.glob("*.pdf")), embedder, settings)
    for size in sizes:
        store = SQLiteStore(folder / f"s{size}.sqlite")
        for k in range(store.counts()["documents"], size):
            store.add_document(copy_of(base, k))
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--make", type=int, nargs="*", default=[])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/scale"))
    parser.add_argument("--sqlite", type=Path, nargs="*", default=[])
    parser.add_argument("--pg", type=Path, nargs="*", default=[], help="SQLite indexes to copy")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument(
        "--golden", type=Path, default=GOLDEN, help="the golden set whose questions are asked"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--no-graph",
        action="store_true",
        help="skip the SQLite dense arm's graph (its build takes ~25 min at 145k chunks)",
    )
    args = parser.parse_args()
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    if args.make:
        make(args.make, args.dir, embedder, settings)
    queries = [q.question for q in load_golden(args.golden).questions][: args.queries]
    report: dict[str, Any] = {"queries": len(queries), "sqlite": [], "postgres": []}

    def keep() -> None:
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=2))

    for path in args.sqlite:
        report["sqlite"].append(sqlite_row(path, embedder, queries, settings, not args.no_graph))
        keep()
    for path in args.pg:
        report["postgres"].append(pg_row(path, embedder, queries, settings))
        keep()
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()
    sys.exit(main())
