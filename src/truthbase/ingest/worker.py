"""Ingest workers: claim a job, ingest its file, record how it ended; repeat.

The same loop runs in the server (threads, :func:`work`) and in ``truthbase worker`` processes
on any machine that reaches the database and the data folder. A job's whole document is one
store transaction (``add_document``), written last: a worker killed at any point before it
leaves nothing of the document, and after it the document is whole. A killed worker's job keeps
its lease until ``lease_s`` passes; the next free worker then claims it again (the attempts
counter goes up), and a job whose workers died ``max_attempts`` times fails as ``worker_lost``.

While a job runs, a heartbeat thread renews its lease every third of ``lease_s``; progress
updates (stage, pages done) renew it too. A worker that finds its lease taken (it stalled past
the lease and another worker claimed the job) stops without writing: the other one finishes.

One document per content: an ``ingest`` job whose bytes are in the index already writes nothing
(:func:`_take_existing`); its uploader is added as a holder of the document, so a private
document of someone else is theirs too, and nothing in the job says anyone had it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..config import Settings, data_folder
from ..embed import Embedder
from ..errors import TruthBaseError
from ..extract import ExtractionError
from ..extract.sniff import HEAD_BYTES, probe, sniff_kind
from ..jobs import Job
from ..model import DocumentInfo, DocumentKind, Visibility
from ..store import DocumentAdmin, Documents, Jobs, StoreError
from ..telemetry import span
from .events import PagesDone
from .options import IngestOptions
from .pipeline import write_document
from .preparation import prepare

__all__ = [
    "IngestTarget",
    "WorkerOptions",
    "WorkerStore",
    "resolve_job_file",
    "run_job",
    "work",
    "worker_name",
]

logger = logging.getLogger(__name__)

Clock = Callable[[], float]


class IngestTarget(Documents, DocumentAdmin, Protocol):
    """What a job's ingest reads and writes: the documents, and their holders (one document
    per content)."""


class WorkerStore(IngestTarget, Jobs, Protocol):
    """What a worker reads and writes: the job queue, and the documents its jobs ingest."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerOptions:
    """What a worker needs besides its store and embedder: ``ingest`` is every job's
    options (each job's owner and visibility replace the ones in it)."""

    data_dir: Path
    ingest: IngestOptions
    lease_s: float = 60.0
    poll_s: float = 1.0

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerOptions:
        return cls(
            data_dir=data_folder(settings),
            ingest=IngestOptions.from_settings(settings),
            lease_s=settings.library.lease_s,
            poll_s=settings.library.poll_s,
        )


def worker_name(prefix: str = "worker") -> str:
    """A worker id that says where it runs: ``prefix@host:pid:thread``."""
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


def resolve_job_file(data_dir: Path, job: Job) -> Path:
    """Where a job's bytes are: an upload's path under the data folder (it must stay inside
    it), or a re-ingested document's stored absolute path."""
    path = Path(job.file)
    if path.is_absolute():
        return path
    root = data_dir.resolve()
    resolved = (root / path).resolve()
    if root not in resolved.parents:
        raise ExtractionError("unsupported", f"job {job.id}: its file is outside the data folder")
    return resolved


class _Lease:
    """The job's heartbeat: renews the lease from a thread; ``lost`` once another worker took
    the job over."""

    def __init__(self, store: Jobs, job: Job, worker: str, lease_s: float, clock: Clock):
        self.store, self.job, self.worker, self.lease_s, self.clock = (
            store,
            job,
            worker,
            lease_s,
            clock,
        )
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"lease-{job.id}")

    def __enter__(self) -> _Lease:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            self.update()

    def update(
        self, stage: str | None = None, pages_done: int | None = None, total: int | None = None
    ) -> None:
        if self.lost:
            return
        try:
            kept = self.store.update_job(
                self.job.id,
                self.worker,
                self.clock(),
                self.lease_s,
                stage=stage,
                pages_done=pages_done,
                pages_total=total,
            )
        except StoreError as exc:  # a database hiccup: the next beat tries again
            logger.warning("job %s: heartbeat failed: %s", self.job.id, exc)
            return
        if not kept:
            self.lost = True


class _LeaseLost(TruthBaseError):
    """Another worker holds the job now: stop without writing."""


def _take_existing(store: IngestTarget, job: Job) -> str | None:
    """The id of the document the job's bytes already are, its uploader added as a holder;
    None when the index does not have them."""
    if job.kind != "ingest":
        return None
    info = store.document(job.sha256)
    if info is None:
        return None
    if job.owner is not None and info.visibility == "private" and info.owner != job.owner:
        store.add_holder(job.sha256, job.owner)  # someone else's private copy: theirs too
    return job.sha256


