"""`make bench`, search section: a server-like process over a large SQLite index, in its own
process (so its RSS is its own): peak and current RSS after loading the vectors and answering
hybrid searches, p50/p95, and the dense arm's recall@10 against a float32 scan of the vectors
the file stores (int8 codes and a scale a row since schema 21, decoded; float32 before).

Run alone: ``python benchmarks/search_bench.py --db INDEX.sqlite`` (prints JSON).
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mib() -> float:
    """This process's own peak RSS (VmHWM): ``ru_maxrss`` after exec starts at the peak of the
    process that forked it (Linux keeps the old mm's high-water mark), so a bench child spawned
    by a big bench process would report the parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def float32_top(path: Path, queries: npt.NDArray[np.float32], k: int) -> list[list[int]]:
    """Each query's top ``k`` chunk ids by a float32 scan of every vector in the file (decoded:
    :func:`truthbase.store.codec.vectors_from_codes`), read in blocks (this process's RSS is
    measured before it runs)."""
    from truthbase.store.codec import vectors_from_codes

    ids: list[int] = []
    scores: list[npt.NDArray[np.float32]] = []
    with sqlite3.connect(path) as conn:
        cursor = conn.execute(
            "SELECT id, vector FROM chunks UNION ALL SELECT chunk_id, vector FROM windows "
            "ORDER BY 1"
        )
        while rows := cursor.fetchmany(8192):
            matrix = vectors_from_codes([bytes(r[1]) for r in rows], queries.shape[1])
            ids += [r[0] for r in rows]
            scores.append(matrix @ queries.T)
    every = np.concatenate(scores)  # (rows, queries)
    owner = np.array(ids)
    out = []
    for q in range(len(queries)):
        chunk: dict[int, float] = {}
        for chunk_id, score in zip(owner.tolist(), every[:, q].tolist(), strict=True):
            if score > chunk.get(chunk_id, -2.0):
                chunk[chunk_id] = score
        out.append([c for c, _ in sorted(chunk.items(), key=lambda i: (-i[1], i[0]))[:k]])
    return out


def serve(db: Path, searches: int) -> dict[str, Any]:
    """What a server process over ``db`` holds: open, load the vectors, run hybrid searches."""
    from truthbase.config import Settings
    from truthbase.embed import load_embedder
    from truthbase.retrieve.hybrid import search
    from truthbase.store import SQLiteStore

    settings = Settings()
    embedder = load_embedder(settings.embedder)
    store = SQLiteStore(db)
    base = _rss_mib()
    rng = np.random.default_rng(3)
    words = [" ".join(f"w{w}" for w in rng.integers(0, 5_000, 6)) for _ in range(searches)]
    started = time.perf_counter()
    search(store, embedder, words[0], settings.retrieval)  # loads the vector matrix
    load_s = time.perf_counter() - started
    times = []
    for text in words:
        started = time.perf_counter()
        search(store, embedder, text, settings.retrieval)
        times.append(time.perf_counter() - started)
    times.sort()
    rss = _rss_mib()
    peak = _peak_mib()
    dense = rng.standard_normal((20, embedder.dim)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    got = [[h.chunk_id for h in store.dense_search(q, 10)] for q in dense]
    store.close()
    want = float32_top(db, dense, 10)
    recall = float(np.mean([len(set(g) & set(w)) / len(w) for g, w in zip(got, want, strict=True)]))
    return {
        "searches": searches,
        "p50_ms": 1000 * times[len(times) // 2],
        "p95_ms": 1000 * times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
        "vector_load_s": load_s,
        "rss_after_open_mib": base,
        "rss_mib": rss,
        "peak_rss_mib": peak,
        "dense_recall@10_vs_float32": recall,
    }


def bench_server(db: Path, searches: int = 40) -> dict[str, Any]:
    """:func:`serve` in a fresh process (its RSS counts nothing of the bench's own)."""
    out = subprocess.run(
        [sys.executable, __file__, "--db", str(db), "--searches", str(searches)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def print_server(chunks: int, report: dict[str, Any]) -> None:
    print(
        f"server process over a {chunks}-chunk index: RSS {report['rss_mib']:.0f} MiB "
        f"(peak {report['peak_rss_mib']:.0f}, goal <= 600 MB), hybrid p50 "
        f"{report['p50_ms']:.1f} ms (goal <= 60), p95 {report['p95_ms']:.1f} ms, vectors loaded "
        f"in {report['vector_load_s']:.1f} s, dense recall@10 vs float32 "
        f"{report['dense_recall@10_vs_float32']:.3f} (goal >= 0.99)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--searches", type=int, default=40)
    args = parser.parse_args()
    print(json.dumps(serve(args.db, args.searches)))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
