"""The scale-out store: PostgreSQL with pgvector.

What both backends share (documents' reads, holders, jobs, accounts, answers, segments, token
signs) is :mod:`truthbase.store.sql`'s, over :class:`.dialect.PostgresDialect`; this package
holds only what is PostgreSQL's own: :mod:`.pool` (connections), :mod:`.schema` (creating and
migrating the schema, refreshing its SQL functions, typing the vector columns, HNSW),
:mod:`.documents` (the writes that touch the full text: add, delete, rename), :mod:`.search`
(the two arms, in SQL; :mod:`.terms` turns the retrieval layer's FTS5 expression into their
terms) and :mod:`.quota` (the counters' upsert).

Connections: a small pool (``pool_size``); each call borrows one, each document is written in
one transaction (with an advisory lock, so concurrent writers serialize as SQLite's
``BEGIN IMMEDIATE`` does).
"""

from __future__ import annotations

from collections.abc import Collection

from ...quota import Admission, QuotaLimits, QuotaUsage
from ...records import ArmHit, FloatMatrix, IndexedDocument
from ..sql import SharedRows
from . import documents, quota, search
from .dialect import PostgresDialect
from .pool import Pool
from .schema import SCHEMA_VERSION, Hnsw, maybe_hnsw, migrate

__all__ = ["SCHEMA_VERSION", "Hnsw", "PostgresStore"]


# The graph settings of schema.Hnsw are this class's defaults too (written in one place).
_HNSW = Hnsw()


class PostgresStore(SharedRows):
    """A TruthBase index in a PostgreSQL database (pgvector required)."""

    def __init__(
        self,
        url: str,
        *,
        hnsw: bool = False,
        hnsw_min_rows: int | None = None,
        pool_size: int = 8,
        hnsw_m: int = _HNSW.m,
        hnsw_ef_construction: int = _HNSW.ef_construction,
        hnsw_ef_search: int = _HNSW.ef_search,
        connect_timeout_s: float = 10.0,
        statement_timeout_s: float = 300.0,
    ) -> None:
        self.url = url
        self.hnsw = Hnsw(
            enabled=hnsw,
            min_rows=hnsw_min_rows,
            m=hnsw_m,
            ef_construction=hnsw_ef_construction,
            ef_search=hnsw_ef_search,
        )
        self._pool = Pool(
            url,
            pool_size,
            connect_timeout_s=connect_timeout_s,
            statement_timeout_s=statement_timeout_s,
        )
        self._sql = PostgresDialect(self._pool)
        try:
            migrate(self._pool, self.hnsw)
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        documents.add_document(self._pool, self.hnsw, indexed, replace=replace)
        if self.hnsw.min_rows is not None:
            maybe_hnsw(self._pool, self.hnsw)  # the write that crosses the size builds them

    def delete_document(self, doc_id: str) -> str | None:
        return documents.delete_document(self._pool, doc_id)

    def rename_document(self, doc_id: str, title: str) -> bool:
        return documents.rename_document(self._pool, doc_id, title)

    def fts_search(
        self,
        match_expression: str,
        limit: int,
        title_weight: float = 0.0,
        doc_ids: Collection[str] | None = None,
    ) -> list[ArmHit]:
        return search.fts_search(self._pool, match_expression, limit, title_weight, doc_ids)

    def dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        return search.dense_search(self._pool, self.hnsw, query_vector, limit, doc_ids)

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return quota.try_admit(self._pool, client_key, now, limits)

    def quota_usage(self, client_key: str, now: float) -> QuotaUsage:
        return quota.usage(self._pool, client_key, now)
