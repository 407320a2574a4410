"""Ruled tables kept as rows on real PDFs, and table chunks stored and returned on both backends."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from tests.helpers.corpus import ROBUSTNESS, SEED, SHARED
from tests.helpers.pg_server import Backend
from truthbase.answer import ExtractiveAnswerer, Source
from truthbase.chunking import chunk_units
from truthbase.config import ExtractiveSettings
from truthbase.embed import default_embedder
from truthbase.extract import extract_pdf
from truthbase.extract.tables import CELL_SEPARATOR
from truthbase.model import ExtractedDocument
from truthbase.records import IndexedDocument, IndexEmbedder
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.text.language import assign_languages

pytestmark = pytest.mark.corpus

CA_WARN = ROBUSTNESS / "pdfplumber-ca-warn-report.pdf"


@cache
def _extract(path: Path) -> ExtractedDocument:
    return extract_pdf(path)


def _ca_warn() -> ExtractedDocument:
    return _extract(CA_WARN)


def _row_lines(document: ExtractedDocument, page: int) -> list[str]:
    unit = document.units[page - 1]
    return [unit.text[s:e] for table in unit.tables for s, e in table.rows]


def test_ca_warn_rows_have_their_cells_in_column_order() -> None:
    document = _ca_warn()
    assert all(unit.tables for unit in document.units)
    page1 = _row_lines(document, 1)
    assert page1[0].startswith("Notice Date | Effective | Received | Company | City")
    assert document.units[0].tables[0].header_rows == 1
    assert sum(len(_row_lines(document, p)) for p in range(1, 17)) > 600
    # pdfium's own order puts the Layoff/Closure column one row off on page 2: "Closure
    # Temporary" belongs to Presse LLC (85), not to Sears (17), as the page shows.
    page2 = _row_lines(document, 2)
    assert (
        "07/21/2015 | 09/15/2015 | 07/23/2015 | Presse LLC dba Cafe de la Presse and | "
        "San Francisco | 85 | Closure Temporary"
    ) in page2
    assert (
        "07/10/2015 | 10/04/2015 | 07/24/2015 | Sears Holdings Corporation | Cupertino | 17 | "
        "Closure Permanent"
    ) in page2
    # Every data row of the listing has its 7 cells.
    listing = [line for line in page2 if line[:2].isdigit()]
    assert len(listing) == 43
    assert all(len(line.split(CELL_SEPARATOR)) == 7 for line in listing)


def test_ca_warn_later_pages_know_the_header_from_page_one() -> None:
    document = _ca_warn()
    first = document.units[0].tables[0].header
    for unit in document.units[1:14]:
        table = unit.tables[0]
        assert table.header == first and table.header_rows == 0


def test_cell_characters_keep_pdfiums_boxes() -> None:
    document = _ca_warn()
    unit = document.units[1]
    pdf = pdfium.PdfDocument(CA_WARN)
    try:
        textpage = pdf[1].get_textpage()
        glyphs: dict[tuple[float, ...], str] = {}
        for i in range(textpage.count_chars()):
            ch = chr(pdfium.raw.FPDFText_GetUnicode(textpage, i))
            if not ch.isspace():
                box = textpage.get_charbox(i, loose=True)
                glyphs[tuple(round(v, 3) for v in box)] = ch
        textpage.close()
    finally:
        pdf.close()
    # Every character of the page that has a box is the pdfium glyph drawn in that box.
    boxed = [(ch, box) for ch, box in zip(unit.text, unit.boxes, strict=True) if box is not None]
    assert len(boxed) > 2000
    for ch, box in boxed:
        if not ch.isspace():
            assert glyphs.get(tuple(round(v, 3) for v in box)) == ch
    # A row's cells sit on one line of the page: their glyph boxes share the row's band.
    row = "Presse LLC dba Cafe de la Presse and | San Francisco | 85 | Closure Temporary"
    at = unit.text.index(row)
    bands = {round(box[1]) for box in unit.boxes[at : at + len(row)] if box is not None}
    assert len(bands) == 1
    # The separators are synthesized.
    sep = unit.text.index(CELL_SEPARATOR)
    assert unit.boxes[sep : sep + len(CELL_SEPARATOR)] == [None] * len(CELL_SEPARATOR)


def test_golden_table_cells_stand_together_in_one_row_line() -> None:
    golden = json.loads((SHARED / "golden" / "capabilities-dev.json").read_text("utf-8"))
    checked = 0
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            cells = evidence.get("cells")
            if not cells:
                continue
            document = _extract(SHARED / golden["documents"][evidence["doc"]]["path"])
            lines = _row_lines(document, evidence["page"])
            assert any(all(cell in line for cell in cells) for line in lines), question["id"]
            checked += 1
    assert checked >= 8


def test_rotated_nics_table_reads_in_its_upright_frame() -> None:
    document = extract_pdf(ROBUSTNESS / "pdfplumber-nics-background-checks-2015-11-rotated.pdf")
    lines = _row_lines(document, 1)
    alabama = next(line for line in lines if line.startswith("Alabama | "))
    assert alabama.split(CELL_SEPARATOR)[:4] == ["Alabama", "18,870", "23,022", "22,650"]
    assert alabama.endswith("| 71,137")


def test_table_chunks_are_stored_and_returned_with_kind_and_context(backend: Backend) -> None:
    document = extract_pdf(CA_WARN)  # not the cached one: this test cuts its units
    document.units = document.units[:3]
    assign_languages(document)  # as ingest does: the full-text terms are made in its language
    drafts = chunk_units(document.units, max_chars=800, overlap=0.15)
    assert {d.kind for d in drafts} >= {"table"}
    store = backend.open()
    try:
        store.add_document(
            IndexedDocument(
                document=document,
                chunks=drafts,
                vectors=np.eye(len(drafts), 8, dtype=np.float32) + 0.01,
                embedder=IndexEmbedder("test", 8),
            )
        )
        hits = store.fts_search(build_fts_query("Torrance"), 10, 1.0)
        chunks = store.chunks([h.chunk_id for h in hits])
        assert chunks and all(c.kind == "table" for c in chunks)
        torrance = next(c for c in chunks if "Torrance | 3000" in c.text)
        assert torrance.context.startswith("Notice Date | Effective")
        assert "Notice Date" not in torrance.text  # the header is context, not the span
        # The column names are searched with the chunk: "Received" is in no row of page 2.
        page2 = {h.chunk_id for h in store.fts_search(build_fts_query("Received"), 50, 1.0)}
        assert any(c.unit == 1 for c in store.chunks(sorted(page2)))
        every = store.chunks(sorted(h.chunk_id for h in store.fts_search("2015", 500, 1.0)))
        assert len(every) == len(drafts)
        assert all((c.kind == "table") == (CELL_SEPARATOR in c.text) for c in every)
        assert [(c.kind, c.context) for c in every] == [(d.kind, d.context) for d in drafts]
    finally:
        store.close()


def test_figures_and_charts_are_not_tables() -> None:
    # RAPTOR's figure 1 (boxes and arrows) and GeoTopo's plotted functions over gridlines.
    raptor = _extract(SEED / "raptor.pdf")
    assert not raptor.units[1].tables
    assert [u.index + 1 for u in raptor.units if u.tables] == [17, 19, 21]
    geotopo = _extract(ROBUSTNESS / "pypdf-GeoTopo-komprimiert.pdf")
    assert not geotopo.units[30].tables and not geotopo.units[34].tables
    csf = _extract(SEED / "nist-csf-2.0.pdf")
    assert [u.index + 1 for u in csf.units if u.tables] == [20, 29, 30]
    (table,) = csf.units[19].tables
    first = csf.units[19].text[slice(*table.rows[0])]
    assert first == "Function | Category | Category Identifier"  # empty grid columns dropped


@pytest.mark.parametrize("read_with_table", [True, False])
def test_a_question_naming_a_row_cites_the_row_not_the_tables_caption(
    read_with_table: bool,
) -> None:
    # The NICS table: its caption and column names in one chunk, the Kentucky row in another
    # (whose context is the caption). Read alone, the row holds one of the question's words
    # and the caption four, so the caption was cited as the answer (a set nobody tuned on).
    document = extract_pdf(ROBUSTNESS / "pdfplumber-nics-background-checks-2015-11-rotated.pdf")
    assign_languages(document)
    drafts = chunk_units(document.units, max_chars=800, overlap=0.15)
    title = "NICS Firearm Background Checks November - 2015"
    picked = [
        next(d for d in drafts if d.text.startswith(title)),
        next(d for d in drafts if "\nKentucky | " in d.text or d.text.startswith("Kentucky | ")),
    ]
    sources = [
        Source(
            n=n,
            doc_id="n" * 64,
            title="nics",
            unit=d.unit,
            start=d.start,
            end=d.end,
            text=d.text,
            rects=(),
            context=d.context,
        )
        for n, d in enumerate(picked, 1)
    ]
    settings = ExtractiveSettings(
        threshold=0.0, weak_threshold=0.0, max_sentences=1, rows_read_with_table=read_with_table
    )
    answerer = ExtractiveAnswerer(default_embedder(), settings)
    question = "How many permit checks did Kentucky run in the NICS November 2015 statistics?"
    chosen = answerer.select(question, sources).chosen
    assert len(chosen) == 1
    if read_with_table:
        assert chosen[0].text.startswith("Kentucky | 264,140 |")
    else:
        assert chosen[0].text == title
    # A question of two parts reads the rows as one part does: each part's choice counts the
    # row's table words too (they were subtracted back out once).
    both = (
        "How many permit checks did Kentucky run in the NICS November 2015 statistics, and "
        "how many permit checks did Kansas run?"
    )
    firsts = {c.text.split(" | ")[0] for c in answerer.select(both, sources).chosen}
    assert ("Kentucky" in firsts) is read_with_table
