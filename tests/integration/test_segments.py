"""The segment index and the book tools on the real corpus: Pride and Prejudice (EPUB) and the
seed PDFs of golden_db, on SQLite and PostgreSQL.

The detail question is written for this test from the book's text (chapter 43, the visit to
Pemberley), not taken from dev.json. The LLM picks are scripted transcripts (a remote model's
stand-in).
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.citations import check_output_sources
from tests.helpers.corpus import PRIDE_TITLE
from tests.helpers.pg_server import PgServer
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.llm.client import ChatMessage, LLMError, LLMTimeout
from truthbase.modes import book_tools
from truthbase.records import Segment, StoredSegments, ToolError
from truthbase.segments.index import build_document_segments, ensure_segments
from truthbase.segments.passages import inside_segment, tags_in
from truthbase.segments.summarize import EXTRACTIVE_ID
from truthbase.segments.tools import FULL_SUMMARIES, RELATED_SEGMENTS
from truthbase.store import SQLiteStore, Store
from truthbase.text.matching import normalize

PP_TITLE = PRIDE_TITLE
DETAIL_QUESTION = "What does the housekeeper at Pemberley tell Elizabeth about Mr. Darcy?"
DETAIL_CHAPTER = "Chapter 43"
#: The default settings (no LLM: extractive summaries, search picks related segments).
DEFAULT = Settings()


@pytest.fixture(scope="module")
def segments_db(tmp_path_factory: pytest.TempPathFactory, golden_db: Path) -> Path:
    """A copy of golden_db (this module writes segment indexes into it)."""
    path = tmp_path_factory.mktemp("segments") / "segments.sqlite"
    shutil.copy(golden_db, path)
    return path


@pytest.fixture()
def store(segments_db: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(segments_db)
    yield s
    s.close()


def doc_id_of(store: Store, title_start: str) -> str:
    matches = [d.id for d in store.list_documents() if d.title.startswith(title_start)]
    assert len(matches) == 1, [d.title for d in store.list_documents()]
    return matches[0]


def size(segment: Segment) -> int:
    return sum(p.end - p.start for p in segment.parts)


def test_pride_and_prejudice_segments_follow_its_chapters(
    store: SQLiteStore, embedder: Embedder
) -> None:
    settings = Settings()
    doc_id = doc_id_of(store, PP_TITLE)
    started = time.perf_counter()
    stored = build_document_segments(store, doc_id, embedder, settings.segments, settings.llm)
    seconds = time.perf_counter() - started
    assert seconds < 60, f"building took {seconds:.1f} s"
    segments = stored.segments
    assert 40 <= len(segments) <= 56, len(segments)
    assert all(size(s) <= settings.segments.split_chars for s in segments)
    # Small chapters are batched: the median segment is well above the median chapter (11.5k).
    assert float(np.median([size(s) for s in segments])) >= 12_000
    names = [name for s in segments for name in s.title.split("; ")]
    for chapter in range(1, 62):
        assert names.count(f"Chapter {chapter}") == 1, chapter
    # Reading order, no overlap, every character of every unit covered.
    info = store.document(doc_id)
    assert info is not None
    covered = 0
    previous = (0, 0)
    for segment in segments:
        for part in segment.parts:
            assert (part.unit, part.start) >= previous
            previous = (part.unit, part.end)
            covered += part.end - part.start
    total = sum(len(u.text) for i in range(info.unit_count) if (u := store.unit(doc_id, i)))
    assert covered == total
    assert stored.vectors is not None and stored.vectors.shape == (len(segments), embedder.dim)


def test_every_summary_tag_resolves_to_the_unit_text(
    store: SQLiteStore, embedder: Embedder
) -> None:
    settings = Settings()
    doc_id = doc_id_of(store, PP_TITLE)
    stored = ensure_segments(store, doc_id, embedder, settings.segments, settings.llm)
    units = {i: store.unit(doc_id, i) for i in range(15)}
    for segment in stored.segments:
        assert segment.summarizer == EXTRACTIVE_ID
        spans = tags_in(segment.summary)
        assert 2 <= len(spans) <= settings.segments.summary_sentences, segment.summary
        pieces = [p for p in strip_tags_pieces(segment.summary)]
        assert len(pieces) == len(spans)
        for span, piece in zip(spans, pieces, strict=True):
            assert inside_segment(span, segment)
            unit = units[span.unit]
            assert unit is not None
            assert normalize(piece) == normalize(unit.text[span.start : span.end])


def strip_tags_pieces(summary: str) -> list[str]:
    return [p.strip() for p in re.split(r"\[f\d+-\d+-\d+\]", summary) if p.strip()]


def test_segments_are_cached_per_summarizer(store: SQLiteStore, embedder: Embedder) -> None:
    settings = Settings()
    doc_id = doc_id_of(store, PP_TITLE)
    first = ensure_segments(store, doc_id, embedder, settings.segments, settings.llm)
    started = time.perf_counter()
    again = ensure_segments(store, doc_id, embedder, settings.segments, settings.llm)
    assert time.perf_counter() - started < 2.0
    assert again.segments == first.segments
    # Other cutting rules make a cached index stale: it is rebuilt, and stored (on Alice, small).
    alice = doc_id_of(store, "Alice")
    before = ensure_segments(store, alice, embedder, settings.segments, settings.llm)
    other = Settings(
        segments={"alone_chars": 8_000, "batch_max_chars": 8_000, "batch_min_chars": 5_000}
    )
    rebuilt = ensure_segments(store, alice, embedder, other.segments, other.llm)
    assert len(rebuilt.segments) > len(before.segments)
    assert (
        ensure_segments(store, alice, embedder, other.segments, other.llm).segments
        == rebuilt.segments
    )
    assert (
        ensure_segments(store, alice, embedder, settings.segments, settings.llm).segments
        == before.segments
    )
    forced = ensure_segments(store, alice, embedder, settings.segments, settings.llm, rebuild=True)
    assert forced.segments == before.segments  # deterministic


def test_full_summaries_tool_shows_every_segment_with_sources(
    store: SQLiteStore, embedder: Embedder
) -> None:
    doc_id = doc_id_of(store, PP_TITLE)
    tools = book_tools(DEFAULT, store, embedder, doc_ids=[doc_id])
    output = tools.call(FULL_SUMMARIES, {}, first_n=4)
    stored = ensure_segments(store, doc_id, embedder, DEFAULT.segments, DEFAULT.llm)
    assert output.segment_ids == [f"{doc_id}:{s.index}" for s in stored.segments]
    for segment in stored.segments:
        assert segment.title.replace("&", "&amp;") in output.content
    check_output_sources(store, output, first_n=4)


def test_related_segments_hold_the_chapter_of_a_detail_question(
    store: SQLiteStore, embedder: Embedder
) -> None:
    settings = Settings()
    doc_id = doc_id_of(store, PP_TITLE)
    tools = book_tools(settings, store, embedder, doc_ids=[doc_id])
    started = time.perf_counter()
    output = tools.call(RELATED_SEGMENTS, {"question": DETAIL_QUESTION}, first_n=1)
    seconds = time.perf_counter() - started
    assert tools.last_selection == "search"
    stored = ensure_segments(store, doc_id, embedder, settings.segments, settings.llm)
    by_id = {f"{doc_id}:{s.index}": s for s in stored.segments}
    titles = [by_id[i].title for i in output.segment_ids]
    assert any(DETAIL_CHAPTER in t.split("; ") for t in titles), titles
    assert len(output.segment_ids) <= settings.segments.related_segments
    # Source text, not summaries, within the size cap; the housekeeper's words are in it.
    shown = sum(s.end - s.start for s in output.sources)
    assert shown <= settings.segments.tool_max_chars
    assert "Reynolds" in output.content
    check_output_sources(store, output, first_n=1)
    assert seconds < 30, seconds


def test_the_whole_library_is_in_scope_by_default(store: SQLiteStore, embedder: Embedder) -> None:
    tools = book_tools(DEFAULT, store, embedder)
    output = tools.call(RELATED_SEGMENTS, {"question": "What is the GOVERN function?"})
    assert output.segment_ids
    titles = {s.title for s in output.sources}
    assert any("AI RMF" in t or "Cybersecurity" in t for t in titles), titles
    check_output_sources(store, output, first_n=1)


Reply = str | Exception | Callable[[str], str]


class ScriptedModel:
    """Replies from a script (a remote model's stand-in), recording the requests. A callable
    reply is given the user message."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[list[ChatMessage]] = []

    @property
    def name(self) -> str:
        return "scripted"

    def complete(self, messages: Sequence[ChatMessage], timeout: float) -> str:
        self.requests.append(list(messages))
        reply = self.replies.pop(0) if self.replies else '{"ids": []}'
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(messages[-1]["content"])
        return reply

    def stream(self, messages: Sequence[ChatMessage], timeout: float) -> Iterator[str]:
        raise NotImplementedError


def batch_ids(content: str) -> list[str]:
    return re.findall(r'"id": "(S\d+)"', content)


def test_a_model_picks_segments_in_batches(store: SQLiteStore, embedder: Embedder) -> None:
    doc_id = doc_id_of(store, PP_TITLE)
    segments = ensure_segments(store, doc_id, embedder, DEFAULT.segments, DEFAULT.llm).segments
    settings = Settings(segments={"select_batch_tokens": 4_000, "summarizer": "extractive"})
    model = ScriptedModel(
        [
            'Sure! {"ids": ["S2", "S999", "S2", "bogus"]}',
            LLMError("down"),
            lambda content: f"{batch_ids(content)[-1]} and also S1",
        ]
    )
    tools = book_tools(settings, store, embedder, model=model, doc_ids=[doc_id])
    output = tools.call(RELATED_SEGMENTS, {"question": "Where does Elizabeth meet Wickham?"})
    assert tools.last_selection == "llm"
    assert 3 <= len(model.requests) <= 5  # batches of at most ~4k tokens, at most 5 of them
    seen = [key for r in model.requests for key in batch_ids(r[1]["content"])]
    assert seen == [f"S{i}" for i in range(1, len(seen) + 1)]  # each record once, in order
    assert len(seen) == min(len(segments), len(seen))
    for request in model.requests:
        assert len(request[1]["content"]) <= 4 * 4_000 + 2_000
    assert "[f" not in model.requests[0][1]["content"]  # summaries go without their tags
    third = batch_ids(model.requests[2][1]["content"])[-1]
    expected = [1, int(third[1:]) - 1]  # S2 of the first batch, the third batch's pick
    assert output.segment_ids == [f"{doc_id}:{i}" for i in expected]
    check_output_sources(store, output, first_n=1)


def test_a_model_that_picks_nothing_falls_back_to_search(
    store: SQLiteStore, embedder: Embedder
) -> None:
    doc_id = doc_id_of(store, PP_TITLE)
    settings = Settings(segments={"summarizer": "extractive"})
    model = ScriptedModel([LLMTimeout("timeout")] * 5)
    tools = book_tools(settings, store, embedder, model=model, doc_ids=[doc_id])
    output = tools.call(RELATED_SEGMENTS, {"question": DETAIL_QUESTION})
    assert tools.last_selection == "search"
    assert output.segment_ids
    assert len(model.requests) == 1  # a timeout ends the picking: no second wait


def test_tool_calls_are_validated(store: SQLiteStore, embedder: Embedder) -> None:
    tools = book_tools(DEFAULT, store, embedder)
    names = [s["function"]["name"] for s in tools.schemas()]
    assert names == [RELATED_SEGMENTS, FULL_SUMMARIES]
    for name, arguments in [
        ("read_everything", {}),
        (RELATED_SEGMENTS, {}),
        (RELATED_SEGMENTS, {"question": "  "}),
        (RELATED_SEGMENTS, {"question": 3}),
        (RELATED_SEGMENTS, {"question": "x", "k": 4}),
        (FULL_SUMMARIES, {"question": "x"}),
    ]:
        with pytest.raises(ToolError):
            tools.call(name, arguments)


def test_the_segments_commands(segments_db: Path, store: SQLiteStore) -> None:
    from click.testing import CliRunner

    from truthbase.cli import cli

    runner = CliRunner()
    doc_id = doc_id_of(store, "The NIST Cybersecurity")
    db = ["--db", str(segments_db)]
    built = runner.invoke(cli, [*db, "segments", "build", "--doc", doc_id[:10], "--json"])
    assert built.exit_code == 0, built.output
    assert '"segments": 5' in built.output
    listed = runner.invoke(cli, [*db, "segments", "list", doc_id[:10]])
    assert listed.exit_code == 0, listed.output
    assert "Appendix A. CSF Core" in listed.output
    assert runner.invoke(cli, [*db, "segments", "list", "zzzz"]).exit_code == 2


@pytest.mark.corpus
def test_ingest_builds_segments_when_asked(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tests.helpers.corpus import ROBUSTNESS
    from truthbase.cli import cli

    db = tmp_path / "one.sqlite"
    pdf = ROBUSTNESS / "pdfplumber-scotus-transcript-p1.pdf"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(pdf), "--segments"])
    assert result.exit_code == 0, result.output
    assert "segment index" in result.output
    one = SQLiteStore(db)
    try:
        [doc] = one.list_documents()
        stored = one.segments(doc.id, EXTRACTIVE_ID)
        assert stored is not None and len(stored.segments) == 1
        assert tags_in(stored.segments[0].summary)
    finally:
        one.close()


