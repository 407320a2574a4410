"""Upload-to-searchable time: one PDF through ``POST /api/documents`` into a fresh index, until
its job is done and until ``/api/search`` finds a phrase of one of its pages.

Each run starts ``truthbase serve`` (a subprocess: uvicorn on 127.0.0.1, a free port, the
single local user, the server's own ingest worker) over a fresh SQLite index in a temporary
folder. Before the upload one search loads the embedder, as any earlier question would on a
running server, so the runs time ingestion, not the model's load (reported apart as
``model_load_s``). Then, from the moment the upload starts: ``upload_s`` (the 202 with the job),
``done_s`` (the first look at ``/api/jobs`` that shows it done; looked at every 0.1 s), and
``searchable_s`` (the first ``/api/search`` for the phrase, asked from the moment it is done,
whose results hold the document's page). The stages come from the same looks at the job: when
each of queued, extract, screen, embed and store was first seen, so a stage shorter than a look
may be missed and every stage is known to 0.1 s. The worker names the stages: ``screen`` also
covers language detection and chunking (they run before ``embed`` is announced), ``embed`` the
chunk vectors with their token signs and the sentence windows' vectors, ``store`` the one
transaction that writes the document.

For `make bench` (``bench_upload_latency``); alone (writes docs/evals/upload-latency.json):
``PYTHONPATH=src python benchmarks/upload_latency.py [--runs 3] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from truthbase.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
PDF = ROOT.parent / "shared" / "corpus" / "seed" / "nist-csf-2.0.pdf"
#: A phrase of page 10 of nist-csf-2.0.pdf (the page that explains Functions and Categories).
PAGE = 10
PHRASE = "Each Function is named after a verb that summarizes its contents"
#: Seconds between two looks at the job, and the longest a run may take.
LOOK_S = 0.1
TIMEOUT_S = 900.0


def _serve(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """``truthbase serve`` over a fresh index in ``folder``; its process and base URL."""
    SQLiteStore(folder / "index.sqlite").close()  # serve wants an index: an empty one
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "TRUTHBASE_DB": str(folder / "index.sqlite"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "truthbase.cli", "serve", "--host", "127.0.0.1", "--port", "0"],
        env=env,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    said = []
    for line in proc.stdout:
        if "serving" in line:
            base = line.split(" at ", 1)[1].strip()
            break
        said.append(line)
    else:
        raise RuntimeError(f"the server did not start (exit {proc.wait()}): {''.join(said)}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the line comes just before uvicorn listens
        try:
            if httpx.get(base + "healthz", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("the server does not answer")


def _found(results: list[dict[str, Any]], doc_id: str, page: int) -> int | None:
    """The rank of the document's page among the search results, or None."""
    for r in results:
        if r["doc_id"] == doc_id and r["page"] == page:
            return int(r["rank"])
    return None


