"""Ingest jobs on both backends: claims, leases, retries, limits; and a real `truthbase worker`
killed with SIGKILL mid-job on a real PostgreSQL (tests/helpers/pg_server.py): nothing of its
document is written, and the job is retried by the next worker and ingested exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.canaries import text_pdf
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions
from truthbase.ingest.worker import WorkerOptions, work
from truthbase.jobs import JobDraft, LimitExceeded, UploadLimits

REPO = Path(__file__).resolve().parents[2]


def _draft(sha: str = "a" * 64, size: int = 10, owner: str | None = "ann", **kw: Any) -> JobDraft:
    return JobDraft(
        owner=owner,
        filename="f.pdf",
        file=f"uploads/{sha[:2]}/{sha}.pdf",
        sha256=sha,
        size=size,
        **kw,
    )


def test_claim_lease_retry_and_limits(backend: Any) -> None:
    store = backend.open()
    try:
        first = store.add_job(_draft(max_attempts=2), 1000.0, UploadLimits())
        second = store.add_job(_draft("b" * 64), 1001.0, UploadLimits())
        claimed = store.claim_job("w1", 1002.0, 10.0)
        assert claimed.id == first.id and claimed.attempts == 1 and claimed.worker == "w1"
        other = store.claim_job("w2", 1002.0, 10.0)
        assert other.id == second.id  # the first is w1's: never handed out twice
        assert store.claim_job("w3", 1003.0, 10.0) is None
        assert store.update_job(
            first.id, "w1", 1004.0, 10.0, stage="embed", pages_done=3, pages_total=9
        )
        assert not store.update_job(first.id, "w2", 1004.0, 10.0)  # not w2's job
        # w1 dies: past its lease the job is claimed again, and w1's late writes are refused
        again = store.claim_job("w3", 1015.0, 10.0)
        assert again.id == first.id and again.attempts == 2 and again.worker == "w3"
        assert not store.finish_job(first.id, "w1", 1016.0, doc_id="a" * 64)
        # w3 dies too: out of attempts, the job fails as worker_lost
        assert store.claim_job("w4", 1030.0, 10.0).id == second.id  # w2's lease ran out too
        lost = store.job(first.id)
        assert lost.state == "failed" and lost.reason == "worker_lost", lost
        assert store.finish_job(second.id, "w4", 1031.0, reason="corrupt", message="bad")
        assert store.job(second.id).state == "failed"
        assert [j.id for j in store.jobs("ann", everyone=False)] == [second.id, first.id]
        assert store.jobs("bob", everyone=False) == []

        limits = UploadLimits(files_per_day=2, bytes_per_user=25)
        day = 10 * 86_400.0  # a day of its own: the jobs above were another day's
        store.add_job(_draft("c" * 64, size=20), day + 1, limits)
        with pytest.raises(LimitExceeded) as refused:
            store.add_job(_draft("d" * 64, size=20), day + 2, limits)
        assert refused.value.limit == "bytes_stored"
        store.add_job(_draft("c" * 64, size=20), day + 3, limits)  # same bytes: no more room needed
        with pytest.raises(LimitExceeded) as refused:
            store.add_job(_draft("e" * 64, size=1), day + 4, limits)
        assert refused.value.limit == "files_per_day"
        store.add_job(_draft("e" * 64, size=1, owner="bob"), day + 4, limits)  # per owner
        store.add_job(_draft("e" * 64, size=1), day + 86_400, limits)  # the next UTC day
    finally:
        store.close()


def _queue_file(store: Any, data_dir: Path, data: bytes, name: str, **kw: Any) -> Any:
    import hashlib

    sha = hashlib.sha256(data).hexdigest()
    relative = f"uploads/{sha[:2]}/{sha}.pdf"
    (data_dir / relative).parent.mkdir(parents=True, exist_ok=True)
    (data_dir / relative).write_bytes(data)
    return store.add_job(
        JobDraft(owner=None, filename=name, file=relative, sha256=sha, size=len(data), **kw),
        time.time(),
        UploadLimits(),
    )


def _long_pdf(seed: int, pages: int) -> bytes:
    words = [
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
    paragraphs = [
        " ".join(
            f"{words[(seed + p + i) % len(words)]}{(seed * 31 + p * 7 + i) % 997}"
            for i in range(60)
        )
        + "."
        for p in range(pages * 4)
    ]
    return text_pdf(paragraphs, title=f"Long report {seed}")


@pytest.mark.timeout(600)
def test_sigkill_mid_job_leaves_nothing_and_the_job_is_retried(
    pg_url: str, tmp_path: Path, embedder: Embedder
) -> None:
    from truthbase.store.postgres import PostgresStore

    data_dir = tmp_path / "data"
    store = PostgresStore(pg_url)
    try:
        job = _queue_file(store, data_dir, _long_pdf(1, 12), "long.pdf", max_attempts=3)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO / "src"),
            "TRUTHBASE_DATABASE_URL": pg_url,
            "TRUTHBASE_LIBRARY__DATA_DIR": str(data_dir),
            "TRUTHBASE_LIBRARY__LEASE_S": "3",
        }
        log = tmp_path / "worker.log"
        with log.open("wb") as out:
            worker = subprocess.Popen(
                [sys.executable, "-m", "truthbase.cli", "worker", "--name", "doomed"],
                env=env,
                cwd=tmp_path,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                current = store.job(job.id)
                if current.stage == "embed":  # extracted, embedding: mid-job
                    break
                assert worker.poll() is None, log.read_text()
                time.sleep(0.1)
            else:
                raise AssertionError(f"the worker never got to embedding: {store.job(job.id)}")
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        finally:
            if worker.poll() is None:
                worker.kill()
        killed = store.job(job.id)
        assert killed.state == "running" and killed.worker == "doomed", killed
        assert store.counts() == {"documents": 0, "units": 0, "chunks": 0, "token_chunks": 0}

        time.sleep(3.5)  # the lease runs out
        options = WorkerOptions(data_dir=data_dir, ingest=IngestOptions(), lease_s=3, poll_s=0.2)
        ran = work(store, lambda: embedder, options, worker="rescuer", exit_when_idle=True)
        assert ran == 1
        done = store.job(job.id)
        assert done.state == "done" and done.attempts == 2 and done.worker == "rescuer", done
        assert [d.id for d in store.list_documents()] == [job.sha256]
        assert store.counts()["units"] == done.pages_total > 0

        # Killed on every attempt: the job fails with the reason, nothing written.
        lost = _queue_file(store, data_dir, _long_pdf(2, 2), "lost.pdf", max_attempts=1)
        assert store.claim_job("ghost", 0.0, 1.0).id == lost.id  # claimed, then never heard of
        assert work(store, lambda: embedder, options, worker="late", exit_when_idle=True) == 0
        failed = store.job(lost.id)
        assert failed.state == "failed" and failed.reason == "worker_lost", failed
        assert len(store.list_documents()) == 1
    finally:
        store.close()
