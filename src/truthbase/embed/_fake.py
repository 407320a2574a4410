"""A deterministic stand-in embedder for tests of the stages that consume vectors."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from truthbase.embed._base import Vectors, l2_normalize

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Bag of hashed lowercase words: texts sharing words get similar vectors. No model, no I/O.

    For tests of storage and retrieval that need real-shaped vectors fast; not for search quality.
    """

    def __init__(self, dim: int = 64, model_id: str = "test:hashing") -> None:
        if dim < 1:
            raise ValueError("dim must be at least 1")
        self._dim = dim
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()) or [""]:  # no words: one fixed vector
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self._dim] += 1.0 if (value >> 63) & 1 else -1.0
        return l2_normalize(out)
