"""Document management in PostgreSQL: delete, rename, holders, and the screen's verdicts.

A delete is one transaction under the document write lock: the document row goes and its
foreign keys cascade to units, chunks (whose statement trigger takes their lexemes out of the
full-text statistics), windows, token signs, segments, verdict and holders. A rename updates the
chunks' title column, from which the full text is generated (migration 7's update trigger keeps
the statistics exact).
"""

from __future__ import annotations

import json

from ...fulltext import term_string
from ...records import ScreenResult
from ..codec import join_terms, now_iso
from .pool import Connection, Pool
from .schema import WRITE_LOCK

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


def delete_rows(conn: Connection, doc_id: str) -> str | None:
    """Everything of one document, in the caller's transaction (holding the write lock); its
    stored path, or None when there was no such document."""
    row = conn.execute(
        "DELETE FROM truthbase.documents WHERE id = %s RETURNING path", (doc_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def delete_document(pool: Pool, doc_id: str) -> str | None:
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        return delete_rows(conn, doc_id)


def rename_document(pool: Pool, doc_id: str, title: str) -> bool:
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        row = conn.execute(
            "UPDATE truthbase.documents SET title = %s WHERE id = %s RETURNING language",
            (title, doc_id),
        ).fetchone()
        if row is None:
            return False
        terms = term_string(title, row[0])
        conn.execute(
            "UPDATE truthbase.chunks SET title = %s, title_terms = %s WHERE doc_id = %s",
            (title, terms, doc_id),
        )
        # A table chunk's column names follow the title (store.codec.chunk_title_terms).
        tables = conn.execute(
            "SELECT c.id, c.context, coalesce(u.language, %s) FROM truthbase.chunks c "
            "LEFT JOIN truthbase.units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
            "WHERE c.doc_id = %s AND c.context <> ''",
            (row[0], doc_id),
        ).fetchall()
        for chunk_id, context, language in tables:
            conn.execute(
                "UPDATE truthbase.chunks SET title_terms = %s WHERE id = %s",
                (join_terms(terms, term_string(context, language)), chunk_id),
            )
    return True


def write_screen(conn: Connection, doc_id: str, screen: ScreenResult) -> None:
    conn.execute(
        "INSERT INTO truthbase.document_screens(doc_id, version, flagged, result) "
        "VALUES (%s, %s, %s, %s) ON CONFLICT (doc_id) DO UPDATE SET version = excluded.version, "
        "flagged = excluded.flagged, result = excluded.result",
        (doc_id, screen.version, screen.flagged, json.dumps(screen.to_json())),
    )


def document_screen(pool: Pool, doc_id: str) -> ScreenResult | None:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT result FROM truthbase.document_screens WHERE doc_id = %s", (doc_id,)
        ).fetchone()
    return ScreenResult.from_json(json.loads(row[0])) if row else None


def flagged_documents(pool: Pool) -> dict[str, ScreenResult]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT doc_id, result FROM truthbase.document_screens WHERE flagged"
        ).fetchall()
    return {str(r[0]): ScreenResult.from_json(json.loads(r[1])) for r in rows}


def add_holder(pool: Pool, doc_id: str, holder: str) -> None:
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO truthbase.document_holders(doc_id, holder, added_at) "
            "SELECT id, %s, %s FROM truthbase.documents WHERE id = %s ON CONFLICT DO NOTHING",
            (holder, now_iso(), doc_id),
        )


def remove_holder(pool: Pool, doc_id: str, holder: str) -> bool:
    with pool.connection() as conn:
        cursor = conn.execute(
            "DELETE FROM truthbase.document_holders WHERE doc_id = %s AND holder = %s",
            (doc_id, holder),
        )
        return bool(cursor.rowcount == 1)


def document_holders(pool: Pool, doc_id: str) -> list[str]:
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT holder FROM truthbase.document_holders WHERE doc_id = %s "
            'ORDER BY added_at, holder COLLATE "C"',
            (doc_id,),
        ).fetchall()
    return [str(r[0]) for r in rows]
