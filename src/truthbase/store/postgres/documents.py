"""The writes of documents in PostgreSQL, each of which touches the full text: adding one (its
units, chunks, vectors, token signs, verdict), deleting one, renaming one. The reads and
everything else both backends share are :mod:`truthbase.store.sql`'s.

A document write is one transaction under an advisory lock (:data:`.schema.WRITE_LOCK`), so
concurrent writers serialize as SQLite's ``BEGIN IMMEDIATE`` makes them. The full text is a
generated column of the chunks: a delete cascades from the document row to units, chunks (whose
statement trigger takes their lexemes out of the full-text statistics), windows, token signs,
segments, verdict and holders; a rename updates the chunks' title column (migration 7's update
trigger keeps the statistics exact).
"""

from __future__ import annotations

from typing import Any

from ...model import ExtractedDocument
from ...records import ChunkBatch, IndexedDocument, IndexEmbedder
from ...text.fulltext import term_string
from ..base import StoreError, check_same_embedder
from ..codec import (
    UNIT_COLUMNS,
    chunk_terms,
    chunk_title_terms,
    document_row,
    join_terms,
    rects_json,
    unit_rows,
    vector_literal,
)
from ..sql import holders_of, index_embedder, restore_holders, write_screen
from .pool import Connection, Pool, QmarkConnection
from .schema import WRITE_LOCK, Hnsw, ensure_hnsw, type_vectors

__all__ = ["add_document", "delete_document", "delete_rows", "rename_document"]

PgCursor = Any  # psycopg.Cursor[tuple[Any, ...]], as pool.Connection is psycopg's Connection


def add_document(
    pool: Pool, hnsw: Hnsw, indexed: IndexedDocument, *, replace: bool = False
) -> None:
    """The document, its units, chunks, vectors of chunks and windows, the chunks' token
    signs and the screen verdict, in one transaction. The first document types the vector
    columns (and builds the HNSW indexes when ``hnsw.enabled``). ``replace``: the document's
    current rows go in the same transaction (a re-ingest; its holders stay)."""
    document = indexed.document
    with pool.connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        shared = QmarkConnection(conn)
        holders: list[tuple[str, str]] = []
        if replace:
            holders = holders_of(shared, document.sha256)
            delete_rows(conn, document.sha256)
        _claim_embedder(conn, shared, hnsw, indexed.embedder)
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
            for batch in indexed.chunk_batches():  # embedded as they are written (ingest)
                chunk_ids = _insert_chunks(cur, document, batch) if batch.chunks else []
                _insert_chunk_extras(cur, batch, chunk_ids)
        if indexed.screen is not None:
            write_screen(shared, document.sha256, indexed.screen)
        restore_holders(shared, document.sha256, holders)


def _claim_embedder(
    conn: Connection, shared: QmarkConnection, hnsw: Hnsw, embedder: IndexEmbedder
) -> None:
    """Vectors of one index come from one embedder: the first document's names it and types
    the vector columns (building the HNSW indexes when enabled); a later one must match."""
    current = index_embedder(shared)
    if current is None:
        conn.execute(
            "INSERT INTO truthbase.meta(key, value) VALUES ('embedder', %s), "
            "('embedding_dim', %s), ('token_code', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (embedder.model_id, str(embedder.dim), embedder.token_code),
        )
        type_vectors(conn, embedder.dim)
        if hnsw.enabled:
            ensure_hnsw(conn, hnsw)
    else:
        check_same_embedder(current, embedder)


def _insert_chunks(cur: PgCursor, document: ExtractedDocument, batch: ChunkBatch) -> list[int]:
    """Insert a batch of the document's chunks (there is at least one); their ids, in chunk
    order.

    One statement for all the batch's chunks: the generated full-text columns' SQL functions are set
    up once per statement (~2 ms), not once per chunk, and the statistics trigger runs once.
    Ids come from the identity in insertion order (ORDER BY the chunk's position; the write
    lock keeps other writers out), so sorted ids are the chunks' ids in order."""
    chunk_drafts = batch.chunks
    rows = cur.execute(
        'INSERT INTO truthbase.chunks(doc_id, unit, start, "end", text, title, '
        "rects, vector, terms, title_terms, kind, context, section) "
        'SELECT %s, c.unit, c.start, c."end", c.text, %s, c.rects, '
        "c.vector::vector, c.terms, c.title_terms, c.kind, c.context, c.section "
        "FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::text[], "
        "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
        'WITH ORDINALITY c(unit, start, "end", text, rects, vector, terms, '
        "title_terms, kind, context, section, i) ORDER BY c.i RETURNING id",
        (
            document.sha256,
            document.title,
            [chunk.unit for chunk in chunk_drafts],
            [chunk.start for chunk in chunk_drafts],
            [chunk.end for chunk in chunk_drafts],
            [chunk.text for chunk in chunk_drafts],
            [rects_json(chunk.rects) for chunk in chunk_drafts],
            [vector_literal(vector) for vector in batch.vectors],
            [chunk_terms(document, chunk) for chunk in chunk_drafts],
            [chunk_title_terms(document, chunk) for chunk in chunk_drafts],
            [chunk.kind for chunk in chunk_drafts],
            [chunk.context for chunk in chunk_drafts],
            [chunk.section for chunk in chunk_drafts],
        ),
    ).fetchall()
    chunk_ids = sorted(int(row[0]) for row in rows)
    if len(chunk_ids) != len(chunk_drafts):
        raise StoreError("the chunks were not all written")
    return chunk_ids


def _insert_chunk_extras(cur: PgCursor, batch: ChunkBatch, chunk_ids: list[int]) -> None:
    """What hangs off a batch's chunks by their ids: the sentence windows' vectors and the
    chunks' token signs."""
    if batch.windows and batch.window_vectors is not None:
        cur.executemany(
            'INSERT INTO truthbase.windows(chunk_id, start, "end", vector) '
            "VALUES (%s, %s, %s, %s::vector)",
            [
                (chunk_ids[w.chunk], w.start, w.end, vector_literal(vector))
                for w, vector in zip(batch.windows, batch.window_vectors, strict=True)
            ],
        )
    if batch.token_signs is not None and chunk_ids:
        cur.execute(
            "INSERT INTO truthbase.chunk_tokens(chunk_id, signs) "
            "SELECT * FROM unnest(%s::bigint[], %s::bytea[])",
            (chunk_ids, [bytes(blob) for blob in batch.token_signs]),
        )


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
        # A table chunk's column names and a chunk's section path follow the title
        # (store.codec.chunk_title_terms).
        extras = conn.execute(
            "SELECT c.id, c.context, c.section, coalesce(u.language, %s) FROM truthbase.chunks c "
            "LEFT JOIN truthbase.units u ON u.doc_id = c.doc_id AND u.idx = c.unit "
            "WHERE c.doc_id = %s AND (c.context <> '' OR c.section <> '')",
            (row[0], doc_id),
        ).fetchall()
        for chunk_id, context, section, language in extras:
            conn.execute(
                "UPDATE truthbase.chunks SET title_terms = %s WHERE id = %s",
                (
                    join_terms(
                        terms, term_string(context, language), term_string(section, language)
                    ),
                    chunk_id,
                ),
            )
    return True
