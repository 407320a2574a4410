"""The raw char reader gives what pypdfium2's typed helpers give, character for character."""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from tests.helpers.canaries import text_pdf
from truthbase.extract.charread import read_chars


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
