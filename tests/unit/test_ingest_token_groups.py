"""Ingest embeds a long document's chunks in groups (their token vectors are packed to signs
group by group): the vectors and signs are those of one call over every chunk."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from truthbase.embed import TokenVectors, Vectors
from truthbase.embed._fake import HashingEmbedder
from truthbase.ingest import embedding as ingest


class TokenHashing(HashingEmbedder):
    """A hashing embedder with one token vector per word (the text's own vector, scaled)."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.calls: list[int] = []

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        self.calls.append(len(texts))
        vectors = self.embed(texts)
        tokens = [
            TokenVectors(
                vectors=np.vstack([self.embed([w])[0] for w in text.split()]),
                tokens=tuple(text.split()),
            )
            for text in texts
        ]
        return vectors, tokens


def test_grouped_chunks_match_one_call() -> None:
    texts = [f"chunk {i} " + "word " * (i % 17) + f"end{i}" for i in range(300)]
    grouped = TokenHashing()
    vectors, signs = ingest._embed_chunks(grouped, texts)
    assert max(grouped.calls) <= ingest.TOKEN_GROUP and sum(grouped.calls) == 300
    whole = TokenHashing()
    want_vectors, want_tokens = whole.embed_with_tokens(texts)
    assert want_tokens is not None and signs is not None
    np.testing.assert_array_equal(vectors, want_vectors)
    assert signs == [ingest.pack_signs(t.vectors) for t in want_tokens]
