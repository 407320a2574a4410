"""Every stored row of an ingest, to compare two trees byte for byte (issue 28 item 3).

Ingests the files into a fresh SQLite index with the bundled embedder and the default settings,
one document at a time as ``truthbase ingest`` does, and writes every row of the index
(``iterdump``, each document's ingest time masked) to ``--out``. ``--batch-chunks N`` embeds and
writes every document in batches of N chunks (the default: only documents of more than
``BATCH_CHUNKS``). Run from each tree and ``cmp`` the outputs::

    PYTHONPATH=src python benchmarks/ingest_rows.py --out /tmp/a.sql ../shared/corpus/seed/*.pdf
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", type=Path, nargs="+", help="files to ingest")
    parser.add_argument("--out", type=Path, required=True, help="where the rows go")
    parser.add_argument("--batch-chunks", type=int, default=None, help="chunks a batch")
    args = parser.parse_args()

    from truthbase.config import Settings
    from truthbase.embed import load_embedder
    from truthbase.ingest import FileOutcome, IngestOptions, plan, prepare_file, store_prepared
    from truthbase.store import SQLiteStore

    settings = Settings()
    embedder = load_embedder(settings.embedder)
    options = IngestOptions.from_settings(settings)
    extra = {} if args.batch_chunks is None else {"batch_chunks": args.batch_chunks}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "rows.sqlite"
        store = SQLiteStore(db)
        for entry in plan(args.paths, store):
            if isinstance(entry, FileOutcome):
                print(f"{entry.path.name}: {entry.status}")
                continue
            outcome, indexed = prepare_file(entry, options, embedder, **extra)
            outcome = store_prepared(store, outcome, indexed)
            print(f"{outcome.path.name}: {outcome.status}, {outcome.chunks} chunks")
        store.close()
        connection = sqlite3.connect(db)
        try:
            with args.out.open("w") as out:
                for line in connection.iterdump():
                    out.write(_STAMP.sub("<time>", line) + "\n")
        finally:
            connection.close()
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
