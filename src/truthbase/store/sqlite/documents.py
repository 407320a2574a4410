"""Documents, units and chunks in SQLite: the write of one document and the reads."""

from __future__ import annotations

from collections.abc import Sequence

from ...model import Chunk, DocumentInfo, Unit
from ...records import IndexedDocument, IndexEmbedder
from ..base import check_same_embedder
from ..codec import (
    chunks_in_order,
    document_info,
    document_row,
    fts_title,
    rects_json,
    unit_from_row,
    unit_rows,
    vector_blob,
)
from .connection import Database, index_embedder

__all__ = [
    "add_document",
    "chunks",
    "counts",
    "document",
    "get_index_embedder",
    "has_document",
    "list_documents",
    "unit",
]

_DOC_COLUMNS = (
    "d.id, d.title, d.path, d.kind, d.unit_count, "
    "(SELECT count(*) FROM chunks c WHERE c.doc_id = d.id), d.ingested_at, d.extractor_version"
)


def has_document(db: Database, doc_id: str) -> bool:
    with db.lock:
        row = db.conn.execute("SELECT 1 FROM documents WHERE id=?", (doc_id,)).fetchone()
    return row is not None


def add_document(db: Database, indexed: IndexedDocument) -> None:
    """The document, its units, chunks, full text, vectors (of chunks and of their sentence
    windows) and token signs, in one transaction; bumps the index generation."""
    document, embedder = indexed.document, indexed.embedder
    with db.transaction() as conn:
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
            "extractor_version, report, toc, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            document_row(document),
        )
        conn.executemany(
            "INSERT INTO units(doc_id, idx, label, href, text, boxes, geometry, html, dom_map) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            unit_rows(document),
        )
        chunk_ids: list[int] = []
        for chunk, vector in zip(indexed.chunks, indexed.vectors, strict=True):
            cursor = conn.execute(
                'INSERT INTO chunks(doc_id, unit, start, "end", text, rects, vector, kind, '
                "context) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    document.sha256,
                    chunk.unit,
                    chunk.start,
                    chunk.end,
                    chunk.text,
                    rects_json(chunk.rects),
                    vector_blob(vector),
                    chunk.kind,
                    chunk.context,
                ),
            )
            assert cursor.lastrowid is not None
            chunk_ids.append(cursor.lastrowid)
            conn.execute(
                "INSERT INTO chunks_fts(rowid, title, text) VALUES (?, ?, ?)",
                (cursor.lastrowid, fts_title(document.title, chunk.context), chunk.text),
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
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")


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


def unit(db: Database, doc_id: str, index: int) -> Unit | None:
    with db.lock:
        row = db.conn.execute(
            "SELECT idx, label, href, text, boxes, geometry, html, dom_map FROM units "
            "WHERE doc_id = ? AND idx = ?",
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
