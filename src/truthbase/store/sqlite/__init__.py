"""The embedded default store: one SQLite file, FTS5 for full text, vectors beside it.

What both backends share (documents' reads, holders, jobs, accounts, answers, segments, token
signs) is :mod:`truthbase.store.sql`'s, over :class:`.dialect.SQLiteDialect`; this package
holds only what is SQLite's own: :mod:`.connection` (the file, a connection per thread, the
writer lock, the schema and its migrations), :mod:`.documents` (the writes that touch FTS5:
add, delete, rename), :mod:`.search` (the two arms), :mod:`.ann` (the dense arm's graph),
:mod:`.postings` (the full-text arm in memory, for large indexes) and :mod:`.quota` (the
counters).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from ...quota import Admission, QuotaLimits, QuotaUsage
from ...records import ArmHit, FloatMatrix, IndexedDocument
from ..phrases import or_of_phrases
from ..sql import SharedRows
from . import documents, search
from .ann import AnnOptions, AnnState, ann_search
from .connection import ADDITIVE_FROM, CHUNK_TEXT, SCHEMA_VERSION, Database
from .dialect import SQLiteDialect
from .postings import PostingsCache, postings_search
from .quota import QuotaTable

__all__ = ["ADDITIVE_FROM", "CHUNK_TEXT", "SCHEMA_VERSION", "AnnOptions", "SQLiteStore"]


class SQLiteStore(SharedRows):
    """A TruthBase index in one SQLite file: each thread reads on a connection of its own (WAL),
    writes go one at a time (:class:`.connection.Database`), and any number of stores, in any
    number of processes, may open the same file."""

    def __init__(
        self,
        path: Path,
        *,
        ann: AnnOptions | None = None,
        fts_postings_min_rows: int | None = None,
    ) -> None:
        self.path = path
        self._db = Database(path)
        self._sql = SQLiteDialect(self._db)
        self._vectors = search.VectorCache()
        # The dense arm's graph above ann.min_rows vector rows (see .ann); exact below.
        self.ann = AnnState(None if str(path) == ":memory:" else path, ann or AnnOptions())
        # The full-text arm from postings in memory from fts_postings_min_rows chunks (see
        # .postings: the same ranking as FTS5's, without its cost per matching chunk).
        self._postings = PostingsCache(fts_postings_min_rows)
        self._quota = QuotaTable()
        # Every search asks for the index's languages; they change only with a document write.
        self._languages: tuple[int, list[str | None]] | None = None

    def close(self) -> None:
        self._db.close()

    def add_document(self, indexed: IndexedDocument, *, replace: bool = False) -> None:
        documents.add_document(self._db, indexed, replace=replace)

    def delete_document(self, doc_id: str) -> str | None:
        return documents.delete_document(self._db, doc_id)

    def rename_document(self, doc_id: str, title: str) -> bool:
        return documents.rename_document(self._db, doc_id, title)

    def languages(self) -> list[str | None]:
        with self._db.lock:
            generation = self._db.generation()
        if self._languages is None or self._languages[0] != generation:
            self._languages = (generation, super().languages())
        return list(self._languages[1])

    def fts_search(
        self,
        match_expression: str,
        limit: int,
        title_weight: float = 0.0,
        doc_ids: Collection[str] | None = None,
    ) -> list[ArmHit]:
        phrases = or_of_phrases(match_expression)
        postings = self._postings.postings(self._db) if phrases is not None else None
        if phrases is not None and postings is not None:
            return postings_search(postings, phrases, limit, title_weight, doc_ids)
        return search.fts_search(self._db, match_expression, limit, title_weight, doc_ids)

    def dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        hits = ann_search(self._db, self._vectors, self.ann, query_vector, limit, doc_ids)
        if hits is not None:
            return hits
        return search.dense_search(self._db, self._vectors, query_vector, limit, doc_ids)

    def exact_dense_search(
        self, query_vector: FloatMatrix, limit: int, doc_ids: Collection[str] | None = None
    ) -> list[ArmHit]:
        """The dense arm without the graph, whatever the index's size (recall is measured
        against it)."""
        return search.dense_search(self._db, self._vectors, query_vector, limit, doc_ids)

    def prepare_ann(self) -> bool:
        """Build (or load) the dense arm's graph for the current rows now, in this thread;
        False when the index is below ``ann.min_rows`` (the exact arm serves it)."""
        with self._db.lock:
            compact = self._vectors.vectors(self._db)
        return self.ann.index_for(compact, wait=True) is not None

    def prepare_postings(self) -> bool:
        """Build the full-text arm's postings for the current generation now, in this thread;
        False when the index is below ``fts_postings_min_rows`` chunks (FTS5 serves it)."""
        return self._postings.postings(self._db, wait=True) is not None

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return self._quota.try_admit(self._db, client_key, now, limits)

    def quota_usage(self, client_key: str, now: float) -> QuotaUsage:
        return self._quota.usage(self._db, client_key, now)
