"""The store Protocol: what the pipeline needs from a backend (SQLite now, PostgreSQL later)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..model import Chunk, ChunkDraft, DocumentInfo, ExtractedDocument, Unit

FloatMatrix = npt.NDArray[np.float32]


class StoreError(Exception):
    """A store cannot be opened or used as asked."""


@dataclass(frozen=True, slots=True)
class IndexEmbedder:
    """The embedder an index was built with; queries must use the same one."""

    model_id: str
    dim: int


@dataclass(frozen=True, slots=True)
class ArmHit:
    """One chunk as one retrieval arm ranked it (rank is 1-based)."""

    chunk_id: int
    rank: int
    score: float


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
    ) -> None: ...

    def list_documents(self) -> list[DocumentInfo]: ...

    def document(self, doc_id: str) -> DocumentInfo | None: ...

    def unit(self, doc_id: str, index: int) -> Unit | None: ...

    def chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]: ...

    def index_embedder(self) -> IndexEmbedder | None: ...

    def fts_search(self, match_expression: str, limit: int) -> list[ArmHit]: ...

    def dense_search(self, query_vector: FloatMatrix, limit: int) -> list[ArmHit]: ...

    def counts(self) -> dict[str, int]: ...
