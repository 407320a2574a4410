"""The scale-out store: PostgreSQL with pgvector, behind the same Protocol as SQLiteStore.

Layout (``pg_schema.sql``, every object in the schema ``truthbase``): documents, units (with the
EPUB reader's html and DOM map), chunks with a generated, weighted ``tsvector`` (the document
title as weight A, the text as D) under a GIN index and a ``vector(dim)`` column, sentence
windows with their own ``vector(dim)``, a ``meta`` table (schema version, embedder) and the
quota counters; migration 2 (``pg_migration_2.sql``) adds the full-text statistics (per-lexeme
document frequencies, chunk count and total length, kept by triggers) and the answer log,
migration 3 the segment index, migration 4 (``pg_migration_4.sql``) tokenizes and stems the
full text exactly as SQLite's FTS5 (``porter unicode61 remove_diacritics 2``) does, and
migration 5 (``pg_migration_5.sql``) adds the chunks' packed token signs (``chunk_tokens``). The
dimension is fixed by the first ingest (the columns are typed then, while the tables are
empty); an HNSW index is built only when asked (``hnsw=True``).

Search: ``truthbase.hybrid_search`` (``pg_functions.sql``) runs the full-text arm
(BM25 in SQL over an OR of the query's terms, scoring only the chunks that can still reach the
top n), the exact cosine arm (a chunk scores the best of its own and its windows' vectors, as in
SQLite) and weighted RRF in one SQL statement;
:meth:`PostgresStore.fts_search` and :meth:`PostgresStore.dense_search` expose the arms
separately so that :func:`truthbase.retrieve.hybrid.search` (Python fusion, sub-queries) works
unchanged.

Connections: a small pool (``pool_size``); each call borrows one, each document is written in
one transaction (with an advisory lock, so concurrent writers serialize as SQLite's
``BEGIN IMMEDIATE`` does).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import numpy as np

from ..errors import InvalidInput
from ..model import Chunk, ChunkDraft, DocumentInfo, ExtractedDocument, Unit
from ..quota import Admission, QuotaLimits
from ..records import ArmHit, FloatMatrix, IndexEmbedder, StoredAnswer, WindowDraft
from .base import (
    StoreError,
    check_document_inputs,
    check_same_embedder,
)
from .postgres_query import terms_from_match_expression
from .segments_postgres import PostgresSegments
from .sqlite import (
    _document_row,
    _rects_from_json,
    _rects_json,
    _unit_from_row,
    _unit_rows,
)
from .tokens_postgres import PostgresTokens

try:  # psycopg is a dependency, but keep `import truthbase.store` working without it
    import psycopg
    from psycopg import sql
except ImportError:  # pragma: no cover
    psycopg = None  # type: ignore[assignment]

SCHEMA_VERSION = 5
# Each step from version N - 1 to N: an SQL file (pg_schema.sql is version 1); 2, 3 and 5 only
# add, 4 re-creates the full-text columns and statistics in place.
MIGRATIONS = {
    2: "pg_migration_2.sql",
    3: "segments_pg.sql",
    4: "pg_migration_4.sql",
    5: "pg_migration_5.sql",
}
# Advisory lock keys (any constant bigint): schema migration, document writes.
_MIGRATE_LOCK = 0x7472757468_01
_WRITE_LOCK = 0x7472757468_02
_SEARCH_PATH = "SET search_path TO truthbase, public, extensions"

Connection = Any  # psycopg.Connection[tuple[Any, ...]]


def _vector_literal(vector: FloatMatrix | Sequence[float]) -> str:
    """pgvector's text form; float32 printed with 9 significant digits round-trips exactly."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    if not np.all(np.isfinite(array)):
        raise ValueError("a vector has a NaN or infinite component")
    return "[" + ",".join(f"{x:.9g}" for x in array.tolist()) + "]"


def _sql_text(name: str) -> str:
    return resources.files("truthbase.store").joinpath(name).read_text("utf-8")


