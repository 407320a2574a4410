"""Token codes on real indexes (a real PDF, the bundled model, a real SQLite file and a real
PostgreSQL): an index made with ``chunking.token_projection`` records the shipped projection
and stores a third of the bytes of every dimension's sign (the default), for the same token
rows; its late-interaction list finds the chunk a sentence comes from; an index of signs (one
written before codes were recorded among them) keeps signs for every document added to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.pg_server import Backend
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder, TokenEmbedder
from truthbase.embed.token_code import PCA_CODE, token_code
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.records import SIGN_CODE, SearchHit
from truthbase.retrieve.hybrid import LATE_ARM, search
from truthbase.retrieve.late import late_ranking, late_scores, query_rows
from truthbase.store import SQLiteStore, Store

PAPER = ROBUSTNESS / "pdfminer-naacl06-shinyama.pdf"  # 8 pages, ~50 chunks of prose
OTHER = ROBUSTNESS / "pdfminer-pagelabels.pdf"

pytestmark = pytest.mark.corpus

SIGNS_ONLY = IngestOptions()  # the default
PROJECTED = IngestOptions(chunking=ChunkingSettings(token_projection=True))


def _all_signs(store: Store) -> dict[int, bytes]:
    return store.token_signs(range(1, 10_000))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_a_new_index_stores_the_projection_a_third_of_the_bytes_for_the_same_rows(
    backend: Backend, tmp_path: Path, embedder: Embedder
) -> None:
    signs_store = SQLiteStore(tmp_path / "signs.sqlite")
    store = backend.open()
    try:
        assert ingest_file(PAPER, store, embedder, PROJECTED).status == "ingested"
        assert ingest_file(PAPER, signs_store, embedder, SIGNS_ONLY).status == "ingested"
        index, signs_index = store.index_embedder(), signs_store.index_embedder()
        assert index is not None and signs_index is not None
        assert (index.token_code, index.token_bits) == (PCA_CODE, 128)
        assert (signs_index.token_code, signs_index.token_bits) == (SIGN_CODE, 384)
        projected, signs = _all_signs(store), _all_signs(signs_store)
        assert len(projected) == len(signs) > 30
        # the same chunks, the same token rows: 16 bytes a row against 48
        assert sorted(map(len, projected.values())) == sorted(len(b) // 3 for b in signs.values())
        assert all(len(blob) % 16 == 0 for blob in projected.values())
        assert any(LATE_ARM in hit.arm_ranks for hit in _hits(store, embedder))
    finally:
        store.close()
        signs_store.close()


def _hits(store: Store, embedder: Embedder) -> list[SearchHit]:
    question = "Which layout analysis does the paper use for the documents?"
    return list(search(store, embedder, question, RetrievalSettings()).hits)


def test_the_projected_late_list_finds_the_chunk_a_sentence_comes_from(
    tmp_path: Path, embedder: Embedder
) -> None:
    assert isinstance(embedder, TokenEmbedder)
    store = SQLiteStore(tmp_path / "index.sqlite")
    try:
        ingest_file(PAPER, store, embedder, PROJECTED)
        index = store.index_embedder()
        assert index is not None and index.token_code == PCA_CODE
        code = token_code(index.token_code, index.dim)
        blobs = _all_signs(store)
        chunks = [c for c in store.chunks(sorted(blobs)) if len(c.text) > 400][:20]
        assert len(chunks) == 20
        found = 0
        for chunk in chunks:
            # a sentence from the middle of the chunk, not its opening words
            words = chunk.text.split()
            middle = " ".join(words[len(words) // 3 : len(words) // 3 + 14])
            _, tokens = embedder.embed_with_tokens([middle])
            assert tokens is not None
            scores = late_scores(code.query(query_rows(tokens[0])), blobs, code.bits)
            found += late_ranking(scores)[0] == chunk.id
        assert found >= 18, f"{found} of 20 chunks ranked first for their own words"
    finally:
        store.close()


def test_an_index_of_signs_keeps_signs_for_every_document_added(
    tmp_path: Path, embedder: Embedder
) -> None:
    db = tmp_path / "old.sqlite"
    store = SQLiteStore(db)
    try:
        assert ingest_file(PAPER, store, embedder, SIGNS_ONLY).status == "ingested"
    finally:
        store.close()
    # An index written before token codes were recorded: no token_code in its meta table.
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'token_code'")
    store = SQLiteStore(db)
    try:
        index = store.index_embedder()
        assert index is not None and index.token_code == SIGN_CODE
        first = _all_signs(store)
        # options asking for the projection add to it in its own code
        assert ingest_file(OTHER, store, embedder, PROJECTED).status == "ingested"
        added = {k: v for k, v in _all_signs(store).items() if k not in first}
        assert added and all(len(blob) % 48 == 0 for blob in added.values())
        assert store.index_embedder() == index
        assert any(LATE_ARM in hit.arm_ranks for hit in _hits(store, embedder))
    finally:
        store.close()
