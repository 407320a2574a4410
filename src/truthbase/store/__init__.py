"""Storage backends behind one Protocol (:class:`Store`, :mod:`.base`): SQLite (:mod:`.sqlite`,
the embedded default) and PostgreSQL with pgvector (:mod:`.postgres`), sharing one row codec
(:mod:`.codec`)."""

from __future__ import annotations

from pathlib import Path

from ..config import Settings, SqliteSettings
from .base import (
    Accounts,
    AnswerLog,
    Collections,
    DocumentAdmin,
    DocumentReader,
    Documents,
    Jobs,
    QuotaCounters,
    Searchable,
    SearchArms,
    SegmentIndex,
    SegmentStore,
    Store,
    StoreError,
    StoreFull,
    ThreadLog,
    ThreadShares,
    TokenSigns,
)
from .sqlite import AnnOptions, SQLiteStore

__all__ = [
    "Accounts",
    "AnswerLog",
    "Collections",
    "DocumentAdmin",
    "DocumentReader",
    "Documents",
    "Jobs",
    "QuotaCounters",
    "SQLiteStore",
    "SearchArms",
    "Searchable",
    "SegmentIndex",
    "SegmentStore",
    "Store",
    "StoreError",
    "StoreFull",
    "ThreadLog",
    "ThreadShares",
    "TokenSigns",
    "open_store",
]


def open_store(db: Path | Settings) -> Store:
    """Open (or create) the index: the SQLite file ``db``, or, given settings, PostgreSQL when
    ``settings.database_url`` is set and the SQLite file ``settings.db`` otherwise."""
    if isinstance(db, Path):
        return _sqlite_store(db, SqliteSettings())
    if db.database_url:
        try:  # at call time: psycopg is loaded only by those who use PostgreSQL
            from .postgres import PostgresStore
        except ImportError as exc:  # pragma: no cover - psycopg is a dependency
            raise StoreError(
                f"PostgreSQL needs the psycopg package: pip install 'psycopg[binary]' ({exc})"
            ) from exc
        return PostgresStore(
            db.database_url,
            hnsw=db.postgres.hnsw,
            hnsw_min_rows=db.postgres.hnsw_min_rows,
            pool_size=db.postgres.pool_size,
            hnsw_m=db.postgres.hnsw_m,
            hnsw_ef_construction=db.postgres.hnsw_ef_construction,
            hnsw_ef_search=db.postgres.hnsw_ef_search,
            connect_timeout_s=db.postgres.connect_timeout_s,
            statement_timeout_s=db.postgres.statement_timeout_s,
        )
    return _sqlite_store(db.db, db.sqlite)


def _sqlite_store(path: Path, lite: SqliteSettings) -> SQLiteStore:
    return SQLiteStore(
        path,
        ann=AnnOptions(
            min_rows=lite.ann_min_rows,
            connectivity=lite.ann_connectivity,
            expansion_add=lite.ann_expansion_add,
            expansion_search=lite.ann_expansion_search,
            overfetch=lite.ann_overfetch,
        ),
        fts_postings_min_rows=lite.fts_postings_min_rows,
    )
