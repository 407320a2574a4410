"""The real library through the product (issue 28, item 7): ingest time, pages a second, peak
memory and bytes a chunk of `truthbase ingest` over ../shared/corpus/library, then search
p50/p95 with the library-dev.json questions on the index it made, with FTS5 and with the
full-text postings (benchmarks/scale_search.py's rows). ``make bench-library``; on two idle
cores the whole library takes about an hour, so it is a target of its own, outside ``make
bench``. ``--limit N`` ingests only the N smallest files (a check of the bench itself).

    .venv/bin/python benchmarks/library_bench.py [--limit N] [--json OUT] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.scale_search import sqlite_row  # noqa: E402

from truthbase.config import Settings  # noqa: E402
from truthbase.embed import load_embedder  # noqa: E402
from truthbase.eval.golden import load_golden  # noqa: E402
from truthbase.store import SQLiteStore  # noqa: E402

LIBRARY = ROOT.parent / "shared" / "corpus" / "library"
GOLDEN = ROOT.parent / "shared" / "golden" / "library-dev.json"


def ingest(db: Path, paths: list[Path]) -> dict[str, Any]:
    """`truthbase ingest` in a process of its own: wall time, its peak RSS, what it reported."""
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).with_name("truthbase")), "--db", str(db), "ingest"]
        + ["--json-progress"]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    documents = [line for line in lines if "status" in line]
    return {
        "exit_code": done.returncode,
        "seconds": seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "ingested": sum(d["status"] == "ingested" for d in documents),
        "failed": [d for d in documents if d["status"] != "ingested"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=LIBRARY)
    parser.add_argument("--golden", type=Path, default=GOLDEN)
    parser.add_argument("--limit", type=int, help="ingest only the N smallest files")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="a folder to keep the index in")
    args = parser.parse_args()
    paths = sorted(
        (p for p in args.corpus.rglob("*") if p.suffix.lower() in {".pdf", ".epub"}),
        key=lambda p: p.stat().st_size,
    )
    if args.limit:
        paths = paths[: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        db = folder / "library.sqlite"
        report: dict[str, Any] = {"files": len(paths), "ingest": ingest(db, paths)}
        store = SQLiteStore(db)
        counts = store.counts()
        pages = counts["units"]  # PDF pages and EPUB sections
        store.close()
        size = sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())
        report["ingest"].update(
            chunks=counts["chunks"],
            pages=pages,
            pages_per_s=pages / report["ingest"]["seconds"],
            bytes_per_chunk=size / max(counts["chunks"], 1),
        )
        print(json.dumps(report["ingest"], indent=2), flush=True)
        if counts["chunks"]:
            settings = Settings()
            embedder = load_embedder(settings.embedder)
            queries = [q.question for q in load_golden(args.golden).questions]
            report["search"] = sqlite_row(db, embedder, queries, settings, graph=False)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if report["ingest"]["exit_code"] in (0, 1) else 2


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()
    sys.exit(main())
