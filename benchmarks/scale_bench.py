"""How cost grows with the index: the seed corpus repeated under distinct ids into SQLite and
PostgreSQL, measured at several sizes (``make bench``'s `scale` section; also alone):

    PYTHONPATH=src:. .venv/bin/python benchmarks/scale_bench.py [--docs 8 40 120] [--no-pg]
    PYTHONPATH=src:. .venv/bin/python benchmarks/scale_bench.py --docs 100 500 1000  # full

The seed PDFs are extracted, chunked and embedded once; each further copy is the same
IndexedDocument (units, chunks, vectors, sentence windows, token signs) under another id
(sha256 + "-copy-N") and title, so the embedding cost is paid once and the curve measures the
store: pages/s written (``add_document``: the transaction, full-text terms, vectors), the
index's size on disk per chunk (SQLite: the file and its WAL; PostgreSQL: the database), and
hybrid search p50/p95 (the product's ``search``, query embedding included, dev.json questions)
at each size. Identical copies make duplicate hits in search; latency, not ranking, is measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from truthbase.config import Settings  # noqa: E402
from truthbase.embed import Embedder, load_embedder  # noqa: E402
from truthbase.eval.golden import load_golden  # noqa: E402
from truthbase.extract import extract_path  # noqa: E402
from truthbase.ingest import IngestOptions, index_document  # noqa: E402
from truthbase.records import IndexedDocument  # noqa: E402
from truthbase.retrieve.hybrid import search  # noqa: E402
from truthbase.store import SQLiteStore, Store  # noqa: E402
from truthbase.store.sqlite import AnnOptions  # noqa: E402

SEED = REPO.parent / "shared" / "corpus" / "seed"
GOLDEN = REPO.parent / "shared" / "golden" / "dev.json"
DEFAULT_DOCS = (8, 70, 700)  # ~1.2k, ~10k and ~100k chunks: the curve issue 28 asks for


def base_documents(paths: list[Path], embedder: Embedder, settings: Settings) -> list[Any]:
    out: list[IndexedDocument] = []
    for path in paths:
        document = extract_path(path)
        out.append(
            index_document(document, embedder, IngestOptions.from_settings(settings), screen=None)
        )
    return out


def copy_of(base: list[IndexedDocument], k: int) -> IndexedDocument:
    """Document ``k`` of the repeated corpus: a seed document, under a new id after the first
    round."""
    indexed = base[k % len(base)]
    round_ = k // len(base)
    if round_ == 0:
        return indexed
    document = dataclasses.replace(
        indexed.document,
        sha256=f"{indexed.document.sha256}-copy-{round_}",
        title=f"{indexed.document.title} (copy {round_})",
    )
    return dataclasses.replace(indexed, document=document)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _latency(
    store: Store, embedder: Embedder, queries: list[str], settings: Settings
) -> dict[str, float]:
    search(store, embedder, queries[0], settings.retrieval)  # warm: loads what search caches
    times: list[float] = []
    for query in queries:
        started = time.perf_counter()
        search(store, embedder, query, settings.retrieval)
        times.append(time.perf_counter() - started)
    return {
        "search_p50_ms": 1000 * _percentile(times, 0.5),
        "search_p95_ms": 1000 * _percentile(times, 0.95),
    }


def curve(
    store: Store,
    size_bytes: Callable[[], int],
    base: list[IndexedDocument],
    sizes: list[int],
    embedder: Embedder,
    queries: list[str],
    settings: Settings,
    on_row: Callable[[list[dict[str, Any]]], None] | None = None,
    approximate: Callable[[Store], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Add documents up to each size in turn; the figures at each (``on_row`` hears the rows so
    far after each size; ``approximate`` adds the figures of the approximate dense arm:
    benchmarks/scale_search.py)."""
    rows: list[dict[str, Any]] = []
    done = 0
    for size in sorted(sizes):
        pages = 0
        started = time.perf_counter()
        while done < size:
            indexed = copy_of(base, done)
            store.add_document(indexed)
            pages += len(indexed.document.units)
            done += 1
        seconds = time.perf_counter() - started
        chunks = store.counts()["chunks"]
        disk = size_bytes()
        prepare = getattr(store, "prepare_postings", None)  # the steady state, not the rebuild
        postings = bool(prepare()) if prepare is not None else False
        row = {
            "documents": done,
            "chunks": chunks,
            "store_pages_per_s": pages / seconds if seconds else None,
            "store_s": seconds,
            "disk_bytes": disk,
            "bytes_per_chunk": disk / chunks if chunks else None,
            "fts_postings": postings,
            **_latency(store, embedder, queries, settings),
        }
        if approximate is not None:
            row.update(approximate(store))
        rows.append(row)
        print(
            f"  {row['documents']:5d} docs {chunks:7d} chunks: store {row['store_pages_per_s']:.0f}"
            f" pages/s, {disk / 2**20:.1f} MiB ({row['bytes_per_chunk']:.0f} B/chunk), search "
            f"p50 {row['search_p50_ms']:.0f} ms p95 {row['search_p95_ms']:.0f} ms",
            flush=True,
        )
        if on_row is not None:
            on_row(rows)
    return rows


