"""OCR on the corpus scans with the real Tesseract: words printed on the page are found, boxes lie
on the page and on ink, rotation and skew are handled, mixed documents OCR only their image
pages, the golden OCR quotes pass the golden set's fuzzy rule, and both store backends keep how
each page was read."""

from __future__ import annotations

import ctypes
import json
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from tests.helpers.corpus import ROBUSTNESS, SHARED
from tests.helpers.ocr import need_tesseract, ocr_quote_share
from tests.helpers.pg_server import Backend
from truthbase.config import OcrSettings
from truthbase.embed import HashingEmbedder
from truthbase.extract import extract_pdf
from truthbase.ingest import IngestOptions, ingest_paths
from truthbase.model import ExtractedDocument, Unit

pytestmark = pytest.mark.corpus

CAPABILITIES = SHARED / "golden" / "capabilities-dev.json"
SCANS = {
    # file: (page index, words printed on it)
    "ocrmypdf-c02-22.pdf": (0, ["tip-toeing", "kitchen", "Watson’s", "listening"]),
    "ocrmypdf-linn.pdf": (0, ["LinnSequencer", "polyphonic", "110,000", "SMPTE"]),
    "ocrmypdf-rotated_skew.pdf": (0, ["LinnSequencer", "polyphonic", "110,000", "SMPTE"]),
}


@pytest.fixture(autouse=True)
def _tesseract() -> None:
    need_tesseract()


@cache
def read(name: str, **settings: object) -> ExtractedDocument:
    return extract_pdf(ROBUSTNESS / name, ocr=OcrSettings(**settings))  # type: ignore[arg-type]


def _check_boxes(unit: Unit) -> None:
    """Every character has its box, except synthesized spaces and line breaks; boxes in the
    crop box."""
    assert unit.geometry is not None
    x0, y0, x1, y1 = unit.geometry.cropbox
    assert len(unit.text) == len(unit.boxes)
    for ch, box in zip(unit.text, unit.boxes, strict=True):
        if ch in " \n":
            assert box is None
            continue
        assert box is not None, repr(ch)
        assert x0 - 0.5 <= box[0] < box[2] <= x1 + 0.5
        assert y0 - 0.5 <= box[1] < box[3] <= y1 + 0.5


@pytest.mark.parametrize("name", sorted(SCANS))
def test_a_scan_reads_with_its_words_and_boxes(name: str) -> None:
    index, words = SCANS[name]
    document = read(name)
    unit = document.units[index]
    assert unit.text_source == "ocr"
    assert unit.ocr is not None and unit.ocr.engine.startswith("tesseract 5")
    assert unit.ocr.languages == "eng+deu" and unit.ocr.dpi == 300.0
    assert unit.ocr.mean_confidence > 85, unit.ocr
    for word in words:
        assert word in unit.text, word
    _check_boxes(unit)
    assert document.report.ocr_pages == [index]
    assert not [w for w in document.report.warnings if "confidence" in w]


def test_the_rotated_skewed_page_reads_like_its_upright_twin() -> None:
    """Same page, /Rotate 90 and skewed: the same words as the straight scan, boxes in its own
    (landscape) user space."""
    skewed = read("ocrmypdf-rotated_skew.pdf").units[0]
    straight = read("ocrmypdf-linn.pdf").units[0]
    assert skewed.geometry is not None and skewed.geometry.rotation == 90
    a, b = set(skewed.text.split()), set(straight.text.split())
    assert len(a & b) / len(b) > 0.9
    assert skewed.ocr is not None and skewed.ocr.rotation == 0  # /Rotate alone made it upright


def _page_to_device(page: pdfium.PdfPage, size: tuple[int, int], x: float, y: float):
    dx, dy = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page, 0, 0, size[0], size[1], 0, x, y, dx, dy)
    return dx.value, dy.value


@pytest.mark.parametrize("name", ["ocrmypdf-rotated_skew.pdf", "ocrmypdf-c02-22.pdf"])
def test_word_boxes_lie_on_ink(name: str) -> None:
    """Each word's box, put back through pdfium's own page-to-device transform onto a fresh
    render, covers dark pixels: the mapping through /Rotate and the crop box is right."""
    unit = read(name).units[0]
    pdf = pdfium.PdfDocument(ROBUSTNESS / name)
    page = pdf[0]
    image = page.render(scale=2, grayscale=True).to_pil()
    pixels = image.load()
    inked, words = 0, 0
    offset = 0
    for token in unit.text.replace("\n", " ").split(" "):
        boxes = [b for b in unit.boxes[offset : offset + len(token)] if b is not None]
        offset += len(token) + 1
        if len(token) < 4 or not token.isalpha():
            continue
        x0 = min(b[0] for b in boxes)
        y0 = min(b[1] for b in boxes)
        x1 = max(b[2] for b in boxes)
        y1 = max(b[3] for b in boxes)
        corners = [_page_to_device(page, image.size, x, y) for x, y in ((x0, y0), (x1, y1))]
        left, right = sorted(c[0] for c in corners)
        top, bottom = sorted(c[1] for c in corners)
        dark = sum(
            pixels[x, y] < 110
            for x in range(max(left, 0), min(right, image.width))
            for y in range(max(top, 0), min(bottom, image.height))
        )
        area = max((right - left) * (bottom - top), 1)
        words += 1
        inked += dark / area >= 0.05
    page.close()
    pdf.close()
    assert words > 50
    assert inked / words > 0.97, (inked, words)


