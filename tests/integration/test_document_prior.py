"""The document prior on a real two-manual library (retrieve/documents.py), on both backends.

Two LaTeX manuals of the shared library that share their vocabulary: euler (the Euler maths
fonts) and unicode-math (its title: "Experimental Unicode mathematical typesetting: The
unicode-math package"). A question about unicode-math's fonts reaches euler's page on the Euler
Roman fonts first by its words alone; the lists agree on unicode-math, and the prior puts its
passages first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.corpus import CORPUS
from truthbase.config import RetrievalSettings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_file
from truthbase.retrieve.documents import DOCUMENT_ARM
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore, Store, open_store

pytestmark = pytest.mark.corpus

TEXLIVE = CORPUS / "library" / "texlive"
EULER = TEXLIVE / "euler" / "euler.pdf"
UNICODE_MATH = TEXLIVE / "unicode-math" / "unicode-math.pdf"
QUESTION = "Which fonts replace the italic letters in unicode-math?"


@pytest.fixture(scope="module")
def library_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    db = tmp_path_factory.mktemp("prior") / "library.sqlite"
    store = SQLiteStore(db)
    try:
        for path in (EULER, UNICODE_MATH):
            outcome = ingest_file(path, store, embedder, IngestOptions())
            assert outcome.status == "ingested", outcome
    finally:
        store.close()
    return db


@pytest.fixture(scope="module", params=("sqlite", "postgres"))
def store(
    request: pytest.FixtureRequest, library_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    if request.param == "sqlite":
        opened: Store = SQLiteStore(library_db)
        yield opened
        opened.close()
        return
    from tests.helpers.pg_server import copy_into_postgres, shared_server
    from truthbase.config import Settings

    url = copy_into_postgres(library_db)
    opened = open_store(
        Settings(db=tmp_path_factory.mktemp("pg") / "unused.sqlite", database_url=url)
    )
    yield opened
    opened.close()
    shared_server().drop_database(url)


def test_the_prior_puts_the_document_asked_about_first(store: Store, embedder: Embedder) -> None:
    # The fusion before the late-interaction list was weighed 1: under today's defaults that
    # list alone already puts unicode-math first for this question, so the premise (words
    # alone mislead) needs the lighter late list; the prior's weight is the default.
    on = RetrievalSettings(late_weight=0.5)
    assert on.document_prior_weight > 0
    off = on.model_copy(update={"document_prior_weight": 0.0})
    without = search(store, embedder, QUESTION, off, k=8).hits
    # the premise: by their words alone, a passage of the other manual ranks first
    assert without[0].document_title == "euler"
    assert all(DOCUMENT_ARM not in hit.arm_ranks for hit in without)

    hits = search(store, embedder, QUESTION, on, k=8).hits
    assert "unicode-math" in hits[0].document_title
    assert hits[0].arm_ranks[DOCUMENT_ARM] == 1
    ranks = {hit.document_title: hit.arm_ranks[DOCUMENT_ARM] for hit in hits}
    assert ranks["euler"] == 2 and len(ranks) == 2
    # each hit's score under the document list is its document's score
    scores = {hit.document_title: hit.arm_scores[DOCUMENT_ARM] for hit in hits}
    assert scores[hits[0].document_title] > scores["euler"] > 0
    # a prior moves passages, it finds none: every hit with it was a candidate without it
    wider = {hit.chunk.id for hit in search(store, embedder, QUESTION, off, k=100).hits}
    assert {hit.chunk.id for hit in hits} <= wider
    # more of the document asked about among the sources
    asked = [hit for hit in hits if "unicode-math" in hit.document_title]
    assert len(asked) > sum("unicode-math" in hit.document_title for hit in without)
    # and the product's defaults find the document asked about first
    first = search(store, embedder, QUESTION, RetrievalSettings(), k=8).hits[0]
    assert "unicode-math" in first.document_title