class _Pool:
    """At most ``size`` connections, each set up once, handed out one per caller."""

    def __init__(self, url: str, size: int) -> None:
        self.url = url
        self._idle: list[Connection] = []
        self._all: list[Connection] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> Connection:
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the database: {exc}") from exc
        conn.execute(_SEARCH_PATH)
        return conn

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        if self._closed:
            raise StoreError("the store is closed")
        self._slots.acquire()
        conn: Connection | None = None
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed:
                conn = self._connect()
                with self._lock:
                    self._all.append(conn)
            yield conn
        finally:
            if conn is not None:
                healthy = not conn.closed and not conn.broken
                if healthy and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    try:
                        conn.rollback()
                    except psycopg.Error:
                        healthy = False
                with self._lock:
                    if healthy and not self._closed:
                        self._idle.append(conn)
                    else:
                        if conn in self._all:
                            self._all.remove(conn)
                        conn.close()
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all, self._idle = self._all, [], []
        for conn in conns:
            conn.close()


class PostgresStore(PostgresSegments, PostgresTokens):
    """A TruthBase index in a PostgreSQL database (pgvector required)."""

    def __init__(
        self,
        url: str,
        *,
        hnsw: bool = False,
        pool_size: int = 8,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        hnsw_ef_search: int = 100,
    ) -> None:
        if psycopg is None:  # pragma: no cover
            raise StoreError("PostgreSQL needs the psycopg package: pip install 'psycopg[binary]'")
        if pool_size < 1:
            raise ValueError("pool_size must be >= 1")
        self.url = url
        self.hnsw = hnsw
        # HNSW: the graph's degree and build-time beam (used when the index is built; an
        # existing index keeps its own), and the query-time beam (at least 4x the rows asked).
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        self.hnsw_ef_search = hnsw_ef_search
        self._pool = _Pool(url, pool_size)
        try:
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    # -- schema ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        functions = _sql_text("pg_functions.sql")
        functions_sha = hashlib.sha256(functions.encode()).hexdigest()
        with self._pool.connection() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
                    exists = conn.execute(
                        "SELECT to_regclass('truthbase.meta') IS NOT NULL"
                    ).fetchone()[0]
                    if not exists:
                        conn.execute(_sql_text("pg_schema.sql"))
                        # pg_schema.sql is version 1; the migrations below bring it up to date
                        conn.execute(
                            "INSERT INTO truthbase.meta(key, value) VALUES ('schema_version', '1')"
                        )
                    row = conn.execute(
                        "SELECT value FROM truthbase.meta WHERE key = 'schema_version'"
                    ).fetchone()
                    version = int(row[0]) if row else 0
                    while 1 <= version < SCHEMA_VERSION and version + 1 in MIGRATIONS:
                        version += 1
                        conn.execute(_sql_text(MIGRATIONS[version]))
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
                    embedder = self._index_embedder_on(conn)
                    if embedder is not None and self.hnsw:
                        self._ensure_hnsw(conn, self.hnsw_m, self.hnsw_ef_construction)
            except psycopg.Error as exc:
                raise StoreError(f"cannot set up the TruthBase schema: {exc}") from exc

    @staticmethod
    def _type_vectors(conn: Connection, dim: int) -> None:
        for table in ("chunks", "windows"):
            # Changing the type resets the column's storage to the type's (out of line): keep
            # vectors in the heap rows, as migration 2 set (a seq scan reads no TOAST then).
            conn.execute(
                sql.SQL(
                    "ALTER TABLE truthbase.{} ALTER COLUMN vector TYPE vector({}), "
                    "ALTER COLUMN vector SET STORAGE MAIN"
                ).format(sql.Identifier(table), sql.Literal(dim))
            )

    @staticmethod
    def _ensure_hnsw(conn: Connection, m: int, ef_construction: int) -> None:
        """HNSW indexes (inner product) on chunk and window vectors; no-op when present."""
        for table in ("chunks", "windows"):
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON truthbase.{} "
                    "USING hnsw (vector vector_ip_ops) WITH (m = {}, ef_construction = {})"
                ).format(
                    sql.Identifier(f"{table}_hnsw"),
                    sql.Identifier(table),
                    sql.Literal(int(m)),
                    sql.Literal(int(ef_construction)),
                )
            )

    def close(self) -> None:
        self._pool.close()

    # -- writes ---------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT 1 FROM truthbase.documents WHERE id = %s", (doc_id,))
            return row.fetchone() is not None

    def add_document(
        self,
        document: ExtractedDocument,
        chunks: Sequence[ChunkDraft],
        vectors: FloatMatrix,
        embedder: IndexEmbedder,
        windows: Sequence[WindowDraft] = (),
        window_vectors: FloatMatrix | None = None,
        token_signs: Sequence[bytes] | None = None,
    ) -> None:
        """Write a document, its units, chunks (full text is a generated column), vectors of
        chunks and windows and the chunks' token signs in one transaction."""
        check_document_inputs(chunks, vectors, embedder, windows, window_vectors, token_signs)
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            current = self._index_embedder_on(conn)
            if current is None:
                conn.execute(
                    "INSERT INTO truthbase.meta(key, value) VALUES ('embedder', %s), "
                    "('embedding_dim', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (embedder.model_id, str(embedder.dim)),
                )
                self._type_vectors(conn, embedder.dim)
                if self.hnsw:
                    self._ensure_hnsw(conn, self.hnsw_m, self.hnsw_ef_construction)
            else:
                check_same_embedder(current, embedder)
            conn.execute(
                "INSERT INTO truthbase.documents(id, title, path, kind, unit_count, ingested_at, "
                "extractor_version, report, toc, metadata) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                _document_row(document),
            )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO truthbase.units(doc_id, idx, label, href, text, boxes, geometry, "
                    "html, dom_map) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    _unit_rows(document),
                )
                chunk_ids: list[int] = []
                if chunks:
                    # One statement for all the chunks: the generated full-text columns' SQL
                    # functions are set up once per statement (~2 ms), not once per chunk, and
                    # the statistics trigger runs once. Ids come from the identity in insertion
                    # order (ORDER BY the chunk's position; the write lock keeps other writers
                    # out), so sorted ids are the chunks' ids in order.
                    rows = cur.execute(
                        'INSERT INTO truthbase.chunks(doc_id, unit, start, "end", text, title, '
                        "rects, vector) "
                        'SELECT %s, c.unit, c.start, c."end", c.text, %s, c.rects, '
                        "c.vector::vector "
                        "FROM unnest(%s::integer[], %s::integer[], %s::integer[], %s::text[], "
                        '%s::text[], %s::text[]) WITH ORDINALITY c(unit, start, "end", text, '
                        "rects, vector, i) ORDER BY c.i RETURNING id",
                        (
                            document.sha256,
                            document.title,
                            [chunk.unit for chunk in chunks],
                            [chunk.start for chunk in chunks],
                            [chunk.end for chunk in chunks],
                            [chunk.text for chunk in chunks],
                            [_rects_json(chunk.rects) for chunk in chunks],
                            [_vector_literal(vector) for vector in vectors],
                        ),
                    ).fetchall()
                    chunk_ids = sorted(int(row[0]) for row in rows)
                    if len(chunk_ids) != len(chunks):
                        raise StoreError("the chunks were not all written")
                if windows and window_vectors is not None:
                    cur.executemany(
                        'INSERT INTO truthbase.windows(chunk_id, start, "end", vector) '
                        "VALUES (%s, %s, %s, %s::vector)",
                        [
                            (chunk_ids[w.chunk], w.start, w.end, _vector_literal(vector))
                            for w, vector in zip(windows, window_vectors, strict=True)
                        ],
                    )
                if token_signs is not None and chunk_ids:
                    cur.execute(
                        "INSERT INTO truthbase.chunk_tokens(chunk_id, signs) "
                        "SELECT * FROM unnest(%s::bigint[], %s::bytea[])",
                        (chunk_ids, [bytes(blob) for blob in token_signs]),
                    )

    # -- reads ----------------------------------------------------------------------------

    @staticmethod
    def _index_embedder_on(conn: Connection) -> IndexEmbedder | None:
        rows = dict(
            conn.execute(
                "SELECT key, value FROM truthbase.meta WHERE key IN ('embedder', 'embedding_dim')"
            ).fetchall()
        )
        if "embedder" not in rows:
            return None
        return IndexEmbedder(model_id=rows["embedder"], dim=int(rows["embedding_dim"]))

    def index_embedder(self) -> IndexEmbedder | None:
        with self._pool.connection() as conn:
            return self._index_embedder_on(conn)

    _DOC_COLUMNS = (
        "d.id, d.title, d.path, d.kind, d.unit_count, "
        "(SELECT count(*) FROM truthbase.chunks c WHERE c.doc_id = d.id), d.ingested_at, "
        "d.extractor_version"
    )

    @staticmethod
    def _document_info(row: Sequence[Any]) -> DocumentInfo:
        return DocumentInfo(
            id=str(row[0]),
            title=str(row[1]),
            path=str(row[2]),
            kind="epub" if row[3] == "epub" else "pdf",
            unit_count=int(row[4]),
            chunk_count=int(row[5]),
            ingested_at=str(row[6]),
            extractor_version=str(row[7]),
        )

    def list_documents(self) -> list[DocumentInfo]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                # COLLATE "C": byte order, as SQLite sorts, whatever the database's locale
                f"SELECT {self._DOC_COLUMNS} FROM truthbase.documents d "
                f'ORDER BY d.title COLLATE "C", d.id COLLATE "C"'
            ).fetchall()
        return [self._document_info(row) for row in rows]

    def document(self, doc_id: str) -> DocumentInfo | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                f"SELECT {self._DOC_COLUMNS} FROM truthbase.documents d WHERE d.id = %s",
                (doc_id,),
            ).fetchone()
        return self._document_info(row) if row else None

    def unit(self, doc_id: str, index: int) -> Unit | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT idx, label, href, text, boxes, geometry, html, dom_map "
                "FROM truthbase.units WHERE doc_id = %s AND idx = %s",
                (doc_id, index),
            ).fetchone()
        return _unit_from_row(row) if row is not None else None

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are left out)."""
        if not chunk_ids:
            return []
        with self._pool.connection() as conn:
            rows = conn.execute(
                'SELECT c.id, c.doc_id, c.unit, c.start, c."end", c.text, c.rects, u.href '
                "FROM truthbase.chunks c JOIN truthbase.units u "
                "ON u.doc_id = c.doc_id AND u.idx = c.unit WHERE c.id = ANY(%s)",
                ([int(i) for i in chunk_ids],),
            ).fetchall()
        by_id = {
            int(row[0]): Chunk(
                id=int(row[0]),
                doc_id=row[1],
                unit=row[2],
                start=row[3],
                end=row[4],
                text=row[5],
                rects=_rects_from_json(row[6]),
                href=row[7],
            )
            for row in rows
        }
        return [by_id[i] for i in chunk_ids if i in by_id]

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed token signs of those of these chunks that have them."""
        if not chunk_ids:
            return {}
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT chunk_id, signs FROM truthbase.chunk_tokens WHERE chunk_id = ANY(%s)",
                ([int(i) for i in chunk_ids],),
            ).fetchall()
        return {int(r[0]): bytes(r[1]) for r in rows}

    def counts(self) -> dict[str, int]:
        tables = (
            ("documents", "documents"),
            ("units", "units"),
            ("chunks", "chunks"),
            ("token_chunks", "chunk_tokens"),
        )
        with self._pool.connection() as conn:
            return {
                name: int(
                    conn.execute(
                        sql.SQL("SELECT count(*) FROM truthbase.{}").format(sql.Identifier(table))
                    ).fetchone()[0]
                )
                for name, table in tables
            }

    # -- search ---------------------------------------------------------------------------

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]:
        """BM25 (as FTS5's bm25() computes it, in SQL) over chunk text, plus the title (weight A)
        at ``title_weight`` (0: the title is not searched at all). ``match_expression`` is the
        FTS5 expression the retrieval layer builds; its terms become an OR of phrases (see
        :mod:`.postgres_query`)."""
        terms = terms_from_match_expression(match_expression)
        if not terms:
            return []
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT chunk_id, rank, score FROM truthbase.fts_arm(%s::text[], %s, %s)",
                (terms, float(title_weight), int(limit)),
            ).fetchall()
        return [ArmHit(chunk_id=int(r[0]), rank=int(r[1]), score=float(r[2])) for r in rows]

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        """Exact cosine (inner product of L2-normalized vectors), or HNSW when the store was
        opened with ``hnsw=True``; a chunk scores the best of its own and its windows' vectors."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT chunk_id, rank, score FROM truthbase.dense_arm(%s::vector, %s, %s, %s)",
                (_vector_literal(query_vector), int(limit), self.hnsw, self.hnsw_ef_search),
            ).fetchall()
        return [ArmHit(chunk_id=int(r[0]), rank=int(r[1]), score=float(r[2])) for r in rows]

    def hybrid_search(
        self,
        query_text: str,
        query_vector: FloatMatrix | None,
        k: int,
        *,
        fts_weight: float = 1.0,
        dense_weight: float = 1.0,
        rrf_k: float = 60.0,
        candidates: int = 50,
        title_weight: float = 1.0,
        terms: Sequence[str] | None = None,
    ) -> list[tuple[int, float, dict[str, int], dict[str, float]]]:
        """``truthbase.hybrid_search`` in one round trip: (chunk id, fused score, rank per arm,
        score per arm), best first. ``terms``: the full-text terms (for example
        ``terms_from_match_expression(build_fts_query(q))``); None: the query's words."""
        if not (math.isfinite(rrf_k) and rrf_k >= 0):
            raise InvalidInput(f"rrf k must be a finite number >= 0, got {rrf_k!r}")
        for name, weight in (("fts", fts_weight), ("dense", dense_weight)):
            if not (math.isfinite(weight) and weight >= 0):
                raise InvalidInput(
                    f"weight of arm {name!r} must be finite and >= 0, got {weight!r}"
                )
        vector = None if query_vector is None else _vector_literal(query_vector)
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT chunk_id, score, fts_rank, dense_rank, fts_score, dense_score "
                "FROM truthbase.hybrid_search(%s, %s::vector, %s, %s::float8[], %s, %s, %s, "
                "%s::text[], %s, %s)",
                (
                    query_text,
                    vector,
                    int(k),
                    [float(fts_weight), float(dense_weight)],
                    float(rrf_k),
                    int(candidates),
                    float(title_weight),
                    list(terms) if terms is not None else None,
                    self.hnsw,
                    self.hnsw_ef_search,
                ),
            ).fetchall()
        results: list[tuple[int, float, dict[str, int], dict[str, float]]] = []
        for chunk_id, score, fts_rank, dense_rank, fts_score, dense_score in rows:
            ranks: dict[str, int] = {}
            scores: dict[str, float] = {}
            if fts_rank is not None:
                ranks["fts"], scores["fts"] = int(fts_rank), float(fts_score)
            if dense_rank is not None:
                ranks["dense"], scores["dense"] = int(dense_rank), float(dense_score)
            results.append((int(chunk_id), float(score), ranks, scores))
        return results

    # -- answer log -----------------------------------------------------------------------

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        """Keep an answer as it was shown; returns its id (the AnswerLog Protocol)."""
        with self._pool.connection() as conn:
            row = conn.execute(
                "INSERT INTO truthbase.answers(question, answer, created_at) "
                "VALUES (%s, %s, %s) RETURNING id",
                (
                    question,
                    json.dumps(answer, ensure_ascii=False),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                ),
            ).fetchone()
        return int(row[0])

    def answers(self) -> list[StoredAnswer]:
        """Every stored answer, oldest first."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT id, question, answer, created_at FROM truthbase.answers ORDER BY id"
            ).fetchall()
        return [StoredAnswer(int(r[0]), str(r[1]), json.loads(r[2]), str(r[3])) for r in rows]

    # -- quotas ---------------------------------------------------------------------------

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        """One atomic admission (``truthbase.try_admit``): all counters up by one, or none."""
        if limits.unlimited:
            return Admission(admitted=True)
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT admitted, retry_after_s FROM truthbase.try_admit(%s, %s, %s, %s, %s)",
                (client_key, float(now), limits.per_minute, limits.per_day, limits.global_per_day),
            ).fetchone()
        return Admission(admitted=bool(row[0]), retry_after_s=float(row[1]))
