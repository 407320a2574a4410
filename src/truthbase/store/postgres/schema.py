"""The PostgreSQL schema: creating it, migrating it, refreshing its functions, and the parts of
it that the first document fixes (the vectors' dimension, the HNSW indexes).

Layout (``schema.sql``, every object in the schema ``truthbase``): documents, units (with the
EPUB reader's html and DOM map), chunks with a generated, weighted ``tsvector`` (the document
title as weight A, the text as D) under a GIN index and a ``vector(dim)`` column, sentence
windows with their own ``vector(dim)``, a ``meta`` table (schema version, embedder) and the
quota counters. ``schema.sql`` is version 1; ``migration_N.sql`` brings version N - 1 to N:
2 adds the full-text statistics (per-lexeme document frequencies, chunk count and total length,
kept by triggers) and the answer log, 3 the segment index, 4 tokenizes and stems the full text
exactly as SQLite's FTS5 (``porter unicode61 remove_diacritics 2``) does, 5 adds the chunks'
packed token signs (``chunk_tokens``), 6 the documents' owner and visibility and the accounts
(users, sessions, API tokens), 7 ingest jobs, screen verdicts and document holders, 8 the
languages and the full text over terms made in Python, 9 the units' text source and OCR record,
10 the chunks' kind (text or table rows) and context (a table's column names), 11 the
users' stable ids (owners, holders and job owners name users by id), 12 sessions, API tokens
and quota counters by user id, 13 the full-text terms made again (identifiers as whole terms),
14 the units' glyph boxes packed (:mod:`truthbase.store.boxes`; 13 and 14 are Python steps, no
SQL file), 15 the saved threads (:mod:`truthbase.app.threads`), 16 the collections of documents
users keep, 17 the chunks' section paths, 18 feedback on answers and the answers' asker,
19 the saved threads' read-only share links (:mod:`truthbase.app.shares`).
``functions.sql`` (the search arms and the quota check, all ``CREATE OR REPLACE``) is
re-applied whenever its sha256 differs from the one recorded in ``meta``. The dimension is
fixed by the first ingest (the columns are typed then, while the tables are empty); an HNSW
index is built only when asked (:attr:`Hnsw.enabled`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg import sql

from ...text.fulltext import term_string
from ...text.language import detect_document
from ..base import StoreError
from ..boxes import repacked
from ..sql import index_embedder
from .pool import Connection, Pool, QmarkConnection

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "WRITE_LOCK",
    "Hnsw",
    "ensure_hnsw",
    "hnsw_ready",
    "maybe_hnsw",
    "migrate",
    "sql_text",
    "type_vectors",
]

SCHEMA_VERSION = 19
# Each step from version N - 1 to N: an SQL file (schema.sql is version 1); 2, 3, 5, 6, 7, 9
# and 10 only add, 4 re-creates the full-text columns and statistics in place, 8 adds the
# languages and moves the full text onto terms made in Python (:func:`_fill_terms` makes those
# of the rows already stored), 11 gives users ids and maps the names that stood for them, 12
# keys sessions, tokens and quota counters by those ids; 13 (:data:`TERMS_REMADE`) makes the
# full-text terms again, as :func:`_remake_terms` says; 14 (:data:`BOXES_REPACKED`) re-packs
# the glyph boxes (:func:`_repack_boxes`); 15 adds the saved threads, 16 the collections, 17
# the chunks' section paths, 18 the feedback and the answers' asker, 19 the threads' shares.
# The steps from 15 on take again harmlessly (IF NOT EXISTS), as after a restore to an older
# version.
MIGRATIONS = {
    2: "migration_2.sql",
    3: "migration_3.sql",
    4: "migration_4.sql",
    5: "migration_5.sql",
    6: "migration_6.sql",
    7: "migration_7.sql",
    8: "migration_8.sql",
    9: "migration_9.sql",
    10: "migration_10.sql",
    11: "migration_11.sql",
    12: "migration_12.sql",
    15: "migration_15.sql",
    16: "migration_16.sql",
    17: "migration_17.sql",
    18: "migration_18.sql",
    19: "migration_19.sql",
}
#: The version whose step is Python alone: :func:`_remake_terms` makes every stored chunk's
#: full-text terms again (identifiers' whole terms, truthbase.text.fulltext), no SQL to run.
TERMS_REMADE = 13
#: The version whose step is Python alone too: :func:`_repack_boxes` packs the glyph boxes.
BOXES_REPACKED = 14
# Advisory lock keys (any constant bigint): schema migration, document (and token sign) writes.
_MIGRATE_LOCK = 0x7472757468_01
WRITE_LOCK = 0x7472757468_02


@dataclass(frozen=True, slots=True)
class Hnsw:
    """HNSW indexes on the vectors: whether to build and use them whatever the size
    (``enabled``), from how many vector rows they are built and used without it (``min_rows``;
    None: never), the graph's degree and build-time beam (used when the index is built; an
    existing index keeps its own), and the query-time beam (at least 4x the rows asked)."""

    enabled: bool = False
    min_rows: int | None = None
    m: int = 24
    ef_construction: int = 128
    ef_search: int = 800


def sql_text(name: str) -> str:
    """One of this package's SQL files."""
    return resources.files(__package__).joinpath(name).read_text("utf-8")


