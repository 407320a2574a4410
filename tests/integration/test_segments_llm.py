"""Segment summaries and the related-segments pick by a real model: SmolLM2-135M behind
llama.cpp's OpenAI-compatible server (tests/helpers/llm_server.py), on Alice in Wonderland.

A model this small may write no valid tag or pick no known id; the guarantees hold either way:
a summary keeps only tags inside its segment (else the extractive summary stands in and says
so), and the tool's output shows only passages that resolve to verified citations.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.citations import check_output_sources
from tests.helpers.corpus import EPUB
from tests.helpers.llm_server import LlamaServer, llama_cpp_missing
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.llm.client import OpenAIChatModel
from truthbase.modes import book_tools
from truthbase.segments.build import build_segments
from truthbase.segments.passages import inside_segment, tags_in
from truthbase.segments.summarize import EXTRACTIVE_ID, summarize_segments
from truthbase.segments.tools import RELATED_SEGMENTS
from truthbase.store import SQLiteStore

MISSING = llama_cpp_missing()
pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
    pytest.mark.slow,
    pytest.mark.corpus,
]

ALICE = EPUB / "alice-in-wonderland.epub"
#: Pieces of about 1.5k characters: a short prompt for a small model on a shared CPU.
SMALL = {
    "alone_chars": 1_000,
    "split_chars": 2_000,
    "range_min_chars": 1_000,
    "range_max_chars": 2_000,
    "batch_min_chars": 500,
    "batch_max_chars": 1_000,
}


@pytest.fixture(scope="module")
def alice_store(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path_factory.mktemp("alice") / "alice.sqlite")
    summary = ingest_paths([ALICE], store, embedder, IngestOptions())
    assert summary.count("ingested") == 1
    yield store
    store.close()


def smol(llama: LlamaServer, max_tokens: int = 160) -> OpenAIChatModel:
    return OpenAIChatModel(
        llama.model, base_url=llama.base_url, api_key="unused", max_tokens=max_tokens
    )


def test_smollm2_summaries_keep_only_tags_inside_their_segment(
    llama: LlamaServer, alice_store: SQLiteStore
) -> None:
    [doc] = alice_store.list_documents()
    texts = [u.text for i in range(doc.unit_count) if (u := alice_store.unit(doc.id, i))]
    settings = Settings(segments=SMALL)
    segments = build_segments(doc.id, texts, alice_store.document_toc(doc.id), settings.segments)
    first = [s for s in segments if s.title.startswith("Down The Rabbit-Hole (1/")]
    assert len(first) == 1 and len(first[0].parts) == 1
    out = summarize_segments(
        first,
        texts,
        max_sentences=2,
        model=smol(llama, max_tokens=100),
        model_id=llama.model,
        timeout=180,
        passage_chars=400,
    )
    for segment in out:
        assert segment.summarizer in (EXTRACTIVE_ID, f"llm:{llama.model}")
        spans = tags_in(segment.summary)
        assert spans, segment.summary
        assert all(inside_segment(span, segment) for span in spans), segment.summary


def test_smollm2_picks_related_segments_or_search_does(
    llama: LlamaServer, alice_store: SQLiteStore, embedder: Embedder
) -> None:
    settings = Settings(segments={"summarizer": "extractive"})  # 3 segments, one short batch
    tools = book_tools(settings, alice_store, embedder, model=smol(llama, max_tokens=40))
    output = tools.call(RELATED_SEGMENTS, {"question": "Who is sitting on the mushroom?"})
    assert tools.last_selection in ("llm", "search")
    assert output.segment_ids
    check_output_sources(alice_store, output, first_n=1)
