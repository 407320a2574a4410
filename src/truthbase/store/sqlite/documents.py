"""The writes of documents in SQLite, each of which touches the full text: adding one (its
units, chunks, FTS5 rows, vectors, token signs, verdict), deleting one, renaming one. The reads
and everything else both backends share are :mod:`truthbase.store.sql`'s.

Deleting a document is one transaction: its full-text rows first (the FTS5 table is an external
content index of the chunks, so its rows are removed with FTS5's ``'delete'`` command while the
chunk text is still there to name them), then the document row, whose foreign keys cascade to
its units, chunks, sentence windows, token signs, segments, screen verdict and holders. Every
write moves the index generation, so every dense search after the commit reloads its vectors.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from ...model import ExtractedDocument
from ...records import ChunkBatch, IndexedDocument
from ...text.fulltext import term_string
from ..base import check_same_embedder
from ..codec import (
    UNIT_COLUMNS,
    chunk_terms,
    chunk_title_terms,
    context_terms,
    document_row,
    rects_json,
    section_terms,
    title_terms,
    unit_rows,
    vector_code,
    vector_code_rows,
)
from ..sql import holders_of, index_embedder, restore_holders, write_screen
from .connection import Database

__all__ = ["add_document", "delete_document", "delete_rows", "rename_document"]


def add_document(db: Database, indexed: IndexedDocument, *, replace: bool = False) -> None:
    """The document, its units, chunks, full text, vectors (of chunks and of their sentence
    windows), token signs and screen verdict, in one transaction; bumps the index generation.
    ``replace``: the document's current rows go in the same transaction (a re-ingest; its
    holders stay)."""
    document, embedder = indexed.document, indexed.embedder
    title = title_terms(document)
    with db.transaction() as conn:
        holders: list[tuple[str, str]] = []
        if replace:
            holders = holders_of(conn, document.sha256)
            delete_rows(conn, document.sha256)
        current = index_embedder(conn)
        if current is None:
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?), "
                "('embedding_dim', ?), ('token_code', ?)",
                (embedder.model_id, str(embedder.dim), embedder.token_code),
            )
        else:
            check_same_embedder(current, embedder)
        conn.execute(
            "INSERT INTO documents(id, title, path, kind, unit_count, ingested_at, "
            "extractor_version, report, toc, metadata, owner, visibility, language, "
            "title_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*document_row(document, indexed.owner, indexed.visibility), title),
        )
        rows = unit_rows(document)
        if rows:
            conn.executemany(
                f"INSERT INTO units(doc_id, {UNIT_COLUMNS}) "
                f"VALUES ({', '.join('?' * len(rows[0]))})",
                rows,
            )
        for batch in indexed.chunk_batches():  # embedded as they are written (ingest)
            _write_chunks(conn, document, batch)
        if indexed.screen is not None:
            write_screen(conn, document.sha256, indexed.screen)
        restore_holders(conn, document.sha256, holders)
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")


def _write_chunks(conn: sqlite3.Connection, document: ExtractedDocument, batch: ChunkBatch) -> None:
    """One batch of the document's chunks with their full text, windows and token signs."""
    chunk_ids: list[int] = []
    for chunk, vector in zip(batch.chunks, batch.vectors, strict=True):
        terms = chunk_terms(document, chunk)
        cursor = conn.execute(
            'INSERT INTO chunks(doc_id, unit, start, "end", rects, vector, terms, kind, '
            "context, context_terms, section, section_terms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                document.sha256,
                chunk.unit,
                chunk.start,
                chunk.end,
                rects_json(chunk.rects),
                vector_code(vector),
                terms,
                chunk.kind,
                chunk.context,
                context_terms(document, chunk),
                chunk.section,
                section_terms(document, chunk),
            ),
        )
        assert cursor.lastrowid is not None
        chunk_ids.append(cursor.lastrowid)
        conn.execute(
            "INSERT INTO chunks_fts(rowid, title, text) VALUES (?, ?, ?)",
            (cursor.lastrowid, chunk_title_terms(document, chunk), terms),
        )
    if batch.windows and batch.window_vectors is not None:
        codes = vector_code_rows(np.asarray(batch.window_vectors, dtype=np.float32))
        conn.executemany(
            'INSERT INTO windows(chunk_id, start, "end", vector) VALUES (?, ?, ?, ?)',
            (
                (chunk_ids[window.chunk], window.start, window.end, code)
                for window, code in zip(batch.windows, codes, strict=True)
            ),
        )
    if batch.token_signs is not None:
        conn.executemany(
            "INSERT INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)",
            ((i, bytes(b)) for i, b in zip(chunk_ids, batch.token_signs, strict=True)),
        )


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
    with. Moves the index generation: the full-text postings (.postings) hold the titles."""
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
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
    return True
