"""An OCR citation in the real viewer: the golden OCR quotes on the scanned, skewed page with
/Rotate 90 (ocrmypdf-rotated_skew.pdf) are highlighted where the stored rects say, at 50%, 100%
and 200%, and every highlight box lies on the ink of the rendered scan (as the placement test
checks for text PDFs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.helpers.browser import (
    ARTIFACTS,
    READ_BOXES,
    WAIT_READY,
    LiveServer,
    ink_shares,
    max_error,
    to_viewport,
)
from tests.helpers.corpus import ROBUSTNESS
from tests.helpers.ocr import need_tesseract
from truthbase.embed import HashingEmbedder
from truthbase.geometry import span_line_rects
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.store import SQLiteStore
from truthbase.text.matching import find_quote

pytestmark = pytest.mark.corpus

SCAN = ROBUSTNESS / "ocrmypdf-rotated_skew.pdf"
QUOTES = (  # capabilities-dev.json c001 and c003, as printed on the page
    "Each of the 100 sequences contains 32 simultaneous, polyphonic tracks.",
    "disk drive stores complex songs in seconds and holds over 110,000 notes per disk!",
)
ZOOMS = (0.5, 1.0, 2.0)
TOLERANCE_PX = 0.05
MIN_INK = 0.02


@pytest.fixture(scope="module")
def scan_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_tesseract()
    path = tmp_path_factory.mktemp("ocr") / "ocr.sqlite"
    store = SQLiteStore(path)
    try:
        summary = ingest_paths([SCAN], store, HashingEmbedder(), IngestOptions())
    finally:
        store.close()
    assert not summary.failed and summary.outcomes[0].ocr_pages == 1
    return path


@pytest.fixture(scope="module")
def scan_server(scan_db: Path) -> Iterator[LiveServer]:
    with LiveServer(scan_db) as server:
        yield server


def test_an_ocr_citation_is_highlighted_on_the_ink(
    page: Any, scan_server: LiveServer, scan_db: Path
) -> None:
    store = SQLiteStore(scan_db)
    try:
        (doc,) = store.list_documents()
        unit = store.unit(doc.id, 0)
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None and unit.text_source == "ocr"
    assert unit.geometry.rotation == 90
    worst = 0.0
    for quote in QUOTES:
        found = find_quote(quote, unit.text)
        assert found is not None, quote
        start, end = found[0][0], found[-1][1]
        rects = span_line_rects(unit.text, unit.boxes, start, end)
        assert rects
        query = {"doc": doc.id, "page": 1, "start": start, "end": end}
        page.goto(f"{scan_server.url}/view?{urlencode({**query, 'zoom': ZOOMS[0]})}")
        for i, zoom in enumerate(ZOOMS):
            if i:
                page.evaluate("(z) => window.truthbaseViewer.setZoom(z)", zoom)
            page.wait_for_function(WAIT_READY)
            drawn = page.evaluate(READ_BOXES)
            assert not drawn["badge"], drawn["badge"]  # not "approximate": the text matches
            strong = [b for b in drawn["boxes"] if b["kind"] == "strong"]
            expected = [to_viewport(r, unit.geometry, zoom) for r in rects]
            error = max_error(strong, expected)
            worst = max(worst, error)
            assert error <= TOLERANCE_PX, f"{quote[:30]} at {zoom:.0%}: {error:.4f} px"
            if zoom == 1.0:
                shares = ink_shares(page)
                assert shares and all(s >= MIN_INK for s in shares), (quote[:30], shares)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-ocr.png"))
    print(f"\nOCR placement: {len(QUOTES)} spans, max error {worst:.5f} px")
