"""The embedded default store: one SQLite file, FTS5 for full text, vectors beside it.

One module per concept, each a set of functions over a :class:`~.connection.Database` (the
connection, its lock, transactions): :mod:`.connection` (opening, schema and its migrations),
:mod:`.documents`, :mod:`.search` (the two arms), :mod:`.tokens`, :mod:`.answers`,
:mod:`.segments` and :mod:`.quota`. :class:`SQLiteStore` puts them behind the
:class:`~truthbase.store.base.Store` Protocol; column values are :mod:`truthbase.store.codec`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
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
from . import answers, documents, search, segments, tokens
from .connection import ADDITIVE_FROM, SCHEMA_VERSION, Database
from .quota import QuotaTable

__all__ = ["ADDITIVE_FROM", "SCHEMA_VERSION", "SQLiteStore"]


class SQLiteStore:
    """A TruthBase index in one SQLite file; its connection is shared by threads under a lock,
    and any number of stores, in any number of processes, may open the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = Database(path)
        self._vectors = search.VectorCache()
        self._quota = QuotaTable()

    def close(self) -> None:
        self._db.close()

    # -- documents ------------------------------------------------------------------------

    def has_document(self, doc_id: str) -> bool:
        return documents.has_document(self._db, doc_id)

    def add_document(self, indexed: IndexedDocument) -> None:
        documents.add_document(self._db, indexed)

    def list_documents(self) -> list[DocumentInfo]:
        return documents.list_documents(self._db)

    def document(self, doc_id: str) -> DocumentInfo | None:
        return documents.document(self._db, doc_id)

    def unit(self, doc_id: str, index: int) -> Unit | None:
        return documents.unit(self._db, doc_id, index)

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        return documents.chunks(self._db, chunk_ids)

    def index_embedder(self) -> IndexEmbedder | None:
        return documents.get_index_embedder(self._db)

    def languages(self) -> list[str | None]:
        return documents.languages(self._db)

    def counts(self) -> dict[str, int]:
        return documents.counts(self._db)

    # -- search arms ----------------------------------------------------------------------

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]:
        return search.fts_search(self._db, match_expression, limit, title_weight)

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        return search.dense_search(self._db, self._vectors, query_vector, limit)

    # -- token signs ----------------------------------------------------------------------

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        return tokens.token_signs(self._db, chunk_ids)

    def chunks_without_token_signs(self) -> list[int]:
        return tokens.chunks_without_token_signs(self._db)

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        return tokens.add_token_signs(self._db, signs)

    # -- answer log -----------------------------------------------------------------------

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        return answers.add_answer(self._db, question, answer)

    def answers(self) -> list[StoredAnswer]:
        return answers.answers(self._db)

    # -- segment index --------------------------------------------------------------------

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        return segments.document_toc(self._db, doc_id)

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None:
        return segments.segments(self._db, doc_id, summarizer)

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None:
        segments.put_segments(self._db, doc_id, summarizer, stored)

    # -- quota counters -------------------------------------------------------------------

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        return self._quota.try_admit(self._db, client_key, now, limits)
