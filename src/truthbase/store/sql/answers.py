"""The answer log and the segment index, written once for both backends: the ``answers`` and
``segments`` tables and the stored table of contents."""

from __future__ import annotations

from typing import Any

from ...model import TocEntry
from ...records import MAX_ROW_ID, StoredAnswer, StoredSegments
from ..codec import answer_row, segment_rows, stored_answer, stored_segments, toc_from_json
from .dialect import Dialect

__all__ = ["AnswerRows", "SegmentRows"]


class AnswerRows:
    """:class:`~truthbase.store.base.AnswerLog` over :attr:`_sql`."""

    _sql: Dialect

    def add_answer(self, question: str, answer: dict[str, Any], asked_by: str | None = None) -> int:
        """Keep an answer as it was shown (``asked_by``: its user's id); returns its id."""
        with self._sql.write() as conn:
            row = conn.execute(
                "INSERT INTO answers(question, answer, created_at, asked_by) "
                "VALUES (?, ?, ?, ?) RETURNING id",
                (*answer_row(question, answer), asked_by),
            ).fetchone()
        return int(row[0])

    def answer(self, answer_id: int) -> StoredAnswer | None:
        """The stored answer ``answer_id``, or None (for any id no row can have, too: SQLite
        raised OverflowError past 2**63 - 1, which every door answered as a crash)."""
        if not 0 < answer_id <= MAX_ROW_ID:
            return None
        with self._sql.read() as conn:
            row = conn.execute(
                "SELECT id, question, answer, created_at, asked_by FROM answers WHERE id = ?",
                (answer_id,),
            ).fetchone()
        return stored_answer(row) if row else None

    def answers(self) -> list[StoredAnswer]:
        """Every stored answer, oldest first."""
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT id, question, answer, created_at, asked_by FROM answers ORDER BY id"
            ).fetchall()
        return [stored_answer(r) for r in rows]


class SegmentRows:
    """:class:`~truthbase.store.base.SegmentIndex` over :attr:`_sql`. Summary vectors are
    float32 bytes on both backends: the tools compare a question with one document's few
    dozen summaries in numpy."""

    _sql: Dialect

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        """The stored table of contents (EPUB navigation, PDF outline); [] when there is
        none."""
        with self._sql.read() as conn:
            row = conn.execute("SELECT toc FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return toc_from_json(row[0]) if row else []

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        with self._sql.read() as conn:
            rows = conn.execute(
                "SELECT idx, title, parts, summary, written_by, builder, embedder, vector "
                "FROM segments WHERE doc_id = ? AND summarizer = ? ORDER BY idx",
                (doc_id, summarizer),
            ).fetchall()
        return stored_segments(doc_id, rows)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        """Replace the document's segment index for ``summarizer``, in one transaction."""
        rows = segment_rows(doc_id, summarizer, stored)
        with self._sql.write() as conn:
            conn.execute(
                "DELETE FROM segments WHERE doc_id = ? AND summarizer = ?", (doc_id, summarizer)
            )
            if rows:
                conn.executemany(
                    "INSERT INTO segments(doc_id, summarizer, idx, title, parts, summary, "
                    "written_by, builder, embedder, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