def test_a_sideways_scan_is_turned_upright_and_keeps_its_boxes(tmp_path: Path) -> None:
    """The straight scan given /Rotate 90: orientation detection turns the render back, the
    words are the same and so are their boxes in user space (which /Rotate does not change)."""
    pdf = pdfium.PdfDocument(ROBUSTNESS / "ocrmypdf-c02-22.pdf")
    pdf[0].set_rotation(90)
    turned = tmp_path / "turned.pdf"
    pdf.save(str(turned))
    pdf.close()
    upright = read("ocrmypdf-c02-22.pdf").units[0]
    unit = extract_pdf(turned).units[0]
    assert unit.ocr is not None and unit.ocr.rotation == 270
    assert unit.text_source == "ocr" and "tip-toeing" in unit.text
    for word in ("tip-toeing", "kitchen", "listening"):
        a, b = upright.text.index(word), unit.text.index(word)
        for i in range(len(word)):
            box, other = upright.boxes[a + i], unit.boxes[b + i]
            assert box is not None and other is not None
            assert max(abs(p - q) for p, q in zip(box, other, strict=True)) < 1.5, word
    # Without orientation detection Tesseract still reads the sideways lines, but its word
    # boxes for them are not where the words are: why detect_orientation is on by default.
    plain = extract_pdf(turned, ocr=OcrSettings(detect_orientation=False)).units[0]
    at, there = plain.text.index("kitchen"), upright.text.index("kitchen")
    off = [
        abs(p[2] - q[2])
        for p, q in zip(plain.boxes[at : at + 7], upright.boxes[there : there + 7], strict=True)
        if p is not None and q is not None
    ]
    assert max(off) > 20


def test_a_mixed_document_ocrs_only_its_image_pages() -> None:
    document = read("ocrmypdf-multipage.pdf")
    sources = [u.text_source for u in document.units]
    assert sources == ["ocr", "ocr", "ocr", "pdf", "ocr", "ocr"]
    assert document.report.ocr_pages == [0, 1, 2, 4, 5]
    assert document.report.empty_units == 0
    # the page with a text layer is exactly what it is without OCR
    without = read("ocrmypdf-multipage.pdf", enabled=False)
    assert document.units[3].text == without.units[3].text
    assert document.units[3].boxes == without.units[3].boxes
    assert without.report.empty_units == 5
    assert any("OCR is off" in w for w in without.report.warnings)
    # the poster page (2160 pt square) is read smaller: its print is huge
    poster = document.units[1]
    assert poster.ocr is not None and poster.ocr.dpi < 100
    assert "9000x9000" in poster.text and "megapixels" in poster.text
    for unit in document.units:
        if unit.text_source == "ocr":
            _check_boxes(unit)


def test_a_font_without_unicode_mapping_is_read_by_ocr() -> None:
    """ocrmypdf-type3_font_nomapping.pdf: its text layer is two control characters."""
    unit = read("ocrmypdf-type3_font_nomapping.pdf").units[0]
    assert unit.text_source == "ocr" and unit.text == "ua"
    without = read("ocrmypdf-type3_font_nomapping.pdf", enabled=False).units[0]
    assert without.text_source == "pdf" and len(without.text) == 2


def test_the_golden_ocr_quotes_are_on_their_pages() -> None:
    golden = json.loads(CAPABILITIES.read_text("utf-8"))
    checked = 0
    for question in golden["questions"]:
        for evidence in question.get("evidence", []):
            if not evidence.get("ocr"):
                continue
            name = Path(golden["documents"][evidence["doc"]]["path"]).name
            unit = read(name).units[evidence["page"] - 1]
            assert unit.text_source == "ocr"
            share = ocr_quote_share(evidence["quote"], unit.text)
            assert share >= 0.8, (question["id"], share, evidence["quote"])
            checked += 1
    assert checked >= 6


def test_both_backends_store_how_each_page_was_read(backend: Backend) -> None:
    store = backend.open()
    try:
        summary = ingest_paths(
            [ROBUSTNESS / "ocrmypdf-c02-22.pdf", ROBUSTNESS / "pdfminer-jo.pdf"],
            store,
            HashingEmbedder(),
            IngestOptions(),
        )
        assert not summary.failed
        scan, text = summary.outcomes
        assert scan.ocr_pages == 1 and text.ocr_pages == 0
        assert scan.doc_id is not None and text.doc_id is not None
        stored = store.unit(scan.doc_id, 0)
        assert stored is not None and stored.text_source == "ocr"
        assert stored.ocr == read("ocrmypdf-c02-22.pdf").units[0].ocr
        assert stored.text == read("ocrmypdf-c02-22.pdf").units[0].text
        plain = store.unit(text.doc_id, 0)
        assert plain is not None and plain.text_source == "pdf" and plain.ocr is None
    finally:
        store.close()
