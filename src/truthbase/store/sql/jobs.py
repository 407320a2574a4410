"""Ingest jobs, written once for both backends: the ``jobs`` table, the upload limits checked
in the transaction that queues a job, and claims that give each job to one worker at a time
(SQLite's writer lock serializes claims across processes; PostgreSQL's claims pass over each
other's rows with ``FOR UPDATE SKIP LOCKED``, so workers on many machines never wait on each
other nor take the same job)."""

from __future__ import annotations

from ...jobs import (
    JOB_COLUMNS,
    Job,
    JobDraft,
    LimitExceeded,
    UploadLimits,
    day_start,
    job_from_row,
)
from .dialect import Connection, Dialect

__all__ = ["JobRows", "check_limits"]

#: The bytes an owner holds: each distinct file of their jobs that is queued, running, or done
#: with its document still there (a deleted document frees its bytes).
_HELD_BYTES = (
    "SELECT coalesce(sum(size), 0) FROM (SELECT DISTINCT sha256, size FROM jobs "
    "WHERE owner IS NOT DISTINCT FROM ? AND (state IN ('queued', 'running') OR "
    "(state = 'done' AND doc_id IN (SELECT id FROM documents)))) held"
)


def check_limits(conn: Connection, draft: JobDraft, now: float, limits: UploadLimits) -> None:
    """LimitExceeded when ``draft`` does not fit ``limits`` (in the caller's transaction)."""
    if limits.files_per_day is not None:
        (today,) = conn.execute(
            "SELECT count(*) FROM jobs WHERE owner IS NOT DISTINCT FROM ? "
            "AND kind = 'ingest' AND created_at >= ?",
            (draft.owner, day_start(now)),
        ).fetchone()
        if int(today) >= limits.files_per_day:
            raise LimitExceeded(
                "files_per_day",
                f"upload limit reached: {limits.files_per_day} files per day; try again tomorrow "
                "(UTC)",
            )
    if limits.bytes_per_user is not None:
        (held,) = conn.execute(_HELD_BYTES, (draft.owner,)).fetchone()
        already = conn.execute(
            "SELECT 1 FROM jobs WHERE owner IS NOT DISTINCT FROM ? AND sha256 = ? "
            "AND state != 'failed'",
            (draft.owner, draft.sha256),
        ).fetchone()
        if already is None and int(held) + draft.size > limits.bytes_per_user:
            raise LimitExceeded(
                "bytes_stored",
                f"storage limit reached: {int(held)} of {limits.bytes_per_user} bytes held; "
                f"this file needs {draft.size} more; delete documents to make room",
            )


class JobRows:
    """:class:`~truthbase.store.base.Jobs` over :attr:`_sql`."""

    _sql: Dialect

    def add_job(self, draft: JobDraft, now: float, limits: UploadLimits) -> Job:
        """Queue ``draft`` if it fits ``limits``, atomically (LimitExceeded otherwise): the
        limits are checked and the job queued in one transaction, serialized with the owner's
        other uploads, so two uploads cannot both slip under a limit."""
        with self._sql.write() as conn:
            if draft.kind == "ingest" and not limits.unlimited:
                self._sql.lock_owner(conn, draft.owner)
                check_limits(conn, draft, now, limits)
            row = conn.execute(
                "INSERT INTO jobs(kind, owner, filename, file, sha256, size, visibility, "
                "state, reason, message, max_attempts, created_at, updated_at) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {JOB_COLUMNS}",
                (
                    draft.kind,
                    draft.owner,
                    draft.filename,
                    draft.file,
                    draft.sha256,
                    draft.size,
                    draft.visibility,
                    draft.state,
                    draft.reason,
                    draft.message,
                    draft.max_attempts,
                    now,
                    now,
                ),
            ).fetchone()
        return job_from_row(row)

    def claim_job(self, worker: str, now: float, lease_s: float) -> Job | None:
        """The oldest queued job, or a running one whose lease ran out, now ``worker``'s; a
        lost job that has had its ``max_attempts`` claims is failed instead (reason
        ``worker_lost``)."""
        skip = self._sql.skip_locked
        with self._sql.write() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'failed', reason = 'worker_lost', message = "
                "'its worker stopped (killed or lost) on each of ' || attempts || ' attempts', "
                "worker = NULL, lease_until = NULL, updated_at = ? "
                "WHERE id IN (SELECT id FROM jobs WHERE state = 'running' AND lease_until < ? "
                f"AND attempts >= max_attempts{skip})",
                (now, now),
            )
            picked = conn.execute(
                "SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' "
                f"AND lease_until < ? AND attempts < max_attempts) ORDER BY id LIMIT 1{skip}",
                (now,),
            ).fetchone()
            if picked is None:
                return None
            row = conn.execute(
                "UPDATE jobs SET state = 'running', worker = ?, lease_until = ?, "
                "attempts = attempts + 1, stage = 'claimed', pages_done = 0, updated_at = ? "
                f"WHERE id = ? RETURNING {JOB_COLUMNS}",
                (worker, now + lease_s, now, picked[0]),
            ).fetchone()
        return job_from_row(row)

    def update_job(
        self,
        job_id: int,
        worker: str,
        now: float,
        lease_s: float,
        *,
        stage: str | None = None,
        pages_done: int | None = None,
        pages_total: int | None = None,
    ) -> bool:
        """Progress and a heartbeat (the lease renewed); False when the job is no longer
        ``worker``'s (its lease ran out and another worker claimed it)."""
        with self._sql.write() as conn:
            cursor = conn.execute(
                "UPDATE jobs SET lease_until = ?, updated_at = ?, stage = coalesce(?, stage), "
                "pages_done = coalesce(?, pages_done), pages_total = coalesce(?, pages_total) "
                "WHERE id = ? AND worker = ? AND state = 'running'",
                (now + lease_s, now, stage, pages_done, pages_total, job_id, worker),
            )
            return cursor.rowcount == 1

    def finish_job(
        self,
        job_id: int,
        worker: str,
        now: float,
        *,
        doc_id: str | None = None,
        reason: str | None = None,
        message: str | None = None,
    ) -> bool:
        """``done`` with ``doc_id``, or ``failed`` with ``reason``; False when the job is no
        longer ``worker``'s."""
        state = "failed" if reason is not None else "done"
        with self._sql.write() as conn:
            cursor = conn.execute(
                "UPDATE jobs SET state = ?, doc_id = coalesce(?, doc_id), reason = ?, "
                "message = ?, stage = NULL, lease_until = NULL, updated_at = ? "
                "WHERE id = ? AND worker = ? AND state = 'running'",
                (state, doc_id, reason, message, now, job_id, worker),
            )
            return cursor.rowcount == 1

    def job(self, job_id: int) -> Job | None:
        with self._sql.read() as conn:
            row = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
            found = row.fetchone()
        return job_from_row(found) if found else None

    def jobs(
        self, owner: str | None = None, *, everyone: bool = True, limit: int = 200
    ) -> list[Job]:
        """The newest jobs first: everyone's, or (``everyone`` False) ``owner``'s only."""
        with self._sql.read() as conn:
            if everyone:
                rows = conn.execute(
                    f"SELECT {JOB_COLUMNS} FROM jobs ORDER BY id DESC LIMIT ?", (limit,)
                ).fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {JOB_COLUMNS} FROM jobs WHERE owner IS NOT DISTINCT FROM ? "
                    "ORDER BY id DESC LIMIT ?",
                    (owner, limit),
                ).fetchall()
        return [job_from_row(row) for row in rows]
