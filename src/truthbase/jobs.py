"""Ingest jobs: their records, their states, and the upload limits a job must pass.

A job is one file to ingest (an upload, or a stored document to ingest again). Its life:
``queued`` -> ``running`` (a worker holds a lease on it, renewed by heartbeats; ``stage`` and
``pages_done``/``pages_total`` say how far it is) -> ``done`` (``doc_id`` set) or ``failed``
(``reason`` one of extraction's reasons, or ``worker_lost`` when its workers died
``max_attempts`` times, or ``unsupported``; ``message`` says it in words). A running job whose
lease ran out is claimed again by the next free worker, up to ``max_attempts`` claims.

Both backends keep jobs in a ``jobs`` table (:class:`truthbase.store.base.Jobs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .errors import TruthBaseError
from .people import REMOVED_USER

__all__ = [
    "JOB_COLUMNS",
    "JOB_KINDS",
    "JOB_STATES",
    "Job",
    "JobDraft",
    "JobKind",
    "JobState",
    "LimitExceeded",
    "UploadLimits",
    "day_start",
    "job_from_row",
]

JobState = Literal["queued", "running", "done", "failed"]
JobKind = Literal["ingest", "reingest"]
JOB_STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed")
JOB_KINDS: tuple[JobKind, ...] = ("ingest", "reingest")


@dataclass(frozen=True, slots=True, kw_only=True)
class JobDraft:
    """A job to queue. ``file`` is where the bytes are: a path relative to the index's data
    folder for uploads (``uploads/ab/abcd....pdf``), the document's stored path for
    ``reingest``; never a path from a request. ``filename`` is the name the uploader gave, for
    display only. ``state`` ``failed`` queues a job that is already decided (a file that is
    neither PDF nor EPUB), so that the uploader sees it in the list with its reason."""

    kind: JobKind = "ingest"
    owner: str | None
    filename: str
    file: str
    sha256: str
    size: int
    visibility: str | None = None
    state: JobState = "queued"
    reason: str | None = None
    message: str | None = None
    max_attempts: int = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    id: int
    kind: JobKind
    owner: str | None
    filename: str
    file: str
    sha256: str
    size: int
    visibility: str | None
    state: JobState
    stage: str | None
    pages_done: int
    pages_total: int
    doc_id: str | None
    reason: str | None
    message: str | None
    attempts: int
    max_attempts: int
    worker: str | None
    lease_until: float | None
    created_at: float
    updated_at: float
    owner_name: str | None = None  # the owner's name, resolved from their id (None: no such user)

    @property
    def shown_owner(self) -> str | None:
        """The owner as people read it: their name, :data:`~truthbase.people.REMOVED_USER`
        for a user removed since, None for the operator's (or the local user's) job."""
        if self.owner is None:
            return None
        return self.owner_name if self.owner_name is not None else REMOVED_USER

    def to_json(self) -> dict[str, Any]:
        """What the API, the page and ``jobs list --json`` show (no stored path); ``owner`` is
        the owner's name (:attr:`shown_owner`), never their id."""
        return {
            "id": self.id,
            "kind": self.kind,
            "owner": self.shown_owner,
            "filename": self.filename,
            "sha256": self.sha256,
            "size": self.size,
            "state": self.state,
            "stage": self.stage,
            "pages_done": self.pages_done,
            "pages_total": self.pages_total,
            "doc_id": self.doc_id,
            "reason": self.reason,
            "message": self.message,
            "attempts": self.attempts,
            "max_attempts": self.max_attempts,
            "worker": self.worker,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


#: Columns of the jobs table in :class:`Job`'s field order, the owner's name last (both backends
#: select these, unaliased ``FROM jobs``, and return them from writes).
JOB_COLUMNS = (
    "id, kind, owner, filename, file, sha256, size, visibility, state, stage, pages_done, "
    "pages_total, doc_id, reason, message, attempts, max_attempts, worker, lease_until, "
    "created_at, updated_at, (SELECT u.name FROM users u WHERE u.id = jobs.owner)"
)


def job_from_row(row: Any) -> Job:
    """A job from a row of :data:`JOB_COLUMNS`."""
    return Job(
        id=int(row[0]),
        kind=row[1],
        owner=row[2],
        filename=str(row[3]),
        file=str(row[4]),
        sha256=str(row[5]),
        size=int(row[6]),
        visibility=row[7],
        state=row[8],
        stage=row[9],
        pages_done=int(row[10]),
        pages_total=int(row[11]),
        doc_id=row[12],
        reason=row[13],
        message=row[14],
        attempts=int(row[15]),
        max_attempts=int(row[16]),
        worker=row[17],
        lease_until=None if row[18] is None else float(row[18]),
        created_at=float(row[19]),
        updated_at=float(row[20]),
        owner_name=None if row[21] is None else str(row[21]),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadLimits:
    """What one owner's new job must fit in (None: no limit); checked by ``add_job`` in the
    same transaction that queues it, so concurrent uploads cannot both slip under a limit."""

    files_per_day: int | None = None
    bytes_per_user: int | None = None

    @property
    def unlimited(self) -> bool:
        return self.files_per_day is None and self.bytes_per_user is None


class LimitExceeded(TruthBaseError):
    """An upload over a limit: ``limit`` names which (``file_size``, ``files_per_day``,
    ``bytes_stored``); the server answers 413 for sizes, 429 for the daily count."""

    def __init__(self, limit: Literal["file_size", "files_per_day", "bytes_stored"], message: str):
        super().__init__(message)
        self.limit = limit


def day_start(now: float) -> float:
    """The start of the UTC day of Unix time ``now`` (files-per-day windows)."""
    return float(int(now) // 86_400 * 86_400)
