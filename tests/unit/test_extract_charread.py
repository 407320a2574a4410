"""The raw char reader gives what pypdfium2's typed helpers give, character for character."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from tests.helpers.canaries import text_pdf
from tests.helpers.corpus import CORPUS, ROBUSTNESS, SEED
from truthbase.extract.charread import _page_codes, read_chars, read_page, tex_symbols


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
    ROBUSTNESS / "pypdf-GeoTopo-komprimiert.pdf",  # TeX math symbols read as letters and digits
]


def _textpages(path: Path, indices: Iterable[int] | None = None) -> Iterator[pdfium.PdfTextPage]:
    """Each page's text page of the PDF at ``path`` (``indices``: those pages only), closed
    with its page and the document once the caller is done with it."""
    document = pdfium.PdfDocument(path)
    try:
        for index in range(len(document)) if indices is None else indices:
            page = document[index]
            textpage = page.get_textpage()
            try:
                yield textpage
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()


@pytest.mark.corpus
@pytest.mark.parametrize("path", _CORPUS_FILES, ids=lambda p: p.stem)
def test_read_page_reads_what_read_chars_reads(path: Path) -> None:
    for textpage in _textpages(path):
        chars, unmapped = read_chars(textpage)
        columns, page_unmapped = read_page(textpage)
        codes = _page_codes(textpage, len(chars)) if chars else []
        if codes:
            symbols = tex_symbols(textpage, "".join(map(chr, codes)))
            codes = [symbols.get(i, code) for i, code in enumerate(codes)]
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


def _page_text(path: Path, index: int) -> str:
    return "".join(read_page(t)[0].text for t in _textpages(path, [index]))


@pytest.mark.corpus
def test_tex_math_symbols_are_read_as_the_symbols() -> None:
    """TeX's math-symbol fonts name some glyphs in ways pdfium has no Unicode for, and it
    reported their codes: a LaTeX manual's "\\cmidrule[⟨wd⟩](⟨trim⟩)" read
    "\\cmidrule[hwdi](htrimi)", a German script's ‖γ′(t)‖ read "kγ0(t)k"."""
    booktabs = _page_text(CORPUS / "library" / "texlive" / "booktabs" / "booktabs.pdf", 7)
    assert "\\cmidrule[⟨wd⟩](⟨trim⟩){a–b}" in booktabs, booktabs[:400]
    assert "hwdi" not in booktabs
    geometry = ROBUSTNESS / "pypdf-GeoTopo-komprimiert.pdf"
    scalar = _page_text(geometry, 9)
    assert "Skalarprodukt ⟨·, ·⟩" in scalar and "⟨x − y, x − y⟩" in scalar, scalar
    curves = " ".join(_page_text(geometry, 90).split())
    assert "‖γ ′ (t)‖2 = 1" in curves, curves[:600]
    assert "dann heißt" in curves.lower() or "Kurve" in curves  # its letters stay letters


@pytest.mark.corpus
@pytest.mark.parametrize("path", sorted(SEED.glob("*.pdf")), ids=lambda p: p.stem)
def test_no_letter_of_a_text_font_is_taken_for_a_symbol(path: Path) -> None:
    """The seed papers' fonts map every glyph (and two are LaTeX-made): nothing is changed."""
    for index, textpage in enumerate(_textpages(path)):
        count = textpage.count_chars()
        raw = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage, i)) for i in range(count))
        assert tex_symbols(textpage, raw) == {}, (path.name, index)
