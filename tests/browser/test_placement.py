"""Highlight placement in the real viewer: every PDF evidence quote of dev.json at 50%, 100% and
200%, and a page with its own /Rotate; the drawn boxes are compared with the stored rects put
through the test's own PDF-to-viewport arithmetic (helpers.to_viewport, no pdf.js)."""

from __future__ import annotations

import json
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
from tests.helpers.corpus import GOLDEN_DEV, ROBUSTNESS, SHARED
from truthbase.embed import Embedder
from truthbase.geometry import span_line_rects
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.model import Unit
from truthbase.store import SQLiteStore
from truthbase.text.matching import find_quote

pytestmark = [pytest.mark.slow, pytest.mark.corpus]

ZOOMS = (0.5, 1.0, 2.0)
TOLERANCE_PX = 0.05
MIN_INK = 0.02  # share of dark pixels a box over a line of text has at the least
ROTATED = ROBUSTNESS / "pdfplumber-nics-background-checks-2015-11-rotated.pdf"


def _evidence_spans(db: Path) -> list[dict[str, Any]]:
    """(doc id, page, start, end, unit) of every PDF evidence quote of dev.json."""
    golden = json.loads(GOLDEN_DEV.read_text("utf-8"))
    store = SQLiteStore(db)
    try:
        by_name = {Path(d.path).name: d.id for d in store.list_documents()}
        spans: list[dict[str, Any]] = []
        missing: list[str] = []
        for question in golden["questions"]:
            for evidence in question.get("evidence", []):
                name = Path(golden["documents"][evidence["doc"]]["path"]).name
                if not name.endswith(".pdf"):
                    continue
                doc_id = by_name[name]
                unit = store.unit(doc_id, evidence["page"] - 1)
                assert unit is not None
                found = find_quote(evidence["quote"], unit.text)
                if found is None:
                    missing.append(f"{question['id']}: {evidence['quote'][:60]}")
                    continue
                spans.append(
                    {
                        "id": question["id"],
                        "doc": doc_id,
                        "page": evidence["page"],
                        "start": found[0][0],
                        "end": found[-1][1],
                        "unit": unit,
                    }
                )
    finally:
        store.close()
    assert not missing, missing
    return spans


def _measure(
    page: Any, server: LiveServer, span: dict[str, Any], results: dict[float, float]
) -> None:
    unit: Unit = span["unit"]
    assert unit.geometry is not None
    rects = span_line_rects(unit.text, unit.boxes, span["start"], span["end"])
    assert rects, span["id"]
    query = {k: span[k] for k in ("doc", "page", "start", "end")}
    page.goto(f"{server.url}/view?{urlencode({**query, 'zoom': ZOOMS[0]})}")
    for i, zoom in enumerate(ZOOMS):
        if i:
            page.evaluate("(z) => window.truthbaseViewer.setZoom(z)", zoom)
        page.wait_for_function(WAIT_READY)
        drawn = page.evaluate(READ_BOXES)
        assert drawn["page"] == span["page"]
        assert not drawn["badge"], f"{span['id']}: {drawn['badge']}"
        strong = [b for b in drawn["boxes"] if b["kind"] == "strong"]
        expected = [to_viewport(r, unit.geometry, zoom) for r in rects]
        error = max_error(strong, expected)
        results[zoom] = max(results.get(zoom, 0.0), error)
        assert error <= TOLERANCE_PX, f"{span['id']} at {zoom:.0%}: {error:.4f} px"
        if zoom == 1.0:
            shares = ink_shares(page)
            assert all(s >= MIN_INK for s in shares), f"{span['id']}: ink shares {shares}"


def _report(name: str, results: dict[float, float], count: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    report = {
        "spans": count,
        "tolerance_px": TOLERANCE_PX,
        "max_error_px": {f"{z:.0%}": round(e, 5) for z, e in sorted(results.items())},
    }
    (ARTIFACTS / f"placement-{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nplacement {name}: {report}")


def test_every_dev_quote_is_highlighted_exactly(
    page: Any, live_server: LiveServer, seed_db: Path
) -> None:
    spans = _evidence_spans(seed_db)
    assert len(spans) >= 40
    results: dict[float, float] = {}
    for n, span in enumerate(spans):
        _measure(page, live_server, span, results)
        if n == 0:
            ARTIFACTS.mkdir(exist_ok=True)
            page.evaluate("() => window.truthbaseViewer.setZoom(1)")
            page.wait_for_function(WAIT_READY)
            page.screenshot(path=str(ARTIFACTS / "viewer-dev-quote.png"))
    _report("dev", results, len(spans))


def test_user_rotation_is_placed_exactly(page: Any, live_server: LiveServer, seed_db: Path) -> None:
    span = _evidence_spans(seed_db)[0]
    unit: Unit = span["unit"]
    assert unit.geometry is not None
    rects = span_line_rects(unit.text, unit.boxes, span["start"], span["end"])
    query = {k: span[k] for k in ("doc", "page", "start", "end")}
    for rotation in (90, 180, 270):
        page.goto(f"{live_server.url}/view?{urlencode({**query, 'rotation': rotation})}")
        page.wait_for_function(WAIT_READY)
        drawn = page.evaluate(READ_BOXES)
        expected = [to_viewport(r, unit.geometry, 1.0, rotation) for r in rects]
        assert max_error(drawn["boxes"], expected) <= TOLERANCE_PX, rotation


@pytest.fixture(scope="module")
def rotated_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    path = tmp_path_factory.mktemp("rotated") / "rotated.sqlite"
    store = SQLiteStore(path)
    try:
        summary = ingest_paths([ROTATED], store, embedder, IngestOptions())
    finally:
        store.close()
    assert not summary.failed
    return path


@pytest.fixture(scope="module")
def rotated_server(rotated_db: Path) -> Iterator[LiveServer]:
    with LiveServer(rotated_db) as server:
        yield server


def _line_spans(unit: Unit, count: int = 4) -> list[tuple[int, int]]:
    """Spans of a few text lines (beginning, middle, end of the page) that have glyph boxes."""
    lines: list[tuple[int, int]] = []
    offset = 0
    for line in unit.text.split("\n"):
        start, end = offset, offset + len(line)
        offset = end + 1
        if len(line.strip()) >= 8 and sum(b is not None for b in unit.boxes[start:end]) >= 8:
            lines.append((start, end))
    picks = sorted({0, len(lines) // 3, (2 * len(lines)) // 3, len(lines) - 1})
    return [lines[i] for i in picks][:count]


def test_rotated_page_is_highlighted_exactly(
    page: Any, rotated_server: LiveServer, rotated_db: Path
) -> None:
    assert SHARED.is_dir()
    store = SQLiteStore(rotated_db)
    try:
        (doc,) = store.list_documents()
        unit = store.unit(doc.id, 0)
    finally:
        store.close()
    assert unit is not None and unit.geometry is not None
    assert unit.geometry.rotation in (90, 270), unit.geometry
    results: dict[float, float] = {}
    spans = _line_spans(unit)
    for start, end in spans:
        span = {"id": f"rotated {start}-{end}", "doc": doc.id, "page": 1, "start": start}
        _measure(page, rotated_server, {**span, "end": end, "unit": unit}, results)
    page.screenshot(path=str(ARTIFACTS / "viewer-rotated.png"))
    _report("rotated", results, len(spans))
