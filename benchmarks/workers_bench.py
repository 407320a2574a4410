"""Ingest workers sharing one PostgreSQL: 20 uploads, one worker against the server's own worker
plus two `truthbase worker` processes.

Run: ``PYTHONPATH=src:. python benchmarks/workers_bench.py [--files 20] [--pages 4]``. Each run
gets a fresh database on a throwaway server (tests/helpers/pg_server.py) and its own data
folder; the files are small text PDFs made by tests/helpers/canaries.py (distinct bytes each).
Checks, per run: every job done, each file one document (ids = the files' sha256, no document
twice), every job claimed once (attempts 1), and which worker ran how many.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from tests.helpers.canaries import text_pdf
from tests.helpers.pg_server import PgServer

REPO = Path(__file__).resolve().parents[1]

WORDS = [
    "valve",
    "pump",
    "flow",
    "station",
    "basin",
    "pressure",
    "filter",
    "gauge",
    "turbine",
    "sluice",
    "culvert",
    "weir",
    "reservoir",
    "intake",
    "outfall",
]


def _pdf(seed: int, pages: int) -> bytes:
    paragraphs = [
        " ".join(
            f"{WORDS[(seed + p + i) % len(WORDS)]}{(seed * 31 + p * 7 + i) % 997}"
            for i in range(60)
        )
        + "."
        for p in range(pages * 4)
    ]
    return text_pdf(paragraphs, title=f"Station report {seed}")


def _env(url: str, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "TRUTHBASE_DATABASE_URL": url,
        "TRUTHBASE_LIBRARY__DATA_DIR": str(data_dir),
        "TRUTHBASE_LIBRARY__POLL_S": "0.2",
    }


def _serve(env: dict[str, str], workers: int, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**env, "TRUTHBASE_LIBRARY__SERVER_WORKERS": str(workers)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "truthbase.cli", "serve", "--port", "0"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "serving" in line:
            base = line.split(" at ", 1)[1].strip()
            break
    else:
        raise RuntimeError("the server did not start")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the line comes before uvicorn listens
        try:
            if httpx.get(base + "healthz", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("the server does not answer")


def run(
    server: PgServer, files: list[bytes], cli_workers: int, server_workers: int
) -> dict[str, Any]:
    url = server.create_database()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = _env(url, folder / "data")
        proc, base = _serve(env, server_workers, folder)
        workers: list[subprocess.Popen[bytes]] = []
        try:
            started = time.perf_counter()
            with httpx.Client(base_url=base, timeout=60) as client:
                for i, data in enumerate(files):
                    r = client.post(
                        "/api/documents",
                        files={"file": (f"report-{i}.pdf", data, "application/pdf")},
                    )
                    r.raise_for_status()
                for n in range(cli_workers):
                    workers.append(
                        subprocess.Popen(
                            [
                                sys.executable,
                                "-m",
                                "truthbase.cli",
                                "worker",
                                "--name",
                                f"cli-{n}",
                                "--exit-when-idle",
                            ],
                            env=env,
                            cwd=folder,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                        )
                    )
                while True:
                    jobs = client.get("/api/jobs").json()["jobs"]
                    if all(j["state"] in ("done", "failed") for j in jobs):
                        break
                    time.sleep(0.2)
                elapsed = time.perf_counter() - started
                library = client.get("/api/library").json()
        finally:
            for w in workers:
                w.wait(timeout=120)
            proc.terminate()
            proc.wait(timeout=60)
    server.drop_database(url)
    shas = {hashlib.sha256(f).hexdigest() for f in files}
    by_worker: dict[str, int] = {}
    for j in jobs:
        name = (j["worker"] or "?").split("@")[0]
        by_worker[name] = by_worker.get(name, 0) + 1
    return {
        "cli_workers": cli_workers,
        "server_workers": server_workers,
        "seconds": round(elapsed, 1),
        "jobs": len(jobs),
        "done": sum(j["state"] == "done" for j in jobs),
        "attempts_max": max(j["attempts"] for j in jobs),
        "documents": len(library),
        "documents_are_the_files": {d["id"] for d in library} == shas,
        "jobs_by_worker": by_worker,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    files = [_pdf(i, args.pages) for i in range(args.files)]
    with PgServer() as server:
        results = [
            run(server, files, cli_workers=0, server_workers=1),
            run(server, files, cli_workers=2, server_workers=1),
        ]
    for r in results:
        print(json.dumps(r))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    from truthbase.blas import limit_blas_threads

    limit_blas_threads()  # a program's edge sets the BLAS threads (see truthbase.blas)
    main()
