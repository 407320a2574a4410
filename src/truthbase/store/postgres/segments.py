"""The segment index in PostgreSQL: ``truthbase.segments`` (migration 3), the same rows as
SQLite's. Summary vectors are float32 bytes, not pgvector columns: the tools compare a question
with one document's few dozen summaries in numpy."""

from __future__ import annotations

from ...model import TocEntry
from ...records import StoredSegments
from ..codec import segment_rows, stored_segments, toc_from_json
from .pool import Pool

__all__ = ["document_toc", "put_segments", "segments"]


def document_toc(pool: Pool, doc_id: str) -> list[TocEntry]:
    """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT toc FROM truthbase.documents WHERE id = %s", (doc_id,)
        ).fetchone()
    return toc_from_json(row[0]) if row else []


def segments(pool: Pool, doc_id: str, summarizer: str) -> StoredSegments | None:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT idx, title, parts, summary, written_by, builder, embedder, vector "
            "FROM truthbase.segments WHERE doc_id = %s AND summarizer = %s ORDER BY idx",
            (doc_id, summarizer),
        ).fetchall()
    return stored_segments(doc_id, rows)


def put_segments(pool: Pool, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
    """Replace the document's segment index for ``summarizer``, in one transaction."""
    rows = segment_rows(doc_id, summarizer, stored)
    with pool.connection() as conn, conn.transaction():
        conn.execute(
            "DELETE FROM truthbase.segments WHERE doc_id = %s AND summarizer = %s",
            (doc_id, summarizer),
        )
        if rows:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO truthbase.segments(doc_id, summarizer, idx, title, parts, "
                    "summary, written_by, builder, embedder, vector) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