def one_run(pdf: Path, page: int, phrase: str) -> dict[str, Any]:
    """One upload into a fresh index (see the module's docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        started_server = time.perf_counter()
        proc, base = _serve(Path(tmp))
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                server_start_s = time.perf_counter() - started_server
                t = time.perf_counter()
                client.get("/api/search", params={"q": "warm up the embedder"}).raise_for_status()
                model_load_s = time.perf_counter() - t
                data = pdf.read_bytes()

                t0 = time.perf_counter()
                response = client.post(
                    "/api/documents", files={"file": (pdf.name, data, "application/pdf")}
                )
                response.raise_for_status()
                upload_s = time.perf_counter() - t0
                (job,) = response.json()["jobs"]
                seen: dict[str, float] = {}  # stage (or state) -> seconds when first seen
                while True:
                    now = time.perf_counter() - t0
                    if now > TIMEOUT_S:
                        raise RuntimeError(f"the job is not done after {TIMEOUT_S:.0f} s: {job}")
                    jobs = client.get("/api/jobs").json()["jobs"]
                    job = next(j for j in jobs if j["id"] == job["id"])
                    label = job["stage"] if job["state"] == "running" else job["state"]
                    seen.setdefault(str(label or "running"), now)
                    if job["state"] in ("done", "failed"):
                        break
                    time.sleep(LOOK_S)
                if job["state"] != "done":
                    raise RuntimeError(f"the job failed: {job['reason']}: {job['message']}")
                done_s = seen["done"]
                doc_id = str(job["doc_id"])
                searches, rank = 0, None
                while rank is None:
                    found = client.get("/api/search", params={"q": phrase, "k": 8}).json()
                    searches += 1
                    rank = _found(found["results"], doc_id, page)
                    if rank is None:
                        if time.perf_counter() - t0 > TIMEOUT_S:
                            raise RuntimeError(f"page {page} is not found by {phrase!r}")
                        time.sleep(LOOK_S)
                searchable_s = time.perf_counter() - t0
                (row,) = [d for d in client.get("/api/library").json() if d["id"] == doc_id]
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    order = [s for s in ("queued", "extract", "screen", "embed", "store", "done") if s in seen]
    stages = {a: round(seen[b] - seen[a], 2) for a, b in itertools.pairwise(order)}
    return {
        "upload_s": round(upload_s, 3),
        "done_s": round(done_s, 2),
        "searchable_s": round(searchable_s, 2),
        "searches_until_found": searches,
        "rank": rank,
        "first_seen_s": {k: round(v, 2) for k, v in seen.items()},
        "stage_s": stages,
        "pages": row["pages"],
        "chunks": row["chunks"],
        "server_start_s": round(server_start_s, 2),
        "model_load_s": round(model_load_s, 2),
        "load_average_1m_after": round(os.getloadavg()[0], 2),
    }


def bench_upload_latency(
    pdf: Path = PDF, runs: int = 3, page: int = PAGE, phrase: str = PHRASE
) -> dict[str, Any] | None:
    """``runs`` uploads of ``pdf``, each into a fresh index; None without the file."""
    if not pdf.is_file():
        return None
    results = [one_run(pdf, page, phrase) for _ in range(runs)]
    return {
        "file": pdf.name,
        "bytes": pdf.stat().st_size,
        "page": page,
        "phrase": phrase,
        "runs": results,
        "median_done_s": round(statistics.median(r["done_s"] for r in results), 2),
        "median_searchable_s": round(statistics.median(r["searchable_s"] for r in results), 2),
        "cpu_count": os.cpu_count(),
        "note": (
            "stage_s: seconds from a stage's first sighting to the next one's, looked at every "
            f"{LOOK_S} s; a stage shorter than that may not be seen and is then counted in the "
            "one before it (store, one transaction, usually is)"
        ),
    }


def print_upload_latency(report: dict[str, Any] | None) -> None:
    if report is None:
        print("\nupload latency: skipped (the seed PDF is missing)")
        return
    print(
        f"\nupload to searchable, {report['file']} ({report['runs'][0]['pages']} pages), "
        f"{len(report['runs'])} fresh indexes: job done median {report['median_done_s']:.1f} s, "
        f"page {report['page']} found by search median {report['median_searchable_s']:.1f} s"
    )
    for r in report["runs"]:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stage_s"].items())
        print(
            f"  done {r['done_s']:.1f} s, searchable {r['searchable_s']:.1f} s ({stages}; "
            f"load average {r['load_average_1m_after']})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pdf", type=Path, default=PDF)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--page", type=int, default=PAGE, help="1-based page of the phrase")
    parser.add_argument("--phrase", default=PHRASE)
    parser.add_argument("--json", type=Path, default=ROOT / "docs/evals/upload-latency.json")
    args = parser.parse_args()
    report = bench_upload_latency(args.pdf, args.runs, args.page, args.phrase)
    if report is None:
        print(f"{args.pdf} is missing", file=sys.stderr)
        return 2
    print_upload_latency(report)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written: {args.json}")
    return 0


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    sys.exit(main())
