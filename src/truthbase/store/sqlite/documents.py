"""Documents, units and chunks in SQLite: the write of one document and the reads."""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import InvalidInput
from ...model import Chunk, DocumentInfo, Unit, Visibility
from ...records import IndexedDocument, IndexEmbedder
from ..base import check_same_embedder
from ..codec import (
    UNIT_COLUMNS,
    chunk_terms,
    chunk_title_terms,
    chunks_in_order,
    context_terms,
    document_info,
    document_row,
    rects_json,
    title_terms,
    unit_from_row,
    unit_rows,
    vector_blob,
)
from . import library
from .connection import Database, index_embedder

__all__ = [
    "add_document",
    "chunks",
    "counts",
    "document",
    "get_index_embedder",
    "has_document",
    "languages",
    "list_documents",
    "set_document_access",
    "unit",
]

_DOC_COLUMNS = (
    "d.id, d.title, d.path, d.kind, d.unit_count, "
    "(SELECT count(*) FROM chunks c WHERE c.doc_id = d.id), d.ingested_at, d.extractor_version, "
    "d.owner, d.visibility, "
    "(SELECT group_concat(h.holder, char(31)) FROM document_holders h WHERE h.doc_id = d.id), "
    "(SELECT s.flagged FROM document_screens s WHERE s.doc_id = d.id), "
    "d.language"
)


def has_document(db: Database, doc_id: str) -> bool:
    with db.lock:
        row = db.conn.execute("SELECT 1 FROM documents WHERE id=?", (doc_id,)).fetchone()
    return row is not None


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
            holders = conn.execute(
                "SELECT holder, added_at FROM document_holders WHERE doc_id = ?",
                (document.sha256,),
            ).fetchall()
            library.delete_rows(conn, document.sha256)
        current = index_embedder(conn)
        if current is None:
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?), "
                "('embedding_dim', ?)",
                (embedder.model_id, str(embedder.dim)),
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
        chunk_ids: list[int] = []
        for chunk, vector in zip(indexed.chunks, indexed.vectors, strict=True):
            terms = chunk_terms(document, chunk)
            cursor = conn.execute(
                'INSERT INTO chunks(doc_id, unit, start, "end", text, rects, vector, terms, kind, '
                "context, context_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    document.sha256,
                    chunk.unit,
                    chunk.start,
                    chunk.end,
                    chunk.text,
                    rects_json(chunk.rects),
                    vector_blob(vector),
                    terms,
                    chunk.kind,
                    chunk.context,
                    context_terms(document, chunk),
                ),
            )
            assert cursor.lastrowid is not None
            chunk_ids.append(cursor.lastrowid)
            conn.execute(
                "INSERT INTO chunks_fts(rowid, title, text) VALUES (?, ?, ?)",
                (cursor.lastrowid, chunk_title_terms(document, chunk), terms),
            )
        if indexed.windows and indexed.window_vectors is not None:
            conn.executemany(
                'INSERT INTO windows(chunk_id, start, "end", vector) VALUES (?, ?, ?, ?)',
                [
                    (chunk_ids[window.chunk], window.start, window.end, vector_blob(vector))
                    for window, vector in zip(indexed.windows, indexed.window_vectors, strict=True)
                ],
            )
        if indexed.token_signs is not None:
            conn.executemany(
                "INSERT INTO chunk_tokens(chunk_id, signs) VALUES (?, ?)",
                [(i, bytes(b)) for i, b in zip(chunk_ids, indexed.token_signs, strict=True)],
            )
        if indexed.screen is not None:
            library.write_screen(conn, document.sha256, indexed.screen)
        conn.executemany(
            "INSERT INTO document_holders(doc_id, holder, added_at) VALUES (?, ?, ?)",
            [(document.sha256, holder, added) for holder, added in holders],
        )
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")


def set_document_access(
    db: Database, doc_id: str, owner: str | None, visibility: Visibility
) -> bool:
    """A document's owner and visibility; False when there is no such document."""
    if visibility == "private" and owner is None:
        raise InvalidInput("a private document needs an owner")
    with db.transaction() as conn:
        changed = conn.execute(
            "UPDATE documents SET owner = ?, visibility = ? WHERE id = ?",
            (owner, visibility, doc_id),
        ).rowcount
    return changed > 0


def get_index_embedder(db: Database) -> IndexEmbedder | None:
    with db.lock:
        return index_embedder(db.conn)


def list_documents(db: Database) -> list[DocumentInfo]:
    with db.lock:
        rows = db.conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM documents d ORDER BY d.title, d.id"
        ).fetchall()
    return [document_info(row) for row in rows]


def document(db: Database, doc_id: str) -> DocumentInfo | None:
    with db.lock:
        row = db.conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM documents d WHERE d.id = ?", (doc_id,)
        ).fetchone()
    return document_info(row) if row else None


def languages(db: Database) -> list[str | None]:
    """The languages of the index's units and document titles (None: unknown), sorted."""
    with db.lock:
        rows = db.conn.execute(
            "SELECT language FROM units UNION SELECT language FROM documents"
        ).fetchall()
    return sorted({row[0] for row in rows}, key=lambda code: code or "")


def unit(db: Database, doc_id: str, index: int) -> Unit | None:
    with db.lock:
        row = db.conn.execute(
            f"SELECT {UNIT_COLUMNS} FROM units WHERE doc_id = ? AND idx = ?",
            (doc_id, index),
        ).fetchone()
    return unit_from_row(row) if row is not None else None


def chunks(db: Database, chunk_ids: Sequence[int]) -> list[Chunk]:
    """The chunks with these ids, in the order asked (missing ids are left out)."""
    if not chunk_ids:
        return []
    placeholders = ",".join("?" * len(chunk_ids))
    with db.lock:
        rows = db.conn.execute(
            f'SELECT c.id, c.doc_id, c.unit, c.start, c."end", c.text, c.rects, u.href, '
            f"c.kind, c.context FROM chunks c "
            f"JOIN units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
            f"WHERE c.id IN ({placeholders})",
            list(chunk_ids),
        ).fetchall()
    return chunks_in_order(rows, chunk_ids)


def chunk_texts(db: Database, chunk_ids: Sequence[int]) -> dict[int, str]:
    """The text of each chunk with one of these ids (missing ids are left out)."""
    if not chunk_ids:
        return {}
    placeholders = ",".join("?" * len(chunk_ids))
    with db.lock:
        rows = db.conn.execute(
            f"SELECT id, text FROM chunks WHERE id IN ({placeholders})", list(chunk_ids)
        ).fetchall()
    return {int(chunk_id): str(text) for chunk_id, text in rows}


def counts(db: Database) -> dict[str, int]:
    with db.lock:
        result = {
            table: int(db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("documents", "units", "chunks")
        }
        result["token_chunks"] = int(
            db.conn.execute("SELECT count(*) FROM chunk_tokens").fetchone()[0]
        )
    return result
