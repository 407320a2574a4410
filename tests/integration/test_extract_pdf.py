"""extract_pdf on the real corpus: golden quotes, failures, ligatures, hyphens, labels, columns."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from tests.helpers.corpus import GOLDEN_DEV, ROBUSTNESS, SEED, SHARED
from tests.helpers.ocr import SCANS, tesseract_missing
from truthbase.config import OcrSettings
from truthbase.extract import EXTRACTOR_VERSION, ExtractionError, extract_path, extract_pdf
from truthbase.model import ExtractedDocument, Unit
from truthbase.text.matching import quote_in

ROBUST = ROBUSTNESS
GOLDEN = GOLDEN_DEV

pytestmark = pytest.mark.corpus

OCR_OFF = OcrSettings(enabled=False)

PASSWORDS = {
    "pdfminer-aes-256.pdf": "baz",
    "pdfplumber-password-example.pdf": "test",
    "pypdf-libreoffice-writer-password.pdf": "openpassword",
}
EXPECTED_FAILURES = {
    **{name: "encrypted" for name in PASSWORDS},
    "ocrmypdf-invalid.pdf": "corrupt",
    "derived-truncated-multicolumn.pdf": "corrupt",
    # the three scans read by OCR (tests/integration/test_ocr.py); without Tesseract, no_text
    **({name: "no_text" for name in SCANS} if tesseract_missing() is not None else {}),
}
ROBUSTNESS_FILES = sorted(p.name for p in ROBUST.glob("*.pdf")) if ROBUST.exists() else []

_timings: dict[str, float] = {}


@cache
def extracted(path: Path) -> ExtractedDocument:
    started = time.perf_counter()
    document = extract_pdf(path)
    _timings[path.name] = time.perf_counter() - started
    return document


def _lines(unit: Unit) -> list[tuple[float, float, float]]:
    """(x0, x1, y-middle) of each text line of a unit, from its glyph boxes."""
    out: list[tuple[float, float, float]] = []
    offset = 0
    for line in unit.text.split("\n"):
        boxes = [b for b in unit.boxes[offset : offset + len(line)] if b is not None]
        offset += len(line) + 1
        if boxes:
            first = boxes[0]
            out.append(
                (min(b[0] for b in boxes), max(b[2] for b in boxes), (first[1] + first[3]) / 2)
            )
    return out


def _golden_pdf_evidence() -> list[tuple[str, Path, int, str]]:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    out: list[tuple[str, Path, int, str]] = []
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            rel = golden["documents"][evidence["doc"]]["path"]
            if rel.endswith(".pdf"):
                out.append((question["id"], SHARED / rel, evidence["page"], evidence["quote"]))
    return out


# --- golden quotes -------------------------------------------------------------------------


def test_every_golden_pdf_quote_is_on_its_page() -> None:
    evidence = _golden_pdf_evidence()
    missing = [
        (qid, path.name, page, quote)
        for qid, path, page, quote in evidence
        if not quote_in(quote, extracted(path).units[page - 1].text)
    ]
    print(f"golden PDF quotes found: {len(evidence) - len(missing)}/{len(evidence)}")
    assert len(evidence) >= 50
    assert not missing


# --- the seed documents ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nist-csf-2.0", "nist-ai-rmf-1.0", "raptor", "self-rag"])
def test_seed_document_invariants(name: str) -> None:
    path = SEED / f"{name}.pdf"
    document = extracted(path)
    print(f"{name}: {_timings.get(path.name, 0.0):.2f} s")
    assert document.kind == "pdf"
    assert document.extractor_version == EXTRACTOR_VERSION
    assert len(document.sha256) == 64
    assert document.title
    assert document.report.empty_units == 0
    assert document.report.ocr_pages == []  # every page has its text layer: none is OCR'd
    assert {u.text_source for u in document.units} == {"pdf"}
    assert [u.index for u in document.units] == list(range(len(document.units)))
    for unit in document.units:
        assert len(unit.text) == len(unit.boxes)
        assert unicodedata.is_normalized("NFC", unit.text)
        assert "\r" not in unit.text and "\ufffe" not in unit.text and "\u00ad" not in unit.text
        assert not any("\ufb00" <= ch <= "\ufb06" for ch in unit.text)
        assert unit.geometry is not None
        for ch, box in zip(unit.text, unit.boxes, strict=True):
            if ch == "\n":
                assert box is None  # line breaks are pdfium's, never glyphs here
            if box is not None:
                assert box[0] <= box[2] and box[1] <= box[3]


def test_sha256_and_title() -> None:
    import hashlib

    path = SEED / "nist-csf-2.0.pdf"
    document = extracted(path)
    assert document.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "Cybersecurity Framework" in document.title
    assert extracted(SEED / "self-rag.pdf").title == "self-rag"  # empty /Title: file stem


def test_hyphenated_word_is_joined() -> None:
    unit = extracted(SEED / "nist-ai-rmf-1.0.pdf").units[2]
    # Printed as "recommenda-" at a line end and "tion" at the start of the next line.
    at = unit.text.index("recommendation or endorsement")
    first, second = unit.boxes[at + 9], unit.boxes[at + 10]  # "a" and "t" around the break
    assert first is not None and second is not None
    assert second[1] < first[1] - 5  # the halves really are on two lines
    assert "recommenda\n" not in unit.text


def _split_across_lines(unit: Unit, word: str) -> int:
    """Offset of the first occurrence of ``word`` whose letters sit on two text lines."""
    at = unit.text.find(word)
    while at >= 0:
        ys = [b[1] for b in unit.boxes[at : at + len(word)] if b is not None]
        if sum(1 for y0, y1 in pairwise(ys) if y1 < y0 - 5) == 1:
            return at
        at = unit.text.find(word, at + 1)
    raise AssertionError(f"{word!r} is not split across two lines")


@pytest.mark.parametrize(
    ("name", "page", "word"),
    [
        ("nist-csf-2.0", 2, "high-level"),  # printed "high-" / "level"
        ("nist-csf-2.0", 29, "organization-wide"),
        ("self-rag", 1, "SELF-RAG"),  # printed "SELF-" / "RAG"
        ("self-rag", 4, "fine-grained"),  # "\ue000ne-" / "grained": ligature repaired first
    ],
)
def test_line_end_compound_hyphen_is_kept(name: str, page: int, word: str) -> None:
    document = extracted(SEED / f"{name}.pdf")
    unit = document.units[page - 1]
    at = _split_across_lines(unit, word)
    dash = at + word.index("-")
    hyphen, before, after = unit.boxes[dash], unit.boxes[dash - 1], unit.boxes[dash + 1]
    assert hyphen is not None and before is not None and after is not None
    assert abs(hyphen[1] - before[1]) < 1 and hyphen[0] >= before[2] - 0.5  # same line, after
    assert after[1] < hyphen[1] - 5  # the second half starts the next line, no space between
    joined = word.replace("-", "")
    assert not any(joined in u.text for u in document.units)


@pytest.mark.parametrize(
    ("name", "page", "word"),
    [("self-rag", 1, "parametric"), ("nist-ai-rmf-1.0", 7, "organizations")],
)
def test_line_end_word_break_is_joined(name: str, page: int, word: str) -> None:
    unit = extracted(SEED / f"{name}.pdf").units[page - 1]
    at = _split_across_lines(unit, word)
    assert all(box is not None for box in unit.boxes[at : at + len(word)])


def test_compound_hyphens_kept_are_reported() -> None:
    counts = {
        name: extracted(SEED / f"{name}.pdf").report.compound_hyphens_kept
        for name in ("nist-csf-2.0", "nist-ai-rmf-1.0", "raptor", "self-rag")
    }
    print(f"line-end hyphens kept as compound hyphens: {counts}")
    # Most line-end hyphens are word breaks (239 in the AI RMF, 87 in RAPTOR): few are kept.
    assert counts["nist-csf-2.0"] >= 2 and counts["self-rag"] >= 10
    assert counts["nist-ai-rmf-1.0"] <= 15 and counts["raptor"] <= 15
    self_rag = "\n".join(u.text for u in extracted(SEED / "self-rag.pdf").units)
    assert "SELFRAG" not in self_rag and "paramet-ric" not in self_rag


def test_soft_hyphens_are_removed() -> None:
    (unit,) = extracted(ROBUST / "pdfjs-issue9084.pdf").units
    assert unit.text == "SS254103M"
    assert all(box is not None for box in unit.boxes)


# --- ligatures -------------------------------------------------------------------------------


def test_private_use_ligatures_are_repaired() -> None:
    document = extracted(SEED / "self-rag.pdf")
    report = document.report
    text = "\n".join(u.text for u in document.units)
    assert "reflection" in text and "significantly" in text and "verification" in text
    assert report.ligature_words_repaired >= 200
    main_font = {k: v for k, v in report.ligature_codepoints.items() if "CairoFont-0-1" in k}
    assert set(main_font.values()) == {"fi", "fl"}
    # No private-use glyph is left inside a word; the few left are math-font symbols (a big
    # operator set on its own), reported as warnings rather than guessed.
    for unit in document.units:
        for i, ch in enumerate(unit.text):
            if "\ue000" <= ch <= "\uf8ff":
                neighbours = unit.text[max(0, i - 1) : i] + unit.text[i + 1 : i + 2]
                assert not any(c.islower() for c in neighbours), unit.text[i - 10 : i + 10]
    leftover = sum(1 for u in document.units for ch in u.text if "\ue000" <= ch <= "\uf8ff")
    assert leftover <= 5
    assert any("private-use" in w for w in report.warnings)


def test_repaired_ligature_letters_keep_the_glyph_box() -> None:
    unit = extracted(SEED / "self-rag.pdf").units[0]
    at = unit.text.index("reflection")
    f_box, l_box = unit.boxes[at + 2], unit.boxes[at + 3]
    assert f_box is not None and f_box == l_box
    assert unit.boxes[at + 1] != f_box


def test_unicode_ligatures_are_expanded() -> None:
    (unit,) = extracted(ROBUST / "pdfjs-copy_paste_ligatures.pdf").units
    assert unit.text.startswith("abcdeffffiflffiffl")
    assert not any("\ufb00" <= ch <= "\ufb06" for ch in unit.text)
    # "ffi" from one glyph: three letters, one box.
    at = unit.text.index("ffiffl")
    assert unit.boxes[at] == unit.boxes[at + 1] == unit.boxes[at + 2]


# --- page labels and geometry ----------------------------------------------------------------


def test_page_labels() -> None:
    document = extracted(ROBUST / "pdfminer-pagelabels.pdf")
    assert [u.label for u in document.units] == ["iii", "iv", "1", "2", "1"]
    assert extracted(SEED / "self-rag.pdf").units[0].label is None


def test_rotated_page_geometry() -> None:
    (unit,) = extracted(ROBUST / "pdfplumber-nics-background-checks-2015-11-rotated.pdf").units
    assert unit.geometry is not None
    assert unit.geometry.rotation == 90
    assert unit.geometry.mediabox == (0.0, 0.0, 1008.0, 612.0)
    habibi = extracted(ROBUST / "pypdf-habibi-rotated.pdf").units
    # /Rotate per page as pdfminer.six also reads it.
    assert [u.geometry.rotation for u in habibi if u.geometry] == [90, 180, 270, 0]


# --- reading order ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "page", "passage"),
    [
        # Two columns: each passage wraps inside one column of the ACM paper.
        (
            "pdfjs-tracemonkey.pdf",
            2,
            "If the call succeeds, the VM records the call to the inner tree as part of the "
            "outer trace and finishes the outer trace as normal.",
        ),
        # Three columns: body text of the middle and right columns, wrapped over lines.
        (
            "pdfplumber-federal-register-2020-17221.pdf",
            2,
            "was involved in an accident after takeoff from Addis Ababa Bole International "
            "Airport in Addis Ababa, Ethiopia",
        ),
        (
            "pdfplumber-federal-register-2020-17221.pdf",
            2,
            "could cause the flightcrew to have difficulty controlling the airplane, and lead to "
            "excessive airplane nose-down attitude",
        ),
    ],
)
def test_columns_read_in_column_order(name: str, page: int, passage: str) -> None:
    assert quote_in(passage, extracted(ROBUST / name).units[page - 1].text)


@pytest.mark.parametrize(
    "name",
    [
        "pdfjs-tracemonkey.pdf",
        "pdfplumber-federal-register-2020-17221.pdf",
        "pdfminer-naacl06-shinyama.pdf",
    ],
)
def test_columns_never_interleave_line_by_line(name: str) -> None:
    """No line is followed by a line of another column at the same height and then by the
    next line of the first column: the signature of reading across columns."""
    document = extracted(ROBUST / name)
    lines_seen = 0
    for unit in document.units:
        lines = _lines(unit)
        lines_seen += len(lines)
        for a, b, c in zip(lines, lines[1:], lines[2:], strict=False):
            a_b_apart = a[1] < b[0] or b[1] < a[0]
            b_c_apart = b[1] < c[0] or c[1] < b[0]
            a_c_together = not (a[1] < c[0] or c[1] < a[0])
            same_height = abs(a[2] - b[2]) < 2
            assert not (a_b_apart and b_c_apart and a_c_together and same_height and c[2] < a[2])
    assert lines_seen > 500


# --- every robustness file -------------------------------------------------------------------


@pytest.mark.parametrize("name", ROBUSTNESS_FILES)
def test_robustness_file_extracts_or_fails_cleanly(name: str) -> None:
    path = ROBUST / name
    expected = EXPECTED_FAILURES.get(name)
    if expected is not None:
        with pytest.raises(ExtractionError) as caught:
            extract_path(path)
        assert caught.value.reason == expected
        assert path.name in str(caught.value)
        if expected == "no_text":
            assert "OCR" in str(caught.value)
        return
    document = extracted(path)
    assert document.units
    for unit in document.units:
        assert len(unit.text) == len(unit.boxes)
        assert unicodedata.is_normalized("NFC", unit.text)


@pytest.mark.parametrize(("name", "password"), sorted(PASSWORDS.items()))
def test_encrypted_files_open_with_their_password(name: str, password: str) -> None:
    document = extract_path(ROBUST / name, password=password)
    assert any(u.text.strip() for u in document.units)
    with pytest.raises(ExtractionError) as caught:
        extract_path(ROBUST / name, password="wrong")
    assert caught.value.reason == "encrypted"


def test_empty_pages_inside_a_document_are_counted() -> None:
    document = extract_pdf(ROBUST / "ocrmypdf-multipage.pdf", ocr=OCR_OFF)
    assert len(document.units) == 6
    assert document.report.empty_units == 5
    vertical = extract_pdf(ROBUST / "pdfjs-vertical.pdf", ocr=OCR_OFF)
    assert vertical.report.empty_units == 2


def test_garbage_text_ingests_with_a_warning() -> None:
    """Without OCR (with it, test_ocr.py: the page is read from its image)."""
    document = extract_pdf(ROBUST / "ocrmypdf-type3_font_nomapping.pdf", ocr=OCR_OFF)
    assert len(document.units[0].text) == 2
    assert any("no Unicode mapping" in w for w in document.report.warnings)


def test_not_a_pdf_and_unsupported_suffix(tmp_path: Path) -> None:
    fake = tmp_path / "notes.pdf"
    fake.write_text("just some text, no header", encoding="utf-8")
    with pytest.raises(ExtractionError) as caught:
        extract_path(fake)
    assert caught.value.reason == "not_pdf"
    other = tmp_path / "notes.txt"
    other.write_text("text", encoding="utf-8")
    with pytest.raises(ExtractionError) as caught:
        extract_path(other)
    assert caught.value.reason == "unsupported"


def test_accents_drawn_on_letters_are_the_accented_letters() -> None:
    # RAPTOR's references are set in TeX's 7-bit fonts: "ñ" is "˜" drawn over "n", which pdfium
    # reads as two characters ("Ontan˜on"); a name is found by how it is spelled.
    pages = extracted(SEED / "raptor.pdf").units
    assert "Santiago Ontañon" in pages[9].text
    assert "Tomás" in pages[11].text
    spacing = re.compile("[\u00a8\u00b4\u02c6\u02dc][A-Za-z]")
    assert not [m.group() for page in pages for m in spacing.finditer(page.text)]
    # the accented letter is one character with one box over both glyphs
    at = pages[9].text.index("Ontañon") + len("Onta")
    box = pages[9].boxes[at]
    assert box is not None and box[2] > box[0]


def test_tex_not_and_mapsto_read_as_their_symbols() -> None:
    # GeoTopo's ≠ was "6=" (cmsy's \not slash before "=") and ↦ was "7→" (\mapsto's bar).
    pages = extracted(ROBUSTNESS / "pypdf-GeoTopo-komprimiert.pdf").units
    assert "1 falls x ≠ y" in pages[9].text
    assert "x ↦ [x]∼" in pages[8].text
    assert not any("6=" in page.text or "7→" in page.text for page in pages)
