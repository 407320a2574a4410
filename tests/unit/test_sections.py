"""Section paths (truthbase.sections): from a table of contents, from the page layout of a real
PDF without an outline (self-rag.pdf) and of one with (its layout headings agree with the
outline: nist-csf-2.0.pdf), and stored with a chunk on SQLite: searched in the title field,
never in the span, and a version 15 index brought to 18 on open."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.layout_pages import lines_page
from truthbase.chunking import chunk_units
from truthbase.config import ChunkingSettings
from truthbase.extract import extract_path
from truthbase.ingest.windows import context_text, embedded_text, with_context
from truthbase.model import ChunkDraft, ExtractedDocument, TocEntry, Unit
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.sections import layout_headings, section_paths, with_section_paths
from truthbase.store import SQLiteStore
from truthbase.store.sqlite import SCHEMA_VERSION

SEED = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "seed"


def _entry(title: str, unit: int, offset: int, depth: int) -> TocEntry:
    return TocEntry(title=title, unit=unit, offset=offset, depth=depth, href="")


def _draft(unit: int, start: int) -> ChunkDraft:
    return ChunkDraft(unit=unit, start=start, end=start + 10, text="x" * 10, rects=())


def test_paths_nest_by_depth_and_follow_each_chunk_start() -> None:
    toc = [
        _entry("2 Method", 1, 0, 0),
        _entry("1 Intro", 0, 50, 0),  # out of order: sorted by position
        _entry("2.1 Data", 1, 400, 1),
        _entry("2.1.1 Cleaning", 2, 0, 2),
        _entry("2.2 Model", 2, 300, 1),
        _entry("3 Results", 3, 0, 0),
    ]
    drafts = [
        _draft(2, 299),
        _draft(0, 0),
        _draft(0, 50),
        _draft(1, 500),
        _draft(2, 0),
        _draft(2, 300),
        _draft(3, 5),
    ]
    assert section_paths(toc, drafts) == [
        "2 Method > 2.1 Data > 2.1.1 Cleaning",  # starts before 2.2's heading
        "",  # before the first entry
        "1 Intro",
        "2 Method > 2.1 Data",
        "2 Method > 2.1 Data > 2.1.1 Cleaning",
        "2 Method > 2.2 Model",  # a sibling replaces 2.1 and its child
        "3 Results",
    ]


def test_layout_headings_keep_outline_order_and_skip_list_items_and_running_headers() -> None:
    header = ("Journal of Tests, Volume 1", 9.0)
    body = ("Plain running text of the page goes on here at body size.", 9.0)
    units = [
        lines_page(0, [header, ("A Study of Sections", 14.0), ("In Long Documents", 14.0), body]),
        lines_page(
            1, [header, ("1 Introduction", 9.0), body, ("1 The model reads the page.", 9.0)]
        ),
        lines_page(2, [header, ("2.1 Out Of Order", 9.0), ("2 Method", 9.0), body]),
        lines_page(3, [header, ("2.1 Data Sets", 9.0), ("7 Totally Wrong Number", 9.0), body]),
    ]
    found = [(e.title, e.unit, e.depth) for e in layout_headings(units)]
    assert found == [
        ("A Study of Sections In Long Documents", 0, 0),  # large, two lines joined
        ("1 Introduction", 1, 0),
        ("2 Method", 2, 0),
        ("2.1 Data Sets", 3, 1),
    ]
    offset = units[3].text.index("2.1 Data Sets")
    assert layout_headings(units)[-1].offset == offset


@cache
def _extracted(name: str) -> ExtractedDocument:
    return extract_path(SEED / name)


@pytest.mark.skipif(not SEED.exists(), reason="needs ../shared/corpus/seed")
def test_self_rag_without_an_outline_gets_its_numbered_headings() -> None:
    document = _extracted("self-rag.pdf")
    assert document.toc == []  # no outline: the layout is all there is
    headings = [(e.title, e.depth) for e in layout_headings(document.units)]
    assert ("3.2.1 TRAINING THE CRITIC MODEL", 2) in headings
    assert ("6 CONCLUSION", 0) in headings
    assert not any("ICLR" in title for title, _ in headings)  # the running header
    drafts = with_section_paths(document, chunk_units(document.units))
    critic = [d for d in drafts if "critic" in d.text and d.section.endswith("CRITIC MODEL")]
    assert critic
    assert critic[0].section == (
        "3 SELF-RAG: LEARNING TO RETRIEVE, GENERATE AND CRITIQUE > 3.2 SELF-RAG TRAINING "
        "> 3.2.1 TRAINING THE CRITIC MODEL"
    )
    for draft in drafts:  # the span is untouched
        assert draft.text == document.units[draft.unit].text[draft.start : draft.end]


@pytest.mark.skipif(not SEED.exists(), reason="needs ../shared/corpus/seed")
def test_layout_headings_agree_with_the_outline_where_there_is_one() -> None:
    document = _extracted("nist-csf-2.0.pdf")
    numbered = [e for e in document.toc if e.title[0].isdigit()]
    assert len(numbered) >= 8
    found = {(e.title, e.unit, e.depth) for e in layout_headings(document.units)}
    assert {(e.title, e.unit, e.depth) for e in numbered} <= found


TEXT = "The critic is trained on reflection tokens. Grapes grow in the valley."


def _indexed() -> IndexedDocument:
    document = ExtractedDocument(
        sha256="a",
        title="A paper",
        path="/a.pdf",
        kind="pdf",
        units=[Unit(index=0, text=TEXT, boxes=[None] * len(TEXT), language="en")],
        extractor_version="t",
        language="en",
    )
    cut = TEXT.index("Grapes")
    chunks = [
        ChunkDraft(unit=0, start=0, end=cut - 1, text=TEXT[: cut - 1], rects=()),
        ChunkDraft(unit=0, start=cut, end=len(TEXT), text=TEXT[cut:], rects=()),
    ]
    chunks[0] = replace(chunks[0], section="3.2 Training Methodology")
    vectors = np.eye(2, 4, dtype=np.float32)
    return IndexedDocument(
        document=document, chunks=chunks, vectors=vectors, embedder=IndexEmbedder("m", 4)
    )


def _match(db: sqlite3.Connection, question: str) -> list[int]:
    rows = db.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts)",
        (build_fts_query(question, languages=["en"]),),
    ).fetchall()
    return [rowid for (rowid,) in rows]


def test_a_section_is_stored_and_searched_with_the_title_not_the_text(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        store.add_document(_indexed())
        chunks = store.chunks([1, 2])
        assert [c.section for c in chunks] == ["3.2 Training Methodology", ""]
        assert chunks[0].text == TEXT[: TEXT.index("Grapes") - 1]  # the span has no heading
    finally:
        store.close()
    db = sqlite3.connect(tmp_path / "s.sqlite")
    try:
        assert _match(db, "methodology") == [1]
        assert (
            db.execute("SELECT rowid FROM chunks_fts WHERE text MATCH 'methodolog'").fetchall()
            == []
        )
    finally:
        db.close()


def test_a_version_15_index_gets_the_section_columns_and_view(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    store = SQLiteStore(path)
    store.close()
    db = sqlite3.connect(path)
    # As version 15 made them: no section columns, the view over title and context only.
    db.execute("DROP VIEW chunks_fts_content")
    db.execute(
        "CREATE VIEW chunks_fts_content AS SELECT c.id AS id, CASE WHEN c.context_terms = '' "
        "THEN d.title_terms ELSE d.title_terms || ' ' || c.context_terms END AS title, "
        "c.terms AS text FROM chunks c JOIN documents d ON d.id = c.doc_id"
    )
    db.execute("ALTER TABLE chunks DROP COLUMN section")
    db.execute("ALTER TABLE chunks DROP COLUMN section_terms")
    db.execute("UPDATE meta SET value = '15' WHERE key = 'schema_version'")
    db.commit()
    db.close()

    store = SQLiteStore(path)
    try:
        store.add_document(_indexed())
        assert store.chunks([1])[0].section == "3.2 Training Methodology"
    finally:
        store.close()
    db = sqlite3.connect(path)
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert int(version[0]) == SCHEMA_VERSION == 22
        assert _match(db, "methodology") == [1]
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    finally:
        db.close()


def test_without_a_section_the_embedded_text_is_what_it_was() -> None:
    # chunking.section_paths off (the default) embeds exactly what ingest embedded before
    assert embedded_text("T", "", "", "body") == context_text("T", "body") == "T\nbody"
    assert embedded_text("T", "", "a | b", "1 | 2") == context_text(
        "T", with_context("a | b", "1 | 2")
    )
    assert embedded_text("T", "2 Method", "", "body") == "T\n2 Method\nbody"
    assert embedded_text("", "2 Method", "", "body") == "2 Method\nbody"


def test_one_page_gets_its_heading_and_the_setting_is_off_by_default() -> None:
    text = "1 Introduction\nThe page says one thing. It says another."
    unit = Unit(index=0, text=text, boxes=[(0.0, 0.0, 5.0, 9.0)] * len(text))
    document = ExtractedDocument(
        sha256="a", title="T", path="/a.pdf", kind="pdf", units=[unit], extractor_version="t"
    )
    drafts = chunk_units(document.units)
    assert [d.section for d in with_section_paths(document, drafts)] == ["1 Introduction"]
    assert ChunkingSettings().section_paths is False
