"""Ingest gives the embedder a document's texts in groups (what one call holds is bounded, not
the whole document): the sentence windows go :data:`truthbase.ingest.EMBED_GROUP` at a time and
get the vectors of one call over all of them; an embedder failing in a later group leaves
nothing of the document in the store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from truthbase.embed import Vectors
from truthbase.embed._fake import HashingEmbedder
from truthbase.ingest import IngestOptions, write_document
from truthbase.ingest import embedding as ingest
from truthbase.model import ExtractedDocument, Unit
from truthbase.store import SQLiteStore


class Counting(HashingEmbedder):
    """A hashing embedder that records how many texts each call got; fails on call ``fail_at``."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__(dim=16)
        self.calls: list[int] = []
        self.fail_at = fail_at

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise RuntimeError("embedder failed mid-document")
        return super().embed(texts)


def _book(pages: int) -> ExtractedDocument:
    units = []
    for i in range(pages):
        text = " ".join(
            f"Sentence {i}-{j} says something about topic {j % 7} on page {i}." for j in range(40)
        )
        units.append(Unit(index=i, text=text, boxes=[None] * len(text)))
    return ExtractedDocument(
        sha256="b" * 64, title="Book", path="/book.epub", kind="epub", units=units,
        extractor_version="t",
    )  # fmt: skip


def test_windows_are_embedded_in_groups_with_the_vectors_of_one_call() -> None:
    texts = [f"window {i} " + "word " * (i % 23) for i in range(700)]
    texts += texts[:50]  # overlapping chunks repeat windows: each distinct text embedded once
    grouped = Counting()
    vectors = ingest._embed_distinct(grouped, texts)
    assert max(grouped.calls) <= ingest.EMBED_GROUP and sum(grouped.calls) == 700
    assert len(grouped.calls) == -(-700 // ingest.EMBED_GROUP)
    np.testing.assert_array_equal(vectors, HashingEmbedder(dim=16).embed(texts))


def test_a_document_reaches_the_embedder_in_groups(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "g.sqlite")
    embedder = Counting()
    indexed = ingest.index_document(_book(30), embedder, IngestOptions(), screen=None)
    write_document(store, indexed)
    assert (
        len(indexed.chunks) > 0 and sum(embedder.calls) > ingest.EMBED_GROUP
    )  # more than one group
    assert max(embedder.calls) <= ingest.EMBED_GROUP
    assert store.has_document("b" * 64)
    store.close()


def test_a_failure_in_a_later_group_stores_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "f.sqlite")
    with pytest.raises(RuntimeError, match="mid-document"):
        write_document(
            store,
            ingest.index_document(_book(30), Counting(fail_at=3), IngestOptions(), screen=None),
        )
    assert not store.has_document("b" * 64)
    assert store.counts()["documents"] == 0
    store.close()
