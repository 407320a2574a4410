"""Ingest jobs in PostgreSQL: the ``jobs`` table (migration 7). Workers on any machine claim
jobs with ``FOR UPDATE SKIP LOCKED``: each claim locks the one row it takes and passes over rows
another worker's claim holds, so workers never wait on each other and never take the same job.
Limits are checked and the job queued in one transaction under an advisory lock on the owner,
so two uploads of one user cannot both slip under a limit."""

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
from .pool import Connection, Pool

__all__ = [
    "add_job",
    "claim_job",
    "finish_job",
    "job",
    "jobs",
    "update_job",
]

_LIMITS_LOCK = 0x7472757468_03  # advisory lock space of upload limits (with the owner's hash)

_HELD_BYTES = (
    "SELECT coalesce(sum(size), 0) FROM (SELECT DISTINCT sha256, size FROM truthbase.jobs "
    "WHERE owner IS NOT DISTINCT FROM %s AND (state IN ('queued', 'running') OR "
    "(state = 'done' AND doc_id IN (SELECT id FROM truthbase.documents)))) held"
)


def check_limits(conn: Connection, draft: JobDraft, now: float, limits: UploadLimits) -> None:
    """LimitExceeded when ``draft`` does not fit ``limits`` (in the caller's transaction)."""
    if limits.files_per_day is not None:
        (today,) = conn.execute(
            "SELECT count(*) FROM truthbase.jobs WHERE owner IS NOT DISTINCT FROM %s "
            "AND kind = 'ingest' AND created_at >= %s",
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
            "SELECT 1 FROM truthbase.jobs WHERE owner IS NOT DISTINCT FROM %s AND sha256 = %s "
            "AND state != 'failed'",
            (draft.owner, draft.sha256),
        ).fetchone()
        if already is None and int(held) + draft.size > limits.bytes_per_user:
            raise LimitExceeded(
                "bytes_stored",
                f"storage limit reached: {int(held)} of {limits.bytes_per_user} bytes held; "
                f"this file needs {draft.size} more; delete documents to make room",
            )


def add_job(pool: Pool, draft: JobDraft, now: float, limits: UploadLimits) -> Job:
    """Queue ``draft`` if it fits ``limits``, atomically (LimitExceeded otherwise)."""
    with pool.connection() as conn, conn.transaction():
        if draft.kind == "ingest" and not limits.unlimited:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(coalesce(%s, '')))",
                (_LIMITS_LOCK & 0x7FFFFFFF, draft.owner),
            )
            check_limits(conn, draft, now, limits)
        row = conn.execute(
            "INSERT INTO truthbase.jobs(kind, owner, filename, file, sha256, size, visibility, "
            "state, reason, message, max_attempts, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            f"RETURNING {JOB_COLUMNS}",
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


def claim_job(pool: Pool, worker: str, now: float, lease_s: float) -> Job | None:
    """The oldest queued job, or a running one whose lease ran out, now ``worker``'s (rows that
    another claim holds are skipped, not waited for); a lost job that has had its
    ``max_attempts`` claims is failed instead (reason ``worker_lost``)."""
    with pool.connection() as conn, conn.transaction():
        conn.execute(
            "UPDATE truthbase.jobs SET state = 'failed', reason = 'worker_lost', message = "
            "'its worker stopped (killed or lost) on each of ' || attempts || ' attempts', "
            "worker = NULL, lease_until = NULL, updated_at = %s "
            "WHERE id IN (SELECT id FROM truthbase.jobs WHERE state = 'running' "
            "AND lease_until < %s AND attempts >= max_attempts FOR UPDATE SKIP LOCKED)",
            (now, now),
        )
        row = conn.execute(
            "UPDATE truthbase.jobs j SET state = 'running', worker = %s, lease_until = %s, "
            "attempts = j.attempts + 1, stage = 'claimed', pages_done = 0, updated_at = %s "
            "FROM (SELECT id FROM truthbase.jobs WHERE state = 'queued' OR (state = 'running' "
            "AND lease_until < %s AND attempts < max_attempts) ORDER BY id "
            "FOR UPDATE SKIP LOCKED LIMIT 1) picked WHERE j.id = picked.id "
            f"RETURNING {', '.join('j.' + c.strip() for c in JOB_COLUMNS.split(','))}",
            (worker, now + lease_s, now, now),
        ).fetchone()
    return job_from_row(row) if row else None


def update_job(
    pool: Pool,
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
    ``worker``'s."""
    with pool.connection() as conn:
        cursor = conn.execute(
            "UPDATE truthbase.jobs SET lease_until = %s, updated_at = %s, "
            "stage = coalesce(%s, stage), pages_done = coalesce(%s, pages_done), "
            "pages_total = coalesce(%s, pages_total) "
            "WHERE id = %s AND worker = %s AND state = 'running'",
            (now + lease_s, now, stage, pages_done, pages_total, job_id, worker),
        )
        return bool(cursor.rowcount == 1)


def finish_job(
    pool: Pool,
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
    with pool.connection() as conn:
        cursor = conn.execute(
            "UPDATE truthbase.jobs SET state = %s, doc_id = coalesce(%s, doc_id), reason = %s, "
            "message = %s, stage = NULL, lease_until = NULL, updated_at = %s "
            "WHERE id = %s AND worker = %s AND state = 'running'",
            (state, doc_id, reason, message, now, job_id, worker),
        )
        return bool(cursor.rowcount == 1)


def job(pool: Pool, job_id: int) -> Job | None:
    with pool.connection() as conn:
        row = conn.execute(
            f"SELECT {JOB_COLUMNS} FROM truthbase.jobs WHERE id = %s", (job_id,)
        ).fetchone()
    return job_from_row(row) if row else None


def jobs(
    pool: Pool, owner: str | None = None, *, everyone: bool = True, limit: int = 200
) -> list[Job]:
    """The newest jobs first: everyone's, or (``everyone`` False) ``owner``'s only."""
    with pool.connection() as conn:
        if everyone:
            rows = conn.execute(
                f"SELECT {JOB_COLUMNS} FROM truthbase.jobs ORDER BY id DESC LIMIT %s", (limit,)
            ).fetchall()
        else:
            rows = conn.execute(
                f"SELECT {JOB_COLUMNS} FROM truthbase.jobs WHERE owner IS NOT DISTINCT FROM %s "
                "ORDER BY id DESC LIMIT %s",
                (owner, limit),
            ).fetchall()
    return [job_from_row(row) for row in rows]
