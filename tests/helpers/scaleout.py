"""Ingest workers on "machines" of their own against one PostgreSQL: what the scale-out test
(tests/integration/test_scaleout.py) and benchmark (benchmarks/scaleout_bench.py) run.

Each worker is a real ``truthbase worker`` process in a network namespace of its own
(:class:`tests.helpers.netns.Host`), pinned to its own core, with one embedder thread: inside,
127.0.0.1 is its own loopback, and the database is reached at the namespace's gateway over a
veth pair, as from another machine. The data folder is shared (one folder, as a network mount
would be). The files are queued straight into the jobs table, as an upload queues them.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.netns import Host
from tests.helpers.pg_server import PgServer
from truthbase.jobs import JobDraft, UploadLimits

REPO = Path(__file__).resolve().parents[2]

__all__ = ["Outcome", "queue", "reaches", "run_workers"]


def queue(store: Any, data_dir: Path, files: Sequence[Path]) -> list[int]:
    """Copy each file into the data folder as an upload is stored, and queue its job."""
    ids = []
    for path in files:
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        relative = f"uploads/{sha[:2]}/{sha}{path.suffix.lower()}"
        (data_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (data_dir / relative).write_bytes(data)
        draft = JobDraft(owner=None, filename=path.name, file=relative, sha256=sha, size=len(data))
        ids.append(store.add_job(draft, time.time(), UploadLimits()).id)
    return ids


def reaches(host: Host, address: str, port: int) -> bool:
    """Whether a program inside ``host`` can open a TCP connection to ``address``:``port``."""
    probe = (
        "import socket, sys\n"
        "try:\n"
        f"    socket.create_connection(({address!r}, {port}), timeout=3).close()\n"
        "except OSError:\n"
        "    sys.exit(1)\n"
    )
    done = subprocess.run(
        host.command([sys.executable, "-c", probe]), capture_output=True, timeout=30, check=False
    )
    return done.returncode == 0


@dataclass
class Outcome:
    """What a run of workers did: wall seconds from their start to the last job's end, the
    jobs as they ended, the worker killed and the job it held (None: none killed), and the
    workers' output (for a failure's message)."""

    seconds: float
    jobs: list[Any]
    killed: str | None = None
    killed_job: int | None = None
    logs: dict[str, str] = field(default_factory=dict)


def run_workers(
    server: PgServer,
    database: str,
    hosts: Sequence[Host],
    data_dir: Path,
    store: Any,
    *,
    kill: bool = False,
    lease_s: float = 60.0,
    timeout_s: float = 1800.0,
    logs: Path,
) -> Outcome:
    """Start worker ``w{i}`` in ``hosts[i]`` (pinned to core ``i`` modulo the cores here), wait
    until no job is queued or running, stop them (SIGTERM) and return the :class:`Outcome`.

    ``kill``: SIGKILL the first worker seen mid-job (embedding) and keep on with the others: its
    job keeps the lease until ``lease_s`` runs out, and then another worker must take it over."""
    cores = os.cpu_count() or 1
    procs: dict[str, subprocess.Popen[bytes]] = {}
    logs.mkdir(parents=True, exist_ok=True)
    killed_job: int | None = None
    killed: str | None = None
    started = time.perf_counter()
    try:
        for i, host in enumerate(hosts):
            name = f"w{i}"
            env = {
                **os.environ,
                "PYTHONPATH": str(REPO / "src"),
                "TRUTHBASE_DATABASE_URL": server.url_for(database, host=host.gateway),
                "TRUTHBASE_LIBRARY__DATA_DIR": str(data_dir),
                "TRUTHBASE_LIBRARY__LEASE_S": str(lease_s),
                "TRUTHBASE_LIBRARY__POLL_S": "0.2",
                "TRUTHBASE_EMBEDDER__THREADS": "1",  # one core each, as on a machine of its own
            }
            with (logs / f"{name}.log").open("wb") as out:
                procs[name] = subprocess.Popen(
                    host.command(
                        [sys.executable, "-m", "truthbase.cli", "worker", "--name", name],
                        cpus=str(i % cores),
                    ),
                    env=env,
                    cwd=data_dir,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
        deadline = time.monotonic() + timeout_s
        while True:
            jobs = store.jobs(limit=10_000)
            if kill and killed is None:
                for job in jobs:
                    if job.state == "running" and job.stage == "embed" and job.worker in procs:
                        killed, killed_job = job.worker, job.id
                        os.kill(procs[killed].pid, signal.SIGKILL)
                        procs[killed].wait(timeout=30)
                        break
            if all(j.state in ("done", "failed") for j in jobs):
                break
            for name, proc in procs.items():
                if proc.poll() is not None and name != killed:
                    text = (logs / f"{name}.log").read_text("utf-8", "replace")
                    raise RuntimeError(f"worker {name} exited early:\n{text[-3000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs not done in {timeout_s} s: {jobs}")
            time.sleep(0.1)
        seconds = time.perf_counter() - started
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    texts = {n: (logs / f"{n}.log").read_text("utf-8", "replace") for n in procs}
    return Outcome(seconds=seconds, jobs=jobs, killed=killed, killed_job=killed_job, logs=texts)