def migrate(pool: Pool, hnsw: Hnsw) -> None:
    """Create or bring up to date the schema and its functions, once, whoever else opens the
    database at the same time (an advisory lock); StoreError for a version this code lacks."""
    functions = sql_text("functions.sql")
    functions_sha = hashlib.sha256(functions.encode()).hexdigest()
    with pool.connection() as conn:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
                exists = conn.execute(
                    "SELECT to_regclass('truthbase.meta') IS NOT NULL"
                ).fetchone()[0]
                if not exists:
                    conn.execute(sql_text("schema.sql"))
                    # schema.sql is version 1; the migrations below bring it up to date
                    conn.execute(
                        "INSERT INTO truthbase.meta(key, value) VALUES ('schema_version', '1')"
                    )
                row = conn.execute(
                    "SELECT value FROM truthbase.meta WHERE key = 'schema_version'"
                ).fetchone()
                version = int(row[0]) if row else 0
                while 1 <= version < SCHEMA_VERSION and _has_step(version + 1):
                    version += 1
                    if version in MIGRATIONS:
                        conn.execute(sql_text(MIGRATIONS[version]))
                    if version == 8:
                        _fill_terms(conn)
                    if version == TERMS_REMADE:
                        _remake_terms(conn)
                    if version == BOXES_REPACKED:
                        _repack_boxes(conn)
                    conn.execute(
                        "UPDATE truthbase.meta SET value = %s WHERE key = 'schema_version'",
                        (str(version),),
                    )
                if version != SCHEMA_VERSION:
                    raise StoreError(
                        f"the database has TruthBase schema version {version}, this "
                        f"TruthBase needs {SCHEMA_VERSION}"
                    )
                row = conn.execute(
                    "SELECT value FROM truthbase.meta WHERE key = 'functions_sha256'"
                ).fetchone()
                if row is None or row[0] != functions_sha:
                    conn.execute(functions)
                    conn.execute(
                        "INSERT INTO truthbase.meta(key, value) "
                        "VALUES ('functions_sha256', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (functions_sha,),
                    )
                if index_embedder(QmarkConnection(conn)) is not None and (
                    hnsw.enabled or _large(conn, hnsw)
                ):
                    ensure_hnsw(conn, hnsw)
        except psycopg.Error as exc:
            raise StoreError(f"cannot set up the TruthBase schema: {exc}") from exc


def _has_step(version: int) -> bool:
    return version in MIGRATIONS or version in (TERMS_REMADE, BOXES_REPACKED)


def _remake_terms(conn: Connection) -> None:
    """Version 13's step: each chunk's text, title and table context terms made again from the
    stored text in the stored languages (an identifier is one whole term since this version,
    :mod:`truthbase.text.fulltext`); the generated tsvectors follow, then the statistics."""
    documents = conn.execute("SELECT id, title, language FROM truthbase.documents").fetchall()
    for doc_id, title, language in documents:
        title_terms = term_string(title, language)
        with conn.cursor() as cur:
            chunks = cur.execute(
                "SELECT c.id, c.text, c.context, coalesce(u.language, %s) "
                "FROM truthbase.chunks c LEFT JOIN truthbase.units u "
                "ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.doc_id = %s",
                (language, doc_id),
            ).fetchall()
            cur.executemany(
                "UPDATE truthbase.chunks SET terms = %s, title_terms = %s WHERE id = %s",
                [
                    (
                        term_string(text, chunk_language),
                        " ".join(
                            part
                            for part in (title_terms, term_string(context, chunk_language))
                            if part
                        ),
                        chunk_id,
                    )
                    for chunk_id, text, context, chunk_language in chunks
                ],
            )
    _recount(conn)


def _fill_terms(conn: Connection) -> None:
    """Migration 6's Python half: detect each stored document's and unit's language, make its
    chunks' full-text terms (:mod:`truthbase.text.fulltext`), then recount the statistics."""
    documents = conn.execute("SELECT id, title, metadata FROM truthbase.documents").fetchall()
    for doc_id, title, metadata in documents:
        units = conn.execute(
            "SELECT idx, text FROM truthbase.units WHERE doc_id = %s ORDER BY idx", (doc_id,)
        ).fetchall()
        hint = json.loads(metadata).get("language") if metadata else None
        found = detect_document([text for _, text in units], hint=hint)
        by_unit = dict(zip([idx for idx, _ in units], found.units, strict=True))
        conn.execute(
            "UPDATE truthbase.documents SET language = %s WHERE id = %s", (found.document, doc_id)
        )
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE truthbase.units SET language = %s WHERE doc_id = %s AND idx = %s",
                [(code, doc_id, idx) for idx, code in by_unit.items()],
            )
            chunks = cur.execute(
                "SELECT id, unit, text FROM truthbase.chunks WHERE doc_id = %s", (doc_id,)
            ).fetchall()
            cur.executemany(
                "UPDATE truthbase.chunks SET terms = %s, title_terms = %s WHERE id = %s",
                [
                    (
                        term_string(text, by_unit.get(unit) or found.document),
                        term_string(title, found.document),
                        chunk_id,
                    )
                    for chunk_id, unit, text in chunks
                ],
            )
    _recount(conn)


