"""pdfium's character array read in one tight loop over the raw C API.

pypdfium2's per-character helpers (``PdfTextPage.get_charbox``) and even its raw bindings convert
every argument through typed prototypes; on the seed corpus that conversion was most of the time
spent reading characters (twice a bare call's). Here each function is called through an untyped
prototype at the same address, with the text page passed as a prebuilt ``c_void_p`` and one
reused ``FS_RECTF``: the same C calls with the same results, at about half the cost a call.
``benchmarks/limits_bench.py`` reads the seed corpus the same way to measure the extraction
limit with boxes.

``read_page`` is what extraction uses: the page's code points in one call where pdfium's text
allows it, and only the per-character calls whose answer can matter (two a character, as the
limit makes). ``read_chars`` reads every flag of every character as records; the tests hold
``read_page`` to it.
"""

from __future__ import annotations

import ctypes
import re
import sys
from array import array
from collections.abc import Callable
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ..model import Rect
from .pagechars import PageChars
from .text import RawChar

_Call = Callable[..., int]


def _untyped(function: Any, restype: Any) -> _Call:
    """``function`` (a pypdfium2.raw binding) without argument conversion: ints go as C ints,
    ctypes objects as themselves."""
    address = ctypes.cast(function, ctypes.c_void_p).value
    if address is None:
        raise RuntimeError("pdfium function without an address")
    call: _Call = ctypes.CFUNCTYPE(restype)(address)
    return call


class RawCalls:
    """The per-character functions of pdfium's text API, untyped (built once per process)."""

    def __init__(self) -> None:
        self.get_unicode = _untyped(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint)
        self.is_generated = _untyped(pdfium_c.FPDFText_IsGenerated, ctypes.c_int)
        self.is_hyphen = _untyped(pdfium_c.FPDFText_IsHyphen, ctypes.c_int)
        self.has_map_error = _untyped(pdfium_c.FPDFText_HasUnicodeMapError, ctypes.c_int)
        self.loose_box = _untyped(pdfium_c.FPDFText_GetLooseCharBox, ctypes.c_int)
        self.char_angle = _untyped(pdfium_c.FPDFText_GetCharAngle, ctypes.c_float)


_CALLS: RawCalls | None = None


def raw_calls() -> RawCalls:
    global _CALLS
    if _CALLS is None:
        _CALLS = RawCalls()
    return _CALLS


def handle(textpage: pdfium.PdfTextPage) -> ctypes.c_void_p:
    """The text page as the untyped calls take it."""
    return ctypes.c_void_p(ctypes.cast(textpage.raw, ctypes.c_void_p).value)


def font_name(textpage: pdfium.PdfTextPage, index: int) -> str:
    flags = ctypes.c_int()
    size = pdfium_c.FPDFText_GetFontInfo(textpage, index, None, 0, ctypes.byref(flags))
    if size <= 0:
        return ""
    buffer = ctypes.create_string_buffer(size)
    pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, size, ctypes.byref(flags))
    return buffer.value.decode("utf-8", errors="replace")


#: TeX's math-symbol fonts (Computer Modern's cmsy, Latin Modern's), after a subset's prefix
#: ("ABCDEF+CMSY10"). Some of their glyphs carry names pdfium has no Unicode for
#: ("angbracketleft", "bardbl", "prime"), and it reports their character codes as letters and
#: digits: a LaTeX manual's "\cmidrule[⟨wd⟩](⟨trim⟩)" read "\cmidrule[hwdi](htrimi)" (a search
#: for "trim" missed it), a norm ‖x‖ read "kxk", a derivative γ′(t) "γ0(t)". These fonts have no
#: letters or digits in those places (TeX's OMS encoding), so such a character is the symbol
#: wherever it stands.
_MATH_SYMBOLS = re.compile(r"(?:[A-Z]{6}\+)?(?:CMSY|cmsy|LMSY|lmsy|LMMathSymbols)")
_OMS = {
    "h": 0x27E8,  # ⟨
    "i": 0x27E9,  # ⟩
    "k": 0x2016,  # ‖
    "b": 0x230A,  # ⌊
    "c": 0x230B,  # ⌋
    "d": 0x2308,  # ⌈
    "e": 0x2309,  # ⌉
    "0": 0x2032,  # ′
    # Drawn over the next glyph: \not's slash over a relation ("x 6= y" for x ≠ y), the bar of
    # \mapsto before its arrow ("x 7→ y" for x ↦ y); text._stacked_accents joins them to it.
    "6": 0x0338,  # combining long solidus overlay
    "7": 0x21A6,  # ↦
}
#: Where such a symbol read as a letter or digit can stand: an opening one (⟨ ⌊ ⌈) that no
#: letter comes before, a closing one that no letter follows, ‖ at either edge of a word, a
#: prime anywhere, a slash before a relation, a bar before an arrow. Only these characters (a
#: few in a hundred of English text) have their font asked.
_OMS_AT = re.compile(r"(?<![^\W\d_])[hbdk]|[icek](?![^\W\d_])|0|6(?=[=∈∃<>≤≥≡∼≃≈⊂⊃⊆⊇|])|7(?=→)")


