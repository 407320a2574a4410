"""Ingest embeds a long document's chunks in groups (their token vectors are packed to signs
group by group): the vectors and signs are those of one call over every chunk."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from truthbase.embed import TokenVectors, Vectors
from truthbase.embed._fake import HashingEmbedder
from truthbase.embed.token_code import token_code
from truthbase.ingest import embedding as ingest
from truthbase.records import SIGN_CODE

SIGNS_16 = token_code(SIGN_CODE, 16)


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
    vectors, signs = ingest._embed_chunks(grouped, texts, SIGNS_16)
    assert max(grouped.calls) <= ingest.TOKEN_GROUP and sum(grouped.calls) == 300
    whole = TokenHashing()
    want_vectors, want_tokens = whole.embed_with_tokens(texts)
    assert want_tokens is not None and signs is not None
    np.testing.assert_array_equal(vectors, want_vectors)
    assert signs == [ingest.pack_signs(t.vectors) for t in want_tokens]


class TokenHashingWithStarts(TokenHashing):
    """Also tells where each word starts in its text."""

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Vectors, list[TokenVectors] | None]:
        vectors, tokens = super().embed_with_tokens(texts)
        assert tokens is not None
        with_starts = []
        for text, token in zip(texts, tokens, strict=True):
            starts, at = [], 0
            for word in token.tokens:
                at = text.index(word, at)
                starts.append(at)
                at += len(word)
            with_starts.append(TokenVectors(token.vectors, token.tokens, tuple(starts)))
        return vectors, with_starts


def test_parts_give_a_chunk_its_windows_tokens_with_the_title_once() -> None:
    title = "Title words\n"
    windows = ["alpha beta", "gamma delta", "epsilon"]
    parts = [[ingest._Part(title + w, len(title)) for w in windows], [ingest._Part("short", 0)]]
    groups = ingest._groups(parts)
    embedder = TokenHashingWithStarts()
    vectors, by_text, signs = ingest._embed_from_parts(
        embedder, parts, groups, code=SIGNS_16, with_signs=True, meter=None
    )
    assert signs is not None
    want_rows = ["Title", "words", "alpha", "beta", "gamma", "delta", "epsilon"]
    assert signs[0] == ingest.pack_signs(np.vstack([embedder.embed([w])[0] for w in want_rows]))
    assert signs[1] == ingest.pack_signs(embedder.embed(["short"]))
    np.testing.assert_array_equal(vectors[1], embedder.embed(["short"])[0])
    assert set(by_text) == {title + w for w in windows} | {"short"}
    weights = np.array([len(w) for w in windows], dtype=np.float32)
    mean = (embedder.embed([title + w for w in windows]) * weights[:, None]).sum(axis=0)
    np.testing.assert_allclose(vectors[0], mean / np.linalg.norm(mean), rtol=1e-5)
