"""The raw char reader gives what pypdfium2's typed helpers give, character for character."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from tests.helpers.canaries import text_pdf
from tests.helpers.corpus import ROBUSTNESS, SEED
from truthbase.extract.charread import _page_codes, read_chars, read_page


def test_read_chars_matches_the_typed_helpers() -> None:
    data = text_pdf(["A well-known effect of line-end hyphen- ation, in two lines. " * 8])
    document = pdfium.PdfDocument(data)
    page = document[0]
    textpage = page.get_textpage()
    try:
        chars, unmapped = read_chars(textpage)
        assert len(chars) == textpage.count_chars() > 100
        assert unmapped == 0
        for i, c in enumerate(chars):
            assert c.code == pdfium_c.FPDFText_GetUnicode(textpage, i)
            assert c.generated == (pdfium_c.FPDFText_IsGenerated(textpage, i) == 1)
            assert c.hyphen == (pdfium_c.FPDFText_IsHyphen(textpage, i) == 1)
            if c.generated:
                assert c.box is None
                continue
            x0, y0, x1, y1 = textpage.get_charbox(i, loose=True)
            assert c.box == (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        assert any(c.generated for c in chars)
    finally:
        textpage.close()
        page.close()
        document.close()


#: Pages with line-end hyphens and private-use ligatures (self-rag), unmapped glyphs
#: (issue918, type3), right-to-left text (ThuluthFeatures, ArabicCIDTrueType) and pages whose
#: text is not one unit per character (ThuluthFeatures, habibi), where read_page asks pdfium
#: for every code point.
_CORPUS_FILES = [
    SEED / "self-rag.pdf",
    ROBUSTNESS / "pdfjs-issue918.pdf",
    ROBUSTNESS / "ocrmypdf-type3_font_nomapping.pdf",
    ROBUSTNESS / "pdfjs-ThuluthFeatures.pdf",
    ROBUSTNESS / "pdfjs-ArabicCIDTrueType.pdf",
    ROBUSTNESS / "pypdf-habibi-rotated.pdf",
]


@pytest.mark.corpus
@pytest.mark.parametrize("path", _CORPUS_FILES, ids=lambda p: p.stem)
def test_read_page_reads_what_read_chars_reads(path: Path) -> None:
    document = pdfium.PdfDocument(path)
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            try:
                chars, unmapped = read_chars(textpage)
                columns, page_unmapped = read_page(textpage)
                codes = _page_codes(textpage, len(chars)) if chars else []
            finally:
                textpage.close()
                page.close()
            assert page_unmapped == unmapped
            assert columns.text == "".join(chr(c.code) for c in chars)
            assert columns.boxes == [c.box for c in chars]
            assert columns.fonts == {i: c.font for i, c in enumerate(chars) if c.font is not None}
            # What read_page takes from pdfium's source: generated characters are spaces and
            # line breaks, line-end hyphens 0x02 (U+FFFE mirrored) unless a '-' asked for.
            assert all(c.code in (0x20, 0x0D, 0x0A) for c in chars if c.generated)
            flagged = {i for i, c in enumerate(chars) if c.hyphen and c.code not in (0x02, 0xFFFE)}
            assert flagged == columns.hyphens
            if codes is not None:
                assert codes == [c.code for c in chars]
    finally:
        document.close()
