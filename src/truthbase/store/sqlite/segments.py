"""The segment index in SQLite: the ``segments`` table (schema 5) and the stored TOC."""

from __future__ import annotations

from ...model import TocEntry
from ...records import StoredSegments
from ..codec import segment_rows, stored_segments, toc_from_json
from .connection import Database

__all__ = ["document_toc", "put_segments", "segments"]


def document_toc(db: Database, doc_id: str) -> list[TocEntry]:
    """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
    with db.lock:
        row = db.conn.execute("SELECT toc FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return toc_from_json(row[0]) if row else []


def segments(db: Database, doc_id: str, summarizer: str) -> StoredSegments | None:
    with db.lock:
        rows = db.conn.execute(
            "SELECT idx, title, parts, summary, written_by, builder, embedder, vector "
            "FROM segments WHERE doc_id = ? AND summarizer = ? ORDER BY idx",
            (doc_id, summarizer),
        ).fetchall()
    return stored_segments(doc_id, rows)


def put_segments(db: Database, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
    """Replace the document's segment index for ``summarizer``, in one transaction."""
    rows = segment_rows(doc_id, summarizer, stored)
    with db.transaction() as conn:
        conn.execute(
            "DELETE FROM segments WHERE doc_id = ? AND summarizer = ?", (doc_id, summarizer)
        )
        conn.executemany(
            "INSERT INTO segments(doc_id, summarizer, idx, title, parts, summary, "
            "written_by, builder, embedder, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