def _sqlite_size(path: Path) -> Callable[[], int]:
    def size() -> int:
        return sum(
            p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists()
        )

    return size


def _pg_size(url: str) -> Callable[[], int]:
    import psycopg

    def size() -> int:
        with psycopg.connect(url) as connection:
            row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    return size


def bench_scale(
    sizes: list[int],
    *,
    postgres: bool = True,
    sqlite: bool = True,
    corpus: Path = SEED,
    golden: Path = GOLDEN,
    queries: int = 30,
    on_report: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The curve at ``sizes`` on each backend; ``on_report`` hears the report so far after each
    backend (a long run keeps what it measured if it is stopped during the next one)."""
    from benchmarks.scale_search import ann_figures, hnsw_figures

    keep = on_report if on_report is not None else (lambda _report: None)
    settings = Settings()
    embedder = load_embedder(settings.embedder)
    paths = sorted(corpus.glob("*.pdf"))
    started = time.perf_counter()
    base = base_documents(paths, embedder, settings)
    base_s = time.perf_counter() - started
    questions = [q.question for q in load_golden(golden).questions][:queries]
    report: dict[str, Any] = {
        "seed_files": len(paths),
        "seed_pages": sum(len(b.document.units) for b in base),
        "seed_chunks": sum(len(b.chunks) for b in base),
        "seed_extract_embed_s": base_s,
        "queries": len(questions),
        "note": "copies reuse the seed documents' vectors: no embedding after the first round",
    }
    keep(report)
    with tempfile.TemporaryDirectory() as tmp:
        if sqlite:
            db = Path(tmp) / "scale.sqlite"
            print(f"\nScale, SQLite (seed corpus repeated; sizes {sizes} documents)")
            # The curve's own figures with the exact dense arm (the full-text arm as the product
            # picks it: FTS5, or postings from fts_postings_min_rows); then the graph's beside.
            store = SQLiteStore(
                db,
                ann=AnnOptions(min_rows=None),
                fts_postings_min_rows=settings.sqlite.fts_postings_min_rows,
            )
            started = time.perf_counter()
            report["sqlite"] = curve(
                store,
                _sqlite_size(db),
                base,
                sizes,
                embedder,
                questions,
                settings,
                approximate=lambda s: ann_figures(s, embedder, questions, settings),  # type: ignore[arg-type]
            )
            report["sqlite_total_s"] = time.perf_counter() - started
            store.close()
            keep(report)
    if postgres:
        from tests.helpers.pg_server import PgServer, PgUnavailableError

        from truthbase.store.postgres import PostgresStore

        try:
            with PgServer() as server:
                url = server.create_database()
                print(f"Scale, PostgreSQL (exact dense arm; sizes {sizes} documents)")
                pg = PostgresStore(url)
                started = time.perf_counter()
                report["postgres"] = curve(
                    pg,
                    _pg_size(url),
                    base,
                    sizes,
                    embedder,
                    questions,
                    settings,
                    on_row=lambda rows: keep({**report, "postgres": rows}),
                    approximate=lambda s: hnsw_figures(url, s, embedder, questions, settings),
                )
                report["postgres_total_s"] = time.perf_counter() - started
                pg.close()
                keep(report)
        except PgUnavailableError as exc:
            report["postgres"] = None
            print(f"PostgreSQL skipped: {exc}")
    return report


def print_scale(report: dict[str, Any]) -> None:
    for backend in ("sqlite", "postgres"):
        rows = report.get(backend)
        if not rows:
            continue
        print(f"\nscale curve, {backend} ({report['note']})")
        print(
            "| docs | chunks | store pages/s | MiB | bytes/chunk | search p50 ms | p95 ms "
            "| approximate p50 ms | p95 ms | dense recall |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            fast = r.get("ann") or r.get("hnsw") or {}
            print(
                f"| {r['documents']} | {r['chunks']} | {r['store_pages_per_s']:.0f} | "
                f"{r['disk_bytes'] / 2**20:.1f} | {r['bytes_per_chunk']:.0f} | "
                f"{r['search_p50_ms']:.0f} | {r['search_p95_ms']:.0f} | "
                f"{fast.get('p50_ms', float('nan')):.0f} | {fast.get('p95_ms', float('nan')):.0f}"
                f" | {r.get('dense_recall_at_candidates', {}).get('tie_aware', float('nan')):.3f} |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, nargs="+", default=list(DEFAULT_DOCS))
    parser.add_argument("--no-pg", dest="postgres", action="store_false")
    parser.add_argument("--no-sqlite", dest="sqlite", action="store_false")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    def write(report: dict[str, Any]) -> None:
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2))

    report = bench_scale(
        args.docs,
        postgres=args.postgres,
        sqlite=args.sqlite,
        queries=args.queries,
        on_report=write,
    )
    print_scale(report)
    write(report)
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
