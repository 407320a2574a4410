"""The store Protocol: what the pipeline needs from a backend (SQLite now, PostgreSQL later)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInput, TruthBaseError
from ..model import Chunk, ChunkDraft, DocumentInfo, ExtractedDocument, TocEntry, Unit
from ..records import (
    ArmHit,
    FloatMatrix,
    IndexEmbedder,
    StoredAnswer,
    StoredSegments,
    WindowDraft,
)


class StoreError(TruthBaseError):
    """A store cannot be opened or used as asked."""


class Store(Protocol):
    """A document index. Every write of one document is one transaction."""

    def close(self) -> None: ...

    def has_document(self, doc_id: str) -> bool: ...

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
        """``token_signs``: per chunk, the signs of its token vectors as
        :func:`truthbase.retrieve.late.pack_signs` packs them (None: no token data)."""
        ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def document(self, doc_id: str) -> DocumentInfo | None: ...

    def unit(self, doc_id: str, index: int) -> Unit | None: ...

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]: ...

    def index_embedder(self) -> IndexEmbedder | None: ...

    def fts_search(
        self, match_expression: str, limit: int, title_weight: float = 0.0
    ) -> list[ArmHit]: ...

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]:
        """Chunks by cosine to ``query_vector``: a chunk scores the best of its own vector and
        its windows' vectors (max-sim)."""
        ...

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
        them already keeps its own. Raises ValueError, writing nothing, for an unknown chunk id
        or a blob that is not whole token rows of the index's dim. Returns the rows added."""
        ...

    def counts(self) -> dict[str, int]: ...


@runtime_checkable
class AnswerLog(Protocol):
    """A store that keeps the answers it served (for ``truthbase verify``)."""

    def add_answer(self, question: str, answer: dict[str, Any]) -> int: ...

    def answers(self) -> list[StoredAnswer]: ...


@runtime_checkable
class SegmentStore(Protocol):
    """A store that keeps segment indexes (:mod:`truthbase.segments`), cached per document and
    summarizer id; writing one replaces the previous one in one transaction."""

    def document_toc(self, doc_id: str) -> list[TocEntry]: ...

    def segments(self, doc_id: str, summarizer: str) -> StoredSegments | None: ...

    def put_segments(self, doc_id: str, summarizer: str, stored: StoredSegments) -> None: ...


def check_document_inputs(
    chunks: Sequence[ChunkDraft],
    vectors: FloatMatrix,
    embedder: IndexEmbedder,
    windows: Sequence[WindowDraft],
    window_vectors: FloatMatrix | None,
    token_signs: Sequence[bytes] | None = None,
) -> None:
    """What every backend checks before it opens the transaction of ``add_document``."""
    if len(chunks) != len(vectors):
        raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
    if len(vectors) and vectors.shape[1] != embedder.dim:
        raise ValueError(f"vectors of dim {vectors.shape[1]}, embedder says {embedder.dim}")
    n_window_vectors = 0 if window_vectors is None else len(window_vectors)
    if len(windows) != n_window_vectors:
        raise ValueError(f"{len(windows)} windows but {n_window_vectors} window vectors")
    if (
        window_vectors is not None
        and len(window_vectors)
        and window_vectors.shape[1] != embedder.dim
    ):
        raise ValueError(
            f"window vectors of dim {window_vectors.shape[1]}, embedder says {embedder.dim}"
        )
    for window in windows:
        if not 0 <= window.chunk < len(chunks):
            raise ValueError(f"window of chunk {window.chunk}: there are {len(chunks)} chunks")
    if token_signs is not None:
        if len(token_signs) != len(chunks):
            raise InvalidInput(f"{len(chunks)} chunks but {len(token_signs)} token sign blobs")
        for i, blob in enumerate(token_signs):
            _check_sign_blob(f"chunk {i}", blob, embedder.dim)


def check_token_sign_map(signs: Mapping[int, bytes], embedder: IndexEmbedder | None) -> None:
    """What every backend checks before ``add_token_signs`` opens its transaction."""
    if not signs:
        return
    if embedder is None:
        raise InvalidInput("the index has no chunks (no embedder recorded) to add token signs to")
    for chunk_id, blob in signs.items():
        _check_sign_blob(f"chunk id {chunk_id}", blob, embedder.dim)


def _check_sign_blob(which: str, blob: object, dim: int) -> None:
    """One chunk's packed token signs: bytes, a positive whole number of token rows."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise InvalidInput(f"token signs of {which} are {type(blob).__name__}, not bytes")
    row_bytes = token_sign_row_bytes(dim)
    if len(blob) == 0 or len(blob) % row_bytes:
        raise InvalidInput(
            f"token signs of {which} are {len(blob)} bytes, not a positive multiple "
            f"of {row_bytes} (dim {dim} packed to bits)"
        )


def token_sign_row_bytes(dim: int) -> int:
    """Bytes of one token's packed signs: ``dim`` bits, rounded up to whole bytes."""
    return (dim + 7) // 8


def check_same_embedder(current: IndexEmbedder, embedder: IndexEmbedder) -> None:
    """Vectors of one index come from one embedder: refuse a document embedded by another."""
    if current != embedder:
        raise StoreError(
            f"the index was built with {current.model_id} (dim {current.dim}); "
            f"cannot add vectors from {embedder.model_id} (dim {embedder.dim})"
        )