def tex_symbols(textpage: pdfium.PdfTextPage, text: str) -> dict[int, int]:
    """The characters of ``text`` (the page's, one per character) that are symbols of a TeX
    math-symbol font read as letters or digits (:data:`_MATH_SYMBOLS`), with their code
    points."""
    return {
        m.start(): _OMS[m.group()]
        for m in _OMS_AT.finditer(text)
        if _MATH_SYMBOLS.match(font_name(textpage, m.start()))
    }


def read_chars(textpage: pdfium.PdfTextPage) -> tuple[list[RawChar], int]:
    """Every character of the page (code, loose box, generated and hyphen flags, the font of
    private-use glyphs) and how many pdfium flags with a Unicode mapping error."""
    calls = raw_calls()
    page = handle(textpage)
    unicode, generated_, hyphen_ = calls.get_unicode, calls.is_generated, calls.is_hyphen
    map_error, loose = calls.has_map_error, calls.loose_box
    rect = pdfium_c.FS_RECTF()
    ref = ctypes.byref(rect)
    chars: list[RawChar] = []
    append = chars.append
    unmapped = 0
    for i in range(int(pdfium_c.FPDFText_CountChars(textpage))):
        code = unicode(page, i)
        # The three flags are one field of pdfium's char info (char_type: kGenerated, kHyphen,
        # kNotUnicode; fpdf_text.cpp compares it with each), so at most one is set: a generated
        # character needs no other call, a hyphen no map-error call.
        generated = generated_(page, i) == 1
        hyphen = not generated and hyphen_(page, i) == 1
        if not generated and not hyphen and map_error(page, i) == 1:
            unmapped += 1
        box: Rect | None = None
        # No box when pdfium has none for it; the character still counts as text.
        if not generated and loose(page, i, ref):
            left, bottom, right, top = rect.left, rect.bottom, rect.right, rect.top
            # min/max spelled out (same operands, same tie rule: the first one unless the
            # second is strictly smaller/larger).
            box = (
                right if right < left else left,
                top if top < bottom else bottom,
                right if right > left else left,
                top if top > bottom else bottom,
            )
        if 0xE000 <= code <= 0xF8FF:  # is_private_use(code), inlined
            append(RawChar(code, box, generated, hyphen, font_name(textpage, i)))
        else:
            append(RawChar(code, box, generated, hyphen, None))
    for i, code in tex_symbols(textpage, "".join(chr(c.code) for c in chars)).items():
        chars[i] = chars[i]._replace(code=code)
    return chars, unmapped


