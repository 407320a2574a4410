"""Document management in SQLite: delete, rename, holders, and the screen's verdicts.

Deleting a document is one transaction: its full-text rows first (the FTS5 table is an external
content index of the chunks, so its rows are removed with FTS5's ``'delete'`` command while the
chunk text is still there to name them), then the document row, whose foreign keys cascade to
its units, chunks, sentence windows, token signs, segments, screen verdict and holders. The
index generation moves, so every dense search after the commit reloads its vectors without them.
"""

from __future__ import annotations

import json
import sqlite3

from ...fulltext import term_string
from ...records import ScreenResult
from ..codec import now_iso
from .connection import Database

__all__ = [
    "add_holder",
    "delete_document",
    "delete_rows",
    "document_holders",
    "document_screen",
    "flagged_documents",
    "remove_holder",
    "rename_document",
    "write_screen",
]


def _fts_rows(conn: sqlite3.Connection, doc_id: str, op: str | None) -> None:
    """Remove (``op`` 'delete') or add (None) the document's rows of the full-text index, with
    the title and text the index holds for them now."""
    command = "'delete', " if op else ""
    column = "chunks_fts, " if op else ""
    conn.execute(
        f"INSERT INTO chunks_fts({column}rowid, title, text) "
        f"SELECT {command}v.id, v.title, v.text FROM chunks_fts_content v "
        "JOIN chunks c ON c.id = v.id WHERE c.doc_id = ?",
        (doc_id,),
    )


def delete_rows(conn: sqlite3.Connection, doc_id: str) -> str | None:
    """Everything of one document, in the caller's transaction; its stored path, or None when
    there was no such document."""
    row = conn.execute("SELECT path FROM documents WHERE id = ?", (doc_id,)).fetchone()
    if row is None:
        return None
    _fts_rows(conn, doc_id, "delete")
    conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
    return str(row[0])


def delete_document(db: Database, doc_id: str) -> str | None:
    with db.transaction() as conn:
        return delete_rows(conn, doc_id)


def rename_document(db: Database, doc_id: str, title: str) -> bool:
    """A new title, in the listing and in the full-text index's title column (its rows are
    re-indexed in the same transaction); the stored vectors keep the title they were embedded
    with."""
    with db.transaction() as conn:
        if conn.execute("SELECT 1 FROM documents WHERE id = ?", (doc_id,)).fetchone() is None:
            return False
        _fts_rows(conn, doc_id, "delete")
        (language,) = conn.execute(
            "SELECT language FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        conn.execute(
            "UPDATE documents SET title = ?, title_terms = ? WHERE id = ?",
            (title, term_string(title, language), doc_id),
        )
        _fts_rows(conn, doc_id, None)
    return True


def write_screen(conn: sqlite3.Connection, doc_id: str, screen: ScreenResult) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO document_screens(doc_id, version, flagged, result) "
        "VALUES (?, ?, ?, ?)",
        (doc_id, screen.version, int(screen.flagged), json.dumps(screen.to_json())),
    )


def document_screen(db: Database, doc_id: str) -> ScreenResult | None:
    with db.lock:
        row = db.conn.execute(
            "SELECT result FROM document_screens WHERE doc_id = ?", (doc_id,)
        ).fetchone()
    return ScreenResult.from_json(json.loads(row[0])) if row else None


def flagged_documents(db: Database) -> dict[str, ScreenResult]:
    """The verdicts of the documents the screen flagged, by document id."""
    with db.lock:
        rows = db.conn.execute(
            "SELECT doc_id, result FROM document_screens WHERE flagged = 1"
        ).fetchall()
    return {str(r[0]): ScreenResult.from_json(json.loads(r[1])) for r in rows}


def add_holder(db: Database, doc_id: str, holder: str) -> None:
    with db.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO document_holders(doc_id, holder, added_at) "
            "SELECT id, ?, ? FROM documents WHERE id = ?",
            (holder, now_iso(), doc_id),
        )


def remove_holder(db: Database, doc_id: str, holder: str) -> bool:
    with db.transaction() as conn:
        cursor = conn.execute(
            "DELETE FROM document_holders WHERE doc_id = ? AND holder = ?", (doc_id, holder)
        )
        return cursor.rowcount == 1


def document_holders(db: Database, doc_id: str) -> list[str]:
    with db.lock:
        rows = db.conn.execute(
            "SELECT holder FROM document_holders WHERE doc_id = ? ORDER BY added_at, holder",
            (doc_id,),
        ).fetchall()
    return [str(r[0]) for r in rows]
