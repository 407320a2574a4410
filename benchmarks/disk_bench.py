"""Where an SQLite index's bytes go: bytes per chunk by table (SQLite's ``dbstat``: the pages of
each table and index, free space included) and by column (``sum(length(column))``: the values
alone), over the seed corpus ingested into a fresh index, or over an index that exists:

    PYTHONPATH=src .venv/bin/python benchmarks/disk_bench.py [--db INDEX] [--json OUT]

Without ``--db`` the seed corpus (``../shared/corpus/seed``) is ingested into a temporary file
through ``ingest_paths`` (the path of ``truthbase ingest``), so the figures are those of the
code in this tree. The file's size is measured after a checkpoint (the WAL folded in).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SEED = REPO.parent / "shared" / "corpus" / "seed"

#: The columns that hold most of an index's bytes, as (table, column).
COLUMNS = (
    ("units", "text"),
    ("units", "boxes"),
    ("units", "geometry"),
    ("chunks", "text"),
    ("chunks", "rects"),
    ("chunks", "vector"),
    ("chunks", "terms"),
    ("windows", "vector"),
    ("chunk_tokens", "signs"),
)


def ingest_seed(db: Path, corpus: Path) -> float:
    """The corpus ingested into ``db`` as ``truthbase ingest`` does it; the seconds it took."""
    from truthbase.config import Settings
    from truthbase.embed import load_embedder
    from truthbase.ingest import IngestOptions, ingest_paths
    from truthbase.store import SQLiteStore

    settings = Settings()
    embedder = load_embedder(settings.embedder)
    store = SQLiteStore(db)
    started = time.perf_counter()
    try:
        summary = ingest_paths([corpus], store, embedder, IngestOptions.from_settings(settings))
    finally:
        store.close()
    failed = summary.failed
    if failed:
        raise SystemExit(f"ingest failed: {failed}")
    return time.perf_counter() - started


def measure(db: Path) -> dict[str, Any]:
    """Bytes per chunk of the index at ``db``: the file, each table with its indexes, and the
    large columns."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        if not chunks:
            raise SystemExit(f"{db} has no chunks")
        owners = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master").fetchall())
        by_table: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = owners.get(name, name)
            if table.startswith("chunks_fts"):
                table = "chunks_fts"  # FTS5's shadow tables
            by_table[table] = by_table.get(table, 0) + int(size)
        stored = {
            (table, row[1])
            for table in {t for t, _ in COLUMNS}
            for row in conn.execute(f"PRAGMA table_info({table})")
        }
        # A column an index of this schema does not store (chunks.text since schema 22) is left
        # out, not counted as 0.
        by_column = {
            f"{table}.{column}": int(
                conn.execute(f"SELECT coalesce(sum(length({column})), 0) FROM {table}").fetchone()[
                    0
                ]
            )
            for table, column in COLUMNS
            if (table, column) in stored
        }
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    size = db.stat().st_size
    return {
        "schema_version": int(version[0]) if version else None,
        "chunks": chunks,
        "file_bytes": size,
        "bytes_per_chunk": size / chunks,
        "table_bytes_per_chunk": {
            k: v / chunks for k, v in sorted(by_table.items(), key=lambda kv: -kv[1])
        },
        "column_bytes_per_chunk": {k: v / chunks for k, v in by_column.items()},
    }


def print_report(report: dict[str, Any]) -> None:
    print(
        f"{report['chunks']} chunks, {report['file_bytes'] / 2**20:.1f} MiB: "
        f"{report['bytes_per_chunk'] / 1000:.1f} KB a chunk (schema {report['schema_version']})"
    )
    print("by table (with its indexes), bytes a chunk:")
    for name, value in report["table_bytes_per_chunk"].items():
        if value >= 10:
            print(f"  {name:24s} {value:9.0f}")
    print("by column (values only), bytes a chunk:")
    for name, value in report["column_bytes_per_chunk"].items():
        print(f"  {name:24s} {value:9.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="an index to measure (default: ingest the seed)")
    parser.add_argument("--corpus", type=Path, default=SEED)
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db
        seconds = None
        if db is None:
            db = Path(tmp) / "disk.sqlite"
            seconds = ingest_seed(db, args.corpus)
        report = {"db": str(args.db or f"fresh ingest of {args.corpus}"), **measure(db)}
        if seconds is not None:
            report["ingest_s"] = seconds
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
