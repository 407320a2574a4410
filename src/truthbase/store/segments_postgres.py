"""The segment index in PostgreSQL: ``truthbase.segments`` (migration ``segments_pg.sql``).

A mixin of :class:`truthbase.store.postgres.PostgresStore` (it borrows the store's pooled
connections), implementing :class:`truthbase.store.base.SegmentStore` with the same rows as
SQLite (:mod:`.segments_sqlite`). Summary vectors are float32 bytes, not pgvector columns: the
tools compare a question with one document's few dozen summaries in numpy.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from ..model import TocEntry
from ..records import StoredSegments
from .segments_sqlite import segment_rows, stored_from_rows, toc_from_json


class PostgresSegments:
    """The :class:`~truthbase.store.base.SegmentStore` methods of the PostgreSQL store."""

    _pool: Any  # postgres._Pool: connection() yields a pooled psycopg connection

    def _connection(self) -> AbstractContextManager[Any]:
        return self._pool.connection()  # type: ignore[no-any-return]

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT toc FROM truthbase.documents WHERE id = %s", (doc_id,)
            ).fetchone()
        return toc_from_json(row[0]) if row else []

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT idx, title, parts, summary, written_by, builder, embedder, vector "
                "FROM truthbase.segments WHERE doc_id = %s AND summarizer = %s ORDER BY idx",
                (doc_id, summarizer),
            ).fetchall()
        return stored_from_rows(doc_id, rows)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        rows = segment_rows(doc_id, summarizer, stored)
        with self._connection() as conn, conn.transaction():
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
