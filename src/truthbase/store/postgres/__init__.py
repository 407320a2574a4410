"""The scale-out store: PostgreSQL with pgvector, behind the same Protocol as SQLite's store.

One module per concept, each a set of functions over the connection :class:`~.pool.Pool`:
:mod:`.pool` (connections), :mod:`.schema` (creating and migrating the schema, refreshing its
SQL functions, typing the vector columns, HNSW), :mod:`.documents`, :mod:`.search` (the two
arms, in SQL; :mod:`.terms` turns the retrieval layer's FTS5 expression into their terms),
:mod:`.tokens`, :mod:`.answers`, :mod:`.segments` and :mod:`.quota`. :class:`PostgresStore`
puts them behind the :class:`~truthbase.store.base.Store` Protocol; column values are
:mod:`truthbase.store.codec`'s, as SQLite's are.

Connections: a small pool (``pool_size``); each call borrows one, each document is written in
one transaction (with an advisory lock, so concurrent writers serialize as SQLite's
``BEGIN IMMEDIATE`` does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model import Chunk, DocumentInfo, TocEntry, Unit
from ...quota import Admission, QuotaLimits
from ...records import (
    ArmHit,
    FloatMatrix,
    IndexedDocument,
    IndexEmbedder,
    StoredAnswer,
    StoredSegments,
)
from . import answers, documents, quota, search, segments, tokens
from .pool import Pool
from .schema import SCHEMA_VERSION, Hnsw, migrate

__all__ = ["SCHEMA_VERSION", "Hnsw", "PostgresStore"]


class PostgresStore:
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
        self.url = url
        self.hnsw = Hnsw(
            enabled=hnsw, m=hnsw_m, ef_construction=hnsw_ef_construction, ef_search=hnsw_ef_search
        )
        self._pool = Pool(url, pool_size)
        try:
            migrate(self._pool, self.hnsw)
        except BaseException:
            self._pool.close()
            raise

    def close(self) -> None:
        self._pool.close()

    # -- documents ------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        return documents.has_document(self._pool, doc_id)

    def add_document(self, indexed: IndexedDocument) -> None:
        documents.add_document(self._pool, self.hnsw, indexed)

    def list_documents(self) -> list[DocumentInfo]:
        return documents.list_documents(self._pool)

    def document(self, doc_id: str) -> DocumentInfo | None:
        return documents.document(self._pool, doc_id)

    def unit(self, doc_id: str, index: int) -> Unit | None:
        return documents.unit(self._pool, doc_id, index)

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        return documents.chunks(self._pool, chunk_ids)

    def index_embedder(self) -> IndexEmbedder | None:
        return documents.get_index_embedder(self._pool)

    def languages(self) -> list[str | None]:
        return documents.languages(self._pool)

    def counts(self) -> dict[str, int]:
        return documents.counts(self._pool)

    # -- search arms ----------------------------------------------------------------------

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]:
        return search.fts_search(self._pool, match_expression, limit, title_weight)

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        return search.dense_search(self._pool, self.hnsw, query_vector, limit)

    # -- token signs ----------------------------------------------------------------------

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        return tokens.token_signs(self._pool, chunk_ids)

    def chunks_without_token_signs(self) -> list[int]:
        return tokens.chunks_without_token_signs(self._pool)

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        return tokens.add_token_signs(self._pool, signs)

    # -- answer log -----------------------------------------------------------------------

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        return answers.add_answer(self._pool, question, answer)

    def answers(self) -> list[StoredAnswer]:
        return answers.answers(self._pool)

    # -- segment index --------------------------------------------------------------------

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        return segments.document_toc(self._pool, doc_id)

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        return segments.segments(self._pool, doc_id, summarizer)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        segments.put_segments(self._pool, doc_id, summarizer, stored)

    # -- quota counters -------------------------------------------------------------------

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return quota.try_admit(self._pool, client_key, now, limits)
