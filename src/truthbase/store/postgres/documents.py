"""Documents, units and chunks in PostgreSQL: the write of one document and the reads.

A document is written in one transaction under an advisory lock (:data:`.schema.WRITE_LOCK`),
so concurrent writers serialize as SQLite's ``BEGIN IMMEDIATE`` makes them; the full text is a
generated column of the chunks.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import InvalidInput
from ...model import Chunk, DocumentInfo, Unit, Visibility
from ...records import IndexedDocument, IndexEmbedder
from ..base import StoreError, check_same_embedder
from ..codec import (
    UNIT_COLUMNS,
    chunk_terms,
    chunk_title_terms,
    chunks_in_order,
    document_info,
    document_row,
    rects_json,
    unit_from_row,
    unit_rows,
    vector_literal,
)
from . import library
from .pool import Pool
from .schema import WRITE_LOCK, Hnsw, ensure_hnsw, index_embedder, type_vectors

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
    "(SELECT count(*) FROM truthbase.chunks c WHERE c.doc_id = d.id), d.ingested_at, "
    "d.extractor_version, d.owner, d.visibility, "
    "(SELECT string_agg(h.holder, chr(31)) FROM truthbase.document_holders h "
    "WHERE h.doc_id = d.id), "
    "(SELECT s.flagged FROM truthbase.document_screens s WHERE s.doc_id = d.id), "
    "d.language"
)
#: counts()'s names and their tables
_COUNTED = (
    ("documents", "documents"),
    ("units", "units"),
    ("chunks", "chunks"),
    ("token_chunks", "chunk_tokens"),
)


def has_document(pool: Pool, doc_id: str) -> bool:
    with pool.connection() as conn:
        row = conn.execute("SELECT 1 FROM truthbase.documents WHERE id = %s", (doc_id,))
        return row.fetchone() is not None


def add_document(
    pool: Pool, hnsw: Hnsw, indexed: IndexedDocument, *, replace: bool = False
) -> None:
    """The document, its units, chunks, vectors of chunks and windows, the chunks' token
    signs and the screen verdict, in one transaction. The first document types the vector
    columns (and builds the HNSW indexes when ``hnsw.enabled``). ``replace``: the document's
    current rows go in the same transaction (a re-ingest; its holders stay)."""
    document, embedder, chunk_drafts = indexed.document, indexed.embedder, indexed.chunks
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        holders: list[tuple[str, str]] = []
        if replace:
            holders = conn.execute(
                "SELECT holder, added_at FROM truthbase.document_holders WHERE doc_id = %s",
                (document.sha256,),
            ).fetchall()
            library.delete_rows(conn, document.sha256)
        current = index_embedder(conn)
        if current is None:
            conn.execute(
                "INSERT INTO truthbase.meta(key, value) VALUES ('embedder', %s), "
                "('embedding_dim', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (embedder.model_id, str(embedder.dim)),
            )
            type_vectors(conn, embedder.dim)
            if hnsw.enabled:
                ensure_hnsw(conn, hnsw)
        else:
            check_same_embedder(current, embedder)
        conn.execute(
            "INSERT INTO truthbase.documents(id, title, path, kind, unit_count, ingested_at, "
            "extractor_version, report, toc, metadata, owner, visibility, language) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            document_row(document, indexed.owner, indexed.visibility),
        )
        with conn.cursor() as cur:
            rows = unit_rows(document)
            if rows:
                cur.executemany(
                    f"INSERT INTO truthbase.units(doc_id, {UNIT_COLUMNS}) "
                    f"VALUES ({', '.join(['%s'] * len(rows[0]))})",
                    rows,
                )
            chunk_ids: list[int] = []
            if chunk_drafts:
                # One statement for all the chunks: the generated full-text columns' SQL
                # functions are set up once per statement (~2 ms), not once per chunk, and
                # the statistics trigger runs once. Ids come from the identity in insertion
                # order (ORDER BY the chunk's position; the write lock keeps other writers
                # out), so sorted ids are the chunks' ids in order.
                rows = cur.execute(
                    'INSERT INTO truthbase.chunks(doc_id, unit, start, "end", text, title, '
                    "rects, vector, terms, title_terms, kind, context) "
                    'SELECT %s, c.unit, c.start, c."end", c.text, %s, c.rects, '
                    "c.vector::vector, c.terms, c.title_terms, c.kind, c.context "
                    "FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::text[], "
                    "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
                    'WITH ORDINALITY c(unit, start, "end", text, rects, vector, terms, '
                    "title_terms, kind, context, i) ORDER BY c.i RETURNING id",
                    (
                        document.sha256,
                        document.title,
                        [chunk.unit for chunk in chunk_drafts],
                        [chunk.start for chunk in chunk_drafts],
                        [chunk.end for chunk in chunk_drafts],
                        [chunk.text for chunk in chunk_drafts],
                        [rects_json(chunk.rects) for chunk in chunk_drafts],
                        [vector_literal(vector) for vector in indexed.vectors],
                        [chunk_terms(document, chunk) for chunk in chunk_drafts],
                        [chunk_title_terms(document, chunk) for chunk in chunk_drafts],
                        [chunk.kind for chunk in chunk_drafts],
                        [chunk.context for chunk in chunk_drafts],
                    ),
                ).fetchall()
                chunk_ids = sorted(int(row[0]) for row in rows)
                if len(chunk_ids) != len(chunk_drafts):
                    raise StoreError("the chunks were not all written")
            if indexed.windows and indexed.window_vectors is not None:
                cur.executemany(
                    'INSERT INTO truthbase.windows(chunk_id, start, "end", vector) '
                    "VALUES (%s, %s, %s, %s::vector)",
                    [
                        (chunk_ids[w.chunk], w.start, w.end, vector_literal(vector))
                        for w, vector in zip(indexed.windows, indexed.window_vectors, strict=True)
                    ],
                )
            if indexed.token_signs is not None and chunk_ids:
                cur.execute(
                    "INSERT INTO truthbase.chunk_tokens(chunk_id, signs) "
                    "SELECT * FROM unnest(%s::bigint[], %s::bytea[])",
                    (chunk_ids, [bytes(blob) for blob in indexed.token_signs]),
                )
        if indexed.screen is not None:
            library.write_screen(conn, document.sha256, indexed.screen)
        for holder, added_at in holders:
            conn.execute(
                "INSERT INTO truthbase.document_holders(doc_id, holder, added_at) "
                "VALUES (%s, %s, %s)",
                (document.sha256, holder, added_at),
            )


def set_document_access(pool: Pool, doc_id: str, owner: str | None, visibility: Visibility) -> bool:
    """A document's owner and visibility; False when there is no such document."""
    if visibility == "private" and owner is None:
        raise InvalidInput("a private document needs an owner")
    with pool.connection() as conn, conn.transaction():
        cursor = conn.execute(
            "UPDATE truthbase.documents SET owner = %s, visibility = %s WHERE id = %s",
            (owner, visibility, doc_id),
        )
        return bool(cursor.rowcount > 0)