def run_job(
    store: WorkerStore,
    embedder: Embedder,
    job: Job,
    worker: str,
    options: WorkerOptions,
    clock: Clock = time.time,
) -> None:
    """Ingest one claimed job and record its end (done or failed with a reason)."""
    with _Lease(store, job, worker, options.lease_s, clock) as lease:

        def progress(event: PagesDone) -> None:
            lease.update(event.stage, event.done, event.total)
            if lease.lost:
                raise _LeaseLost

        try:
            with span("ingest", job=job.id, file=job.filename):
                doc_id = _ingest(store, embedder, job, options, progress)
        except _LeaseLost:
            logger.warning("job %s: lease lost to another worker; stopping", job.id)
            return
        except ExtractionError as exc:
            message = _as_sent(str(exc), job)
            store.finish_job(job.id, worker, clock(), reason=exc.reason, message=message)
            return
        except StoreError as exc:
            store.finish_job(job.id, worker, clock(), reason="store", message=str(exc))
            return
        except Exception as exc:  # a bug: the job fails with it, the worker goes on
            logger.exception("job %s failed unexpectedly", job.id)
            message = f"unexpected {type(exc).__name__}: {exc}"
            store.finish_job(job.id, worker, clock(), reason="error", message=message)
            return
        if not lease.lost:
            store.finish_job(job.id, worker, clock(), doc_id=doc_id)


def _as_sent(message: str, job: Job) -> str:
    """``message`` naming the file as its uploader did: extraction names the stored file, and
    an upload is stored under its hash ("<64 hex digits>.pdf is encrypted")."""
    stored = Path(job.file).name
    return message.replace(stored, job.filename) if stored and stored != job.filename else message


def _job_file(job: Job, options: WorkerOptions) -> tuple[Path, DocumentKind]:
    """The job's file and its kind, by its content."""
    path = resolve_job_file(options.data_dir, job)
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        message = f"{job.filename}: the stored file is gone ({exc})"
        raise ExtractionError("unsupported", message) from exc
    kind = sniff_kind(head)
    if kind is None:
        raise ExtractionError(
            "unsupported", f"{job.filename} is neither a PDF nor an EPUB (by its content)"
        )
    return path, kind


def _ingest(
    store: IngestTarget,
    embedder: Embedder,
    job: Job,
    options: WorkerOptions,
    progress: Callable[[PagesDone], None],
) -> str:
    existing = _take_existing(store, job)
    if existing is not None:
        return existing
    path, kind = _job_file(job, options)
    progress(PagesDone(path=path, stage="extract", done=0, total=probe(path, kind)))
    current = store.document(job.sha256) if job.kind == "reingest" else None
    owner, visibility = _access(job, current)
    indexed = prepare(
        path,
        replace(options.ingest, owner=owner, visibility=visibility).for_index(
            store.index_embedder()
        ),
        embedder,
        doc_id=job.sha256,
        title=current.title if current is not None else None,  # a re-ingest keeps its name
        name=job.filename,  # the uploader's name for the file, stored under its hash
        progress=progress,
    )
    try:
        write_document(store, indexed, replace=current is not None)
    except Exception:
        # Another worker wrote the same bytes meanwhile (two uploads of one file): one
        # document, and this job's uploader holds it too. Anything else is raised as it was.
        taken = _take_existing(store, job)
        if taken is None:
            raise
        return taken
    return indexed.document.sha256


def _access(job: Job, current: DocumentInfo | None) -> tuple[str | None, Visibility]:
    """The owner and visibility the document is written with: a re-ingest keeps the current
    ones; an upload is its uploader's, private unless it asked to be shared (the local user's
    uploads, without an owner, are shared)."""
    if current is not None:
        return current.owner, current.visibility
    if job.owner is None:
        return None, "shared"
    return job.owner, "shared" if job.visibility == "shared" else "private"


def work(
    store: WorkerStore,
    embedder: Callable[[], Embedder],
    options: WorkerOptions,
    *,
    worker: str | None = None,
    stop: threading.Event | None = None,
    wake: threading.Event | None = None,
    max_jobs: int | None = None,
    exit_when_idle: bool = False,
    clock: Clock = time.time,
) -> int:
    """Claim and run jobs until ``stop`` is set (or ``max_jobs`` ran, or, with
    ``exit_when_idle``, none is left); returns the jobs run. An idle worker looks again after
    ``poll_s``, or at once when ``wake`` is set (the server sets it on each upload).
    ``embedder`` gives the embedder (loaded lazily by the caller: only once there is a job)."""
    worker = worker or worker_name()
    stop = stop or threading.Event()
    ran = 0
    while not stop.is_set() and (max_jobs is None or ran < max_jobs):
        try:
            job = store.claim_job(worker, clock(), options.lease_s)
        except StoreError as exc:
            logger.warning("%s: cannot claim a job: %s", worker, exc)
            job = None
        if job is None:
            if exit_when_idle:
                break
            if wake is not None:
                wake.wait(options.poll_s)
                wake.clear()
            else:
                stop.wait(options.poll_s)
            continue
        run_job(store, embedder(), job, worker, options, clock)
        ran += 1
    return ran