def _page_codes(textpage: pdfium.PdfTextPage, count: int) -> list[int] | None:
    """Every character's code point from one FPDFText_GetText call, or None where the page's
    text is not one code unit per character.

    pdfium builds the page's text (``text_buf_``) alongside its character array, one code unit
    for each character it keeps in the text (cpdf_textpage.cpp, ``AddCharInfoByLRDirection``
    and ``...RLDirection``, ``AppendGeneratedCharacter``). It leaves out control characters and
    characters without code, and ``ToUCS2LE`` leaves out supplementary characters; nothing adds
    a unit. So when the text has as many units as the page has characters, unit i is character
    i's, and it is its code point except for U+FFFE, which stands for 0 (a glyph without code),
    0x02 (a line-end hyphen) and U+FFFE itself: those are asked one by one (FPDFText_GetUnicode).
    ``tests/unit/test_extract_charread.py`` checks this against the per-character calls.
    """
    units = (ctypes.c_ushort * (count + 1))()
    if int(pdfium_c.FPDFText_GetText(textpage, 0, count, units)) != count + 1:
        return None
    packed = array("H", bytes(units))
    if sys.byteorder == "big":
        packed.byteswap()  # pdfium writes UTF-16LE
    codes: list[int] = packed.tolist()
    codes.pop()  # the terminating NUL
    if 0xFFFE in codes:
        unicode, page = raw_calls().get_unicode, handle(textpage)
        at = codes.index(0xFFFE)
        while at >= 0:
            codes[at] = unicode(page, at)
            try:
                at = codes.index(0xFFFE, at + 1)
            except ValueError:
                at = -1
    return codes


def read_page(textpage: pdfium.PdfTextPage) -> tuple[PageChars, int]:
    """Every character of the page as columns (``pagechars.PageChars``) and how many pdfium
    flags with a Unicode mapping error: what ``read_chars`` reads, with fewer calls.

    The code points come from the page's text in one call where it has one unit per character
    (``_page_codes``; one FPDFText_GetUnicode a character where not). pdfium keeps one type per
    character (fpdf_text.cpp: IsGenerated, IsHyphen and HasUnicodeMapError each compare
    char_type with one value), and cpdf_textpage.cpp says which code points each type can have:

    - generated characters are only ever a space, CR or LF (``AppendGeneratedCharacter`` with
      L' ', L'\\r', L'\\n', and the generated L' ' of ``ProcessTextObjectItems``): IsGenerated
      is asked for those three code points only, and a generated character needs no other call
      (it has no box);
    - a line-end hyphen gets the code point 0x02 (``set_unicode(0x2)``; U+FFFE after mirroring
      in right-to-left text), which the text core turns into a mark by itself: IsHyphen is only
      asked for '-', in case a pdfium build leaves the hyphen's own code point;
    - the mapping error can be on any code point (pdfium then reports the character code), so
      it is asked for every other character.
    """
    calls = raw_calls()
    page = handle(textpage)
    generated, is_hyphen = calls.is_generated, calls.is_hyphen
    map_error, loose = calls.has_map_error, calls.loose_box
    rect = pdfium_c.FS_RECTF()
    ref = ctypes.byref(rect)
    count = int(pdfium_c.FPDFText_CountChars(textpage))
    codes = _page_codes(textpage, count) if count > 0 else []
    if codes is None:
        unicode = calls.get_unicode
        codes = [unicode(page, i) for i in range(count)]
    boxes: list[Rect | None] = []
    add_box = boxes.append
    hyphens: list[int] = []
    fonts: dict[int, str] = {}
    unmapped = 0
    for i, code in enumerate(codes):
        if code <= 0x20:
            if (code == 0x20 or code == 0x0D or code == 0x0A) and generated(page, i) == 1:
                add_box(None)
                continue
        elif code == 0x2D:
            if is_hyphen(page, i) == 1:
                hyphens.append(i)
        elif 0xE000 <= code <= 0xF8FF:  # is_private_use(code), inlined
            fonts[i] = font_name(textpage, i)
        # 1 or 0 (-1 is only for an index out of range, which i never is): added as it is.
        unmapped += map_error(page, i)
        if loose(page, i, ref):
            left, bottom, right, top = rect.left, rect.bottom, rect.right, rect.top
            if left < right and bottom < top:
                add_box((left, bottom, right, top))  # what the expression below gives then
            else:
                # The same expression as read_chars (same operands, same tie rule: equal
                # edges, 0.0 and -0.0 among them, give the first).
                add_box(
                    (
                        right if right < left else left,
                        top if top < bottom else bottom,
                        right if right > left else left,
                        top if top > bottom else bottom,
                    )
                )
        else:
            add_box(None)  # no box when pdfium has none; the character still counts as text
    text = "".join(map(chr, codes))
    symbols = tex_symbols(textpage, text)
    if symbols:
        text = "".join(chr(symbols.get(i, code)) for i, code in enumerate(codes))
    return PageChars(text, boxes, frozenset(hyphens), fonts), unmapped