def get_index_embedder(pool: Pool) -> IndexEmbedder | None:
    with pool.connection() as conn:
        return index_embedder(conn)


def list_documents(pool: Pool) -> list[DocumentInfo]:
    with pool.connection() as conn:
        rows = conn.execute(
            # COLLATE "C": byte order, as SQLite sorts, whatever the database's locale
            f"SELECT {_DOC_COLUMNS} FROM truthbase.documents d "
            f'ORDER BY d.title COLLATE "C", d.id COLLATE "C"'
        ).fetchall()
    return [document_info(row) for row in rows]


def document(pool: Pool, doc_id: str) -> DocumentInfo | None:
    with pool.connection() as conn:
        row = conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM truthbase.documents d WHERE d.id = %s", (doc_id,)
        ).fetchone()
    return document_info(row) if row else None


def languages(pool: Pool) -> list[str | None]:
    """The languages of the index's units and document titles (None: unknown), sorted."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT language FROM truthbase.units UNION SELECT language FROM truthbase.documents"
        ).fetchall()
    return sorted({row[0] for row in rows}, key=lambda code: code or "")


def unit(pool: Pool, doc_id: str, index: int) -> Unit | None:
    with pool.connection() as conn:
        row = conn.execute(
            f"SELECT {UNIT_COLUMNS} FROM truthbase.units WHERE doc_id = %s AND idx = %s",
            (doc_id, index),
        ).fetchone()
    return unit_from_row(row) if row is not None else None


def chunks(pool: Pool, chunk_ids: Sequence[int]) -> list[Chunk]:
    """The chunks with these ids, in the order asked (missing ids are left out)."""
    if not chunk_ids:
        return []
    with pool.connection() as conn:
        rows = conn.execute(
            'SELECT c.id, c.doc_id, c.unit, c.start, c."end", c.text, c.rects, u.href, '
            "c.kind, c.context FROM truthbase.chunks c JOIN truthbase.units u "
            "ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.id = ANY(%s)",
            ([int(i) for i in chunk_ids],),
        ).fetchall()
    return chunks_in_order(rows, chunk_ids)


def chunk_texts(pool: Pool, chunk_ids: Sequence[int]) -> dict[int, str]:
    """The text of each chunk with one of these ids (missing ids are left out)."""
    if not chunk_ids:
        return {}
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT id, text FROM truthbase.chunks WHERE id = ANY(%s)",
            ([int(i) for i in chunk_ids],),
        ).fetchall()
    return {int(chunk_id): str(text) for chunk_id, text in rows}


def counts(pool: Pool) -> dict[str, int]:
    with pool.connection() as conn:
        return {
            name: int(conn.execute(f"SELECT count(*) FROM truthbase.{table}").fetchone()[0])
            for name, table in _COUNTED
        }