@pytest.mark.corpus
def test_the_pdf_outline_is_the_toc() -> None:
    from tests.helpers.corpus import SEED
    from truthbase.extract import extract_path

    raptor = extract_path(SEED / "raptor.pdf")
    titles = [e.title for e in raptor.toc]
    assert titles[:4] == ["Introduction", "Related Work", "Methods", "Experiments"]
    for e in raptor.toc:  # each bookmark opens its heading ("4.1 CONTRIBUTION OF THE ...")
        heading = raptor.units[e.unit].text[e.offset : e.offset + len(e.title) + 12]
        assert normalize(e.title) in normalize(heading), (e.title, heading)
    assert extract_path(SEED / "self-rag.pdf").toc == []  # no outline: page ranges


# -- PostgreSQL -------------------------------------------------------------------------------


def test_segment_storage_round_trips_on_both_backends(
    store: SQLiteStore, embedder: Embedder, pg_server: PgServer, segments_db: Path
) -> None:
    from truthbase.store.copy import copy_sqlite_index
    from truthbase.store.postgres import PostgresStore

    doc_id = doc_id_of(store, "raptor")
    settings = Settings()
    built = build_document_segments(store, doc_id, embedder, settings.segments, settings.llm)
    assert len(built.segments) >= 4  # the PDF outline: sections, not page ranges
    assert store.document_toc(doc_id)
    url = pg_server.create_database()
    try:
        pg = PostgresStore(url)
        try:
            copy_sqlite_index(segments_db, pg)
            assert pg.document_toc(doc_id) == store.document_toc(doc_id)
            assert pg.segments(doc_id, EXTRACTIVE_ID) is None
            pg.put_segments(doc_id, EXTRACTIVE_ID, built)
            back = pg.segments(doc_id, EXTRACTIVE_ID)
            assert back is not None
            _same(back, built)
            _same(store.segments(doc_id, EXTRACTIVE_ID) or built, built)
            # Writing again replaces; tools work the same on PostgreSQL.
            pg.put_segments(doc_id, EXTRACTIVE_ID, StoredSegments(built.segments[:2], "b"))
            again = pg.segments(doc_id, EXTRACTIVE_ID)
            assert again is not None and len(again.segments) == 2 and again.vectors is None
            tools = book_tools(settings, pg, embedder, doc_ids=[doc_id])
            output = tools.call(RELATED_SEGMENTS, {"question": "How does RAPTOR cluster text?"})
            check_output_sources(pg, output, first_n=1)
        finally:
            pg.close()
    finally:
        pg_server.drop_database(url)


def _same(a: StoredSegments, b: StoredSegments) -> None:
    assert a.segments == b.segments
    assert a.builder == b.builder and a.embedder == b.embedder
    assert a.vectors is not None and b.vectors is not None
    assert np.array_equal(a.vectors, b.vectors)
