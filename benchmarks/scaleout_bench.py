"""Ingest workers on machines of their own against one PostgreSQL (issue 28, item 6): the same
library manuals ingested by one worker, then by two, then by two of which one is killed mid-job.

Each worker is a real ``truthbase worker`` in a network namespace of its own (its own
loopback; the database reached over a veth pair at the namespace's gateway, as from another
machine), pinned to a core of its own with one embedder thread, and all share one data folder
(tests/helpers/netns.py, tests/helpers/scaleout.py). PostgreSQL runs in the root namespace and
shares the cores. Each run gets a fresh database on one throwaway server; the files are the
``--files`` smallest PDFs of ``../shared/corpus/library`` of at least 40 KB (smaller ones are
logos and outline drawings with no text), queued as uploads are.

Checks per run: every job done, each file one document (ids = the files' sha256), no job
claimed twice except the killed worker's, which the other worker finishes (attempts 2).

    python benchmarks/scaleout_bench.py [--files 16] [--repeat 2] [--json OUT]

Needs root (network namespaces); docs/evals/scaleout.md has the numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers.corpus import CORPUS  # noqa: E402
from tests.helpers.netns import Host, unavailable  # noqa: E402
from tests.helpers.pg_server import PgServer  # noqa: E402
from tests.helpers.scaleout import queue, reaches, run_workers  # noqa: E402

MIN_BYTES = 40_000


def library_files(count: int) -> list[Path]:
    """The ``count`` smallest library PDFs of at least :data:`MIN_BYTES` (ties: by path)."""
    pdfs = [p for p in (CORPUS / "library").rglob("*.pdf") if p.stat().st_size >= MIN_BYTES]
    pdfs.sort(key=lambda p: (p.stat().st_size, str(p)))
    return pdfs[:count]


def run(
    server: PgServer, hosts: list[Host], files: list[Path], *, kill: bool, lease_s: float
) -> dict[str, Any]:
    from truthbase.store.postgres import PostgresStore

    url = server.create_database()
    store = PostgresStore(url)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            queue(store, data_dir, files)
            outcome = run_workers(
                server,
                url.rsplit("/", 1)[1],
                hosts,
                data_dir,
                store,
                kill=kill,
                lease_s=lease_s,
                logs=Path(tmp) / "logs",
            )
        documents = {d.id for d in store.list_documents()}
        units = store.counts()["units"]
    finally:
        store.close()
        server.drop_database(url)
    jobs = outcome.jobs
    pages = sum(j.pages_total or 0 for j in jobs)
    shas = {hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    taken = next((j for j in jobs if j.id == outcome.killed_job), None)
    report: dict[str, Any] = {
        "workers": len(hosts),
        "killed": outcome.killed,
        "seconds": round(outcome.seconds, 1),
        "documents_per_minute": round(60 * len(files) / outcome.seconds, 2),
        "pages_per_second": round(pages / outcome.seconds, 3),
        "jobs": len(jobs),
        "done": sum(j.state == "done" for j in jobs),
        "pages": pages,
        "units_stored": units,
        "documents_are_the_files": documents == shas,
        "jobs_by_worker": dict(Counter(j.worker for j in jobs)),
        "attempts": dict(Counter(str(j.attempts) for j in jobs)),
    }
    if taken is not None:
        report["killed_job"] = {
            "file": taken.filename,
            "state": taken.state,
            "attempts": taken.attempts,
            "finished_by": taken.worker,
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=16, help="library PDFs to ingest per run")
    parser.add_argument("--lease", type=float, default=10.0, help="lease seconds of a job")
    parser.add_argument(
        "--repeat", type=int, default=2, help="one-worker and two-worker runs, interleaved"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    why = unavailable()
    if why is not None:
        print(f"scaleout_bench: {why}", file=sys.stderr)
        raise SystemExit(2)
    files = library_files(args.files)
    with Host(1) as first, Host(2) as second:
        gateways = (first.gateway, second.gateway)
        with PgServer(listen=("127.0.0.1", *gateways), trusted_network=Host.network()) as server:
            isolation = {
                "host_loopback_reaches_database": reaches(first, "127.0.0.1", server.port),
                "gateway_reaches_database": reaches(first, first.gateway, server.port)
                and reaches(second, second.gateway, server.port),
                "addresses_inside": [a for a in first.addresses().split("\n") if a.strip()],
            }
            runs = []
            for _ in range(args.repeat):
                for hosts in ([first], [first, second]):
                    runs.append(run(server, hosts, files, kill=False, lease_s=args.lease))
                    print(json.dumps(runs[-1]), flush=True)
            runs.append(run(server, [first, second], files, kill=True, lease_s=args.lease))
            print(json.dumps(runs[-1]))
    one = statistics.median(r["seconds"] for r in runs if r["workers"] == 1 and not r["killed"])
    two = statistics.median(r["seconds"] for r in runs if r["workers"] == 2 and not r["killed"])
    speedup = one / two
    print(f"median seconds: one worker {one:.1f}, two workers {two:.1f}: {speedup:.2f}x")
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "files": [str(f.relative_to(CORPUS)) for f in files],
        "lease_s": args.lease,
        "isolation": isolation,
        "runs": runs,
        "median_seconds": {"one_worker": one, "two_workers": two},
        "two_against_one": round(speedup, 2),
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
