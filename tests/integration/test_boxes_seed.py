"""Packed glyph boxes over real pages: every page of the seed corpus (and a /Rotate 90 page),
packed and read back, gives the boxes that the float32 rows of schema 14 gave, bit for bit, so
the highlight rects of every chunk and every sentence are the same; and both backends' stored
seed index reads back those boxes."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.boxes import float32_rows
from tests.helpers.corpus import ROBUSTNESS, SEED
from truthbase.chunking import chunk_unit
from truthbase.extract import extract_pdf
from truthbase.geometry import span_line_rects
from truthbase.model import ExtractedDocument
from truthbase.store.boxes import decode_boxes, encode_boxes
from truthbase.text.sentences import split_sentences

pytestmark = pytest.mark.corpus

PDFS = [
    *sorted(SEED.glob("*.pdf")),
    ROBUSTNESS / "pdfplumber-nics-background-checks-2015-11-rotated.pdf",
]


@cache
def extracted(path: Path) -> ExtractedDocument:
    return extract_pdf(path)


def test_every_page_packs_bit_for_bit_with_the_same_highlights() -> None:
    packed_bytes = float32_bytes = spans = 0
    for path in PDFS:
        for unit in extracted(path).units:
            before = decode_boxes(float32_rows(unit.boxes), unit.text)  # what schema 14 read
            blob = encode_boxes(unit.text, unit.boxes)
            after = decode_boxes(blob, unit.text)
            assert after == before, (path.name, unit.index)
            packed_bytes += len(blob or b"")
            float32_bytes += 16 * len(unit.text) if blob else 0
            cut = [(c.start, c.end) for c in chunk_unit(unit)] + split_sentences(unit.text)
            for start, end in cut:
                assert span_line_rects(unit.text, after, start, end) == span_line_rects(
                    unit.text, before, start, end
                ), (path.name, unit.index, start, end)
            spans += len(cut)
    assert spans > 3000  # every chunk and sentence of 4 papers and the rotated page
    assert packed_bytes * 6 < float32_bytes, (packed_bytes, float32_bytes)


def test_the_stored_seed_index_reads_back_the_extracted_boxes(any_seed_store: Any) -> None:
    for path in sorted(SEED.glob("*.pdf")):
        document = extracted(path)
        for unit in document.units:
            stored = any_seed_store.unit(document.sha256, unit.index)
            assert stored is not None and stored.text == unit.text
            assert stored.boxes == decode_boxes(float32_rows(unit.boxes), unit.text)
