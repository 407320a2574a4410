"""The store Protocol: everything the pipeline asks of a backend, and both backends do all of it.

:class:`Store` is composed of one small Protocol per concept: :class:`Documents` (the index's
documents, units and chunks), :class:`SearchArms` (full-text and dense), :class:`TokenSigns`
(late interaction's packed token signs), :class:`AnswerLog` (answers as they were shown, for
``truthbase verify``), :class:`SegmentIndex` (segment indexes and stored tables of contents)
and :class:`QuotaCounters` (atomic request admission). A caller that needs one of them takes a
``Store`` and calls the method: there is no backend without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..errors import InvalidInput, TruthBaseError
from ..model import Chunk, DocumentInfo, TocEntry, Unit
from ..quota import Admission, QuotaLimits
from ..records import (
    ArmHit,
    FloatMatrix,
    IndexedDocument,
    IndexEmbedder,
    StoredAnswer,
    StoredSegments,
    check_sign_blob,
)

__all__ = [
    "AnswerLog",
    "Documents",
    "QuotaCounters",
    "SearchArms",
    "SegmentIndex",
    "Store",
    "StoreError",
    "TokenSigns",
    "check_same_embedder",
    "check_token_sign_map",
]


class StoreError(TruthBaseError):
    """A store cannot be opened or used as asked."""


class Documents(Protocol):
    """The documents of an index. Every write of one document is one transaction."""

    def has_document(self, doc_id: str) -> bool: ...

    def add_document(self, indexed: IndexedDocument) -> None:
        """Write the document, its units, chunks, full text, vectors (of chunks and of their
        sentence windows) and token signs in one transaction. StoreError when the index was
        built with another embedder."""
        ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def document(self, doc_id: str) -> DocumentInfo | None: ...

    def unit(self, doc_id: str, index: int) -> Unit | None: ...

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are left out)."""
        ...

    def index_embedder(self) -> IndexEmbedder | None: ...

    def languages(self) -> list[str | None]:
        """The languages of the index's units and titles (ISO 639-1; None for unknown), sorted:
        the languages a question's full-text terms are made in (:mod:`truthbase.fulltext`)."""
        ...

    def counts(self) -> dict[str, int]:
        """Rows of documents, units, chunks and token_chunks (chunks with token signs)."""
        ...


class SearchArms(Protocol):
    """The two retrieval arms; :func:`truthbase.retrieve.hybrid.search` fuses them."""

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]:
        """BM25 over chunk text (FTS5's bm25() on both backends), plus the document title at
        ``title_weight`` (0: the title is not searched); ``match_expression`` as
        :func:`truthbase.retrieve.fts_query.build_fts_query` writes it."""
        ...

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        """Chunks by cosine to ``query_vector``: a chunk scores the best of its own vector and
        its windows' vectors (max-sim)."""
        ...


class TokenSigns(Protocol):
    """Per chunk, the signs of its token vectors as :func:`truthbase.retrieve.late.pack_signs`
    packs them (written with the document, or backfilled later)."""

    def token_signs(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed token signs of those chunks that have them (chunks without token data
        and unknown ids are absent)."""
        ...

    def chunks_without_token_signs(self) -> list[int]:
        """Ids of the chunks that have no token signs (ingested before they were stored, or
        by an embedder without token vectors), ascending."""
        ...

    def add_token_signs(self, signs: Mapping[int, bytes]) -> int:
        """Store token signs for chunks that lack them, in one transaction; a chunk that has
        them already keeps its own. Raises InvalidInput, writing nothing, for an unknown chunk id
        or a blob that is not whole token rows of the index's dim. Returns the rows added."""
        ...


class AnswerLog(Protocol):
    """The answers that were shown (for ``truthbase verify``)."""

    def add_answer(self, question: str, answer: dict[str, Any]) -> int:
        """Keep an answer's JSON as it was shown; returns its id."""
        ...

    def answers(self) -> list[StoredAnswer]:
        """Every stored answer, oldest first."""
        ...


class SegmentIndex(Protocol):
    """Segment indexes (:mod:`truthbase.segments`), cached per document and summarizer id;
    writing one replaces the previous one in one transaction."""

    def document_toc(self, doc_id: str) -> list[TocEntry]:
        """The stored table of contents (EPUB navigation, PDF outline); [] when there is none."""
        ...

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None: ...

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None: ...


class QuotaCounters(Protocol):
    """Request counters (:mod:`truthbase.quota`), shared by every process using the index."""

    def try_admit(self, client_key: str, now: float, limits: QuotaLimits) -> Admission:
        """Admit one request of ``client_key`` at Unix time ``now``, or refuse it, atomically:
        every counter that has a limit goes up by one, or none does (a refusal carries the
        seconds until every refusing window has rolled over). Unlimited: admitted, no I/O."""
        ...


class Store(Documents, SearchArms, TokenSigns, AnswerLog, SegmentIndex, QuotaCounters, Protocol):
    """A TruthBase index: SQLite (:class:`truthbase.store.sqlite.SQLiteStore`) or PostgreSQL
    (:class:`truthbase.store.postgres.PostgresStore`)."""

    def close(self) -> None: ...


def check_token_sign_map(signs: Mapping[int, bytes], embedder: IndexEmbedder | None) -> None:
    """What every backend checks before ``add_token_signs`` writes."""
    if not signs:
        return
    if embedder is None:
        raise InvalidInput("the index has no chunks (no embedder recorded) to add token signs to")
    for chunk_id, blob in signs.items():
        check_sign_blob(f"chunk id {chunk_id}", blob, embedder.dim)


def check_same_embedder(current: IndexEmbedder, embedder: IndexEmbedder) -> None:
    """Vectors of one index come from one embedder: refuse a document embedded by another."""
    if current != embedder:
        raise StoreError(
            f"the index was built with {current.model_id} (dim {current.dim}); "
            f"cannot add vectors from {embedder.model_id} (dim {embedder.dim})"
        )
