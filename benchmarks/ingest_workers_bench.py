"""`ingest --workers N` on the seed corpus: wall time of a whole folder ingest into a fresh
SQLite file with 1, 2 and 4 workers (``make bench``'s `workers` section; also alone):

    PYTHONPATH=src .venv/bin/python benchmarks/ingest_workers_bench.py [--workers 1 2 4]

1 is the in-process ingest (``ingest_paths``, the embedder loaded before the clock starts, as a
long-running CLI has it); N > 1 is ``ingest_paths_parallel``, timed from the call, so the
workers' start (spawn, imports, loading the embedder in each) is part of its cost, as it is for
a user. On 2 cores the embedder's onnxruntime threads of several workers compete for the same
cores; the default (``truthbase.ingest.pool.DEFAULT_WORKERS``) is the fastest measured here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from truthbase.config import Settings
from truthbase.embed import load_embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.ingest.pool import DEFAULT_WORKERS, ingest_paths_parallel
from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "corpus" / "seed"


def bench_workers(counts: list[int], corpus: Path = SEED) -> dict[str, Any]:
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    embedder.embed(["warm up the session"])
    rows: list[dict[str, Any]] = []
    for workers in counts:
        with tempfile.TemporaryDirectory() as tmp:
            store = SQLiteStore(Path(tmp) / "w.sqlite")
            started = time.perf_counter()
            if workers == 1:
                summary = ingest_paths(
                    [corpus], store, embedder, IngestOptions.from_settings(settings)
                )
            else:
                summary = ingest_paths_parallel(
                    [corpus], store, IngestOptions.from_settings(settings), workers=workers
                )
            seconds = time.perf_counter() - started
            chunks = store.counts()["chunks"]
            store.close()
        pages = sum(o.pages for o in summary.outcomes)
        rows.append(
            {
                "workers": workers,
                "seconds": seconds,
                "pages": pages,
                "chunks": chunks,
                "pages_per_s": pages / seconds,
                "failed": summary.count("failed"),
            }
        )
        print(f"  {workers} worker(s): {seconds:.1f} s, {pages / seconds:.1f} pages/s", flush=True)
    one = next((r["seconds"] for r in rows if r["workers"] == 1), None)
    for r in rows:
        r["speedup_vs_1"] = one / r["seconds"] if one else None
    fastest = min(rows, key=lambda r: r["seconds"])["workers"]
    return {"rows": rows, "fastest": fastest, "default": DEFAULT_WORKERS}


def print_workers(report: dict[str, Any]) -> None:
    print("\ningest --workers N, seed corpus, fresh SQLite (wall s, speed-up against 1)")
    for r in report["rows"]:
        print(
            f"  {r['workers']}: {r['seconds']:.1f} s, {r['pages_per_s']:.1f} pages/s, "
            f"x{r['speedup_vs_1']:.2f}"
        )
    print(f"fastest: {report['fastest']} worker(s); the default is {report['default']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = bench_workers(args.workers)
    print_workers(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