def _recount(conn: Connection) -> None:
    """The full-text statistics (document frequencies, chunk and token counts) counted again."""
    conn.execute("TRUNCATE truthbase.lexeme_df")
    conn.execute(
        "INSERT INTO truthbase.lexeme_df (lexeme, df_any, df_text) "
        "SELECT u.lexeme, count(*), count(*) FILTER (WHERE 'D' = ANY (u.weights)) "
        "FROM truthbase.chunks c, unnest(c.tsv) u(lexeme, positions, weights) GROUP BY u.lexeme"
    )
    conn.execute(
        "UPDATE truthbase.fts_stats SET n = (SELECT count(*) FROM truthbase.chunks), "
        "tokens = (SELECT coalesce(sum(ntok), 0) FROM truthbase.chunks)"
    )


# -- schema 13: packed glyph boxes ------------------------------------------------------------


def _repack_boxes(conn: Connection) -> None:
    """Migration 14: every unit's float32 boxes re-packed (the same boxes, bit for bit), one
    document at a time."""
    for (doc_id,) in conn.execute("SELECT id FROM truthbase.documents").fetchall():
        rows = conn.execute(
            "SELECT idx, text, boxes FROM truthbase.units WHERE doc_id = %s AND boxes IS NOT NULL",
            (doc_id,),
        ).fetchall()
        updates = [
            (packed, doc_id, idx)
            for idx, text, blob in rows
            if (packed := repacked(bytes(blob), text)) is not None
        ]
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE truthbase.units SET boxes = %s WHERE doc_id = %s AND idx = %s", updates
            )


def type_vectors(conn: Connection, dim: int) -> None:
    """Type the (empty) vector columns ``vector(dim)``: the first document's dimension."""
    for table in ("chunks", "windows"):
        # Changing the type resets the column's storage to the type's (out of line): keep
        # vectors in the heap rows, as migration 2 set (a seq scan reads no TOAST then).
        conn.execute(
            sql.SQL(
                "ALTER TABLE truthbase.{} ALTER COLUMN vector TYPE vector({}), "
                "ALTER COLUMN vector SET STORAGE MAIN"
            ).format(sql.Identifier(table), sql.Literal(dim))
        )


def ensure_hnsw(conn: Connection, hnsw: Hnsw) -> None:
    """HNSW indexes (inner product) on chunk and window vectors; no-op when present. The
    build of a large index runs past any statement timeout and is no hang: none applies."""
    conn.execute("SET statement_timeout = 0")
    try:
        for table in ("chunks", "windows"):
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON truthbase.{} "
                    "USING hnsw (vector vector_ip_ops) WITH (m = {}, ef_construction = {})"
                ).format(
                    sql.Identifier(f"{table}_hnsw"),
                    sql.Identifier(table),
                    sql.Literal(int(hnsw.m)),
                    sql.Literal(int(hnsw.ef_construction)),
                )
            )
    finally:
        with contextlib.suppress(psycopg.Error):  # an aborted transaction resets it anyway
            conn.execute("RESET statement_timeout")


def _large(conn: Connection, hnsw: Hnsw) -> bool:
    """Whether the index holds at least ``hnsw.min_rows`` vector rows (chunks from the
    full-text statistics, windows counted: the planner's estimate is unknown until the table
    has been analyzed; asked only while the HNSW indexes are missing)."""
    if hnsw.min_rows is None:
        return False
    row = conn.execute(
        "SELECT (SELECT n FROM truthbase.fts_stats) + (SELECT count(*) FROM truthbase.windows)"
    ).fetchone()
    return row is not None and int(row[0] or 0) >= hnsw.min_rows


def hnsw_ready(conn: Connection) -> bool:
    """Whether both HNSW indexes exist (a build in progress is not ready: its index is
    invalid until it ends)."""
    row = conn.execute(
        "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'truthbase' AND c.relname IN ('chunks_hnsw', 'windows_hnsw') "
        "AND i.indisvalid"
    ).fetchone()
    return row is not None and int(row[0]) == 2


def maybe_hnsw(pool: Pool, hnsw: Hnsw) -> bool:
    """Build the HNSW indexes once the index has grown past ``hnsw.min_rows`` (after a
    document write; one writer at a time, under the migration lock). Whether they exist."""
    with pool.connection() as conn:
        if hnsw_ready(conn):
            return True
        if hnsw.enabled or not _large(conn, hnsw):
            return False
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
            ensure_hnsw(conn, hnsw)
        return True
