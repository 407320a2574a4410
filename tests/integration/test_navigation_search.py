"""Search ranks a table of contents after the passages it points to (retrieval
.demote_navigation), on the real seed index: NIST CSF 2.0's contents page names every section
and figure, so a query of those names found it first."""

from __future__ import annotations

from pathlib import Path

import pytest

from truthbase.config import RetrievalSettings
from truthbase.embed import Embedder
from truthbase.retrieve.hybrid import search
from truthbase.store import SQLiteStore
from truthbase.text.navigation import is_navigation

pytestmark = pytest.mark.corpus

QUERY = "CSF Core structure figure"


def test_the_contents_page_gives_its_place_to_the_pages_it_names(
    seed_db: Path, embedder: Embedder
) -> None:
    store = SQLiteStore(seed_db)
    try:
        before = search(store, embedder, QUERY, RetrievalSettings(demote_navigation=False), k=8)
        assert is_navigation(before.hits[0].chunk.text)  # the contents page, first
        after = search(store, embedder, QUERY, RetrievalSettings(), k=8)
        pointing = [is_navigation(h.chunk.text) for h in after.hits]
        assert len(after.hits) == 8 and not pointing[0]
        assert pointing == sorted(pointing)  # any contents chunk after every other hit
        # The places went to the chunks ranked next, in their order (without the feedback
        # list, whose words the rule also takes from other chunks, so the fused lists are equal).
        plain = RetrievalSettings(prf_weight=0.0, demote_navigation=False)
        before = search(store, embedder, QUERY, plain, k=8)
        after = search(
            store, embedder, QUERY, plain.model_copy(update={"demote_navigation": True}), k=8
        )
        assert any(is_navigation(h.chunk.text) for h in before.hits)
        kept = [h.chunk.id for h in before.hits if not is_navigation(h.chunk.text)]
        assert [h.chunk.id for h in after.hits][: len(kept)] == kept
    finally:
        store.close()
