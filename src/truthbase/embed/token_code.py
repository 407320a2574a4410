"""Token codes: how a chunk's token vectors become the bits late interaction stores and scores.

Two codes. ``signs`` keeps the sign of every dimension (48 bytes a token at dim 384): what every
index recorded before there was a choice. ``pca128:HASH`` keeps the signs of a fixed projection:
each token vector less the mean token vector, onto the 128 principal directions of token vectors
(16 bytes a token). MiniLM's token vectors share a large common direction (the mean's norm is
0.3 on unit vectors) and a few dimensions of nearly constant sign, whose bits say nothing; the
centered principal directions put every bit to use. Both were measured on the three dev sets
(docs/evals/token-codes.md): the fused retrieval pool kept its Recall@8 and MRR for a third of
the bytes; answers lost three correct citations of 124 and two
of 36 follow-ups, so a new index takes the projection only with ``chunking.token_projection``.

The projection is fitted once, not per index, on token vectors of documents that no golden set
asks about (``scripts/fit_token_code.py``), and shipped as ``data/minilm-pca128.npy`` (row 0
the mean, then the directions). Its name carries the file's hash, so an index never meets another
projection than the one its bits were made with. It applies to the bundled MiniLM and to
``minilm-int8`` (its token vectors are the same model's, within a cosine of .997); any other
embedder stores ``signs``.

The question's side stays real-valued: its token rows are projected onto the same directions
(see :meth:`TokenCode.query`), and ``signs`` leaves them as they are.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import numpy.typing as npt

from ..records import SIGN_CODE
from ._base import DEFAULT_MODEL_ID, INT8_MODEL_ID, EmbeddingError, Vectors

__all__ = ["PCA_CODE", "TokenCode", "default_token_code", "token_code"]

#: The shipped projection: its name, with the first 12 hex digits of its file's sha256.
PCA_CODE = "pca128:de771da02b35"
_PCA_FILE = "minilm-pca128.npy"
_PCA_MODELS = frozenset({DEFAULT_MODEL_ID, INT8_MODEL_ID})
_PCA_DIM = 384


@dataclass(frozen=True, slots=True, eq=False)
class TokenCode:
    """A token code: ``bits`` a token row, from the signs of ``(v - mean) @ basis.T`` (no
    ``basis``: the signs of ``v`` itself)."""

    name: str
    bits: int
    mean: npt.NDArray[np.float32] | None = None
    basis: npt.NDArray[np.float32] | None = None  # (bits, dim)

    def pack(self, vectors: Vectors) -> bytes:
        """Token vectors (n, dim) as their packed code, row after row (positive: bit 1)."""
        if vectors.ndim != 2 or vectors.shape[0] == 0:
            raise ValueError(f"expected a non-empty (tokens, dim) matrix, not {vectors.shape}")
        rows = np.asarray(vectors, dtype=np.float32)
        if self.basis is not None and self.mean is not None:
            rows = np.asarray((rows - self.mean) @ self.basis.T, dtype=np.float32)
        return np.packbits(rows > 0, axis=1).tobytes()

    def query(self, vectors: Vectors) -> npt.NDArray[np.float32]:
        """The question's token rows as this code scores them: onto the directions, not
        centered (``signs``: as they are, so an index of signs ranks as it always did).

        A chunk token's bits stand for ``d - mean``; ``q . (d - mean)`` ranks a chunk's tokens
        as ``q . d`` does, the mean's term being the same for all of them. (Centering the
        question too scores a different similarity: measured, it ranked worse.)"""
        rows = np.asarray(vectors, dtype=np.float32)
        if self.basis is None:
            return rows
        return np.asarray(rows @ self.basis.T, dtype=np.float32)


def default_token_code(model_id: str, dim: int, projection: bool) -> str:
    """The code a new index of ``model_id`` stores: the shipped projection where it applies and
    ``projection`` is on (``chunking.token_projection``), else ``signs``."""
    if projection and model_id in _PCA_MODELS and dim == _PCA_DIM:
        return PCA_CODE
    return SIGN_CODE


def token_code(name: str, dim: int) -> TokenCode:
    """The code an index records under ``name``, for its embedder's ``dim``;
    :class:`EmbeddingError` for a name this version does not have."""
    if name == SIGN_CODE:
        return TokenCode(name=SIGN_CODE, bits=dim)
    if name == PCA_CODE:
        if dim != _PCA_DIM:
            raise EmbeddingError(
                f"the index's token code {name!r} is of {_PCA_DIM}-dimensional token vectors, "
                f"not {dim}: the index was built with another embedder than this one"
            )
        return _pca_code()
    raise EmbeddingError(
        f"the index stores token codes {name!r} (dim {dim}), which this version of truthbase "
        "cannot read; rebuild the index with this version"
    )


@cache
def _pca_code() -> TokenCode:
    data = resources.files(__package__).joinpath("data", _PCA_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:12]
    if f"pca128:{digest}" != PCA_CODE:
        raise EmbeddingError(
            f"the token projection {_PCA_FILE} has hash {digest}, not the one {PCA_CODE} names: "
            "the installed package is damaged; reinstall truthbase"
        )
    rows = np.load(io.BytesIO(data), allow_pickle=False).astype(np.float32)
    if rows.shape != (129, _PCA_DIM) or not np.isfinite(rows).all():
        raise EmbeddingError(f"the token projection {_PCA_FILE} has shape {rows.shape}")
    mean, basis = rows[0], np.ascontiguousarray(rows[1:])
    return TokenCode(name=PCA_CODE, bits=basis.shape[0], mean=mean, basis=basis)
