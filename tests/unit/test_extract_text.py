"""The pure canonical-text core: one box per character through every normalization."""

from __future__ import annotations

from truthbase.extract.text import RawChar, canonical_page, clean_chars, expand_page, finish_page
from truthbase.model import Rect


def _box(i: int) -> Rect:
    return (float(i), 0.0, float(i) + 1.0, 10.0)


def _chars(text: str, *, generated: str = "") -> list[RawChar]:
    """Characters of ``text``; positions marked 'g' in ``generated`` are pdfium-inserted."""
    out = []
    for i, ch in enumerate(text):
        gen = i < len(generated) and generated[i] == "g"
        out.append(RawChar(ord(ch), None if gen else _box(i), gen))
    return out


def _page(chars: list[RawChar]) -> tuple[str, list[Rect | None]]:
    page = canonical_page(clean_chars(chars))
    assert len(page.text) == len(page.boxes)
    return page.text, page.boxes


def test_crlf_becomes_one_unboxed_newline() -> None:
    text, boxes = _page(_chars("ab\r\ncd", generated="  gg"))
    assert text == "ab\ncd"
    assert boxes[2] is None and boxes[3] == _box(4)


def test_generated_space_has_no_box() -> None:
    text, boxes = _page(_chars("a b", generated=" g"))
    assert text == "a b" and boxes[1] is None


def test_pdfium_hyphen_joins_with_or_without_a_following_break() -> None:
    hyphen = RawChar(0x02, _box(3), hyphen=True)
    plain = [*_chars("rec"), hyphen, *_chars("ord")]
    assert _page(plain)[0] == "record"
    with_break = [*_chars("rec"), hyphen, *_chars("\r\n", generated="gg"), *_chars("ord")]
    assert _page(with_break)[0] == "record"
    marked = [*_chars("rec"), RawChar(0xFFFE, _box(3)), *_chars("ord")]
    assert _page(marked)[0] == "record"


def test_soft_hyphen_removed() -> None:
    assert _page(_chars("SS\u00ad25"))[0] == "SS25"


def test_unicode_ligature_letters_share_the_glyph_box() -> None:
    text, boxes = _page(_chars("a\ufb03x"))
    assert text == "affix"
    assert boxes[1] == boxes[2] == boxes[3] == _box(1)


def test_private_use_mapping_applies_per_font() -> None:
    chars = [
        RawChar(ord("a"), _box(0)),
        RawChar(0xE000, _box(1), font="F1"),
        RawChar(0xE000, _box(2), font="F2"),
    ]
    page = canonical_page(clean_chars(chars), {("F1", 0xE000): "fi"})
    assert page.text == "afi\ue000"
    assert page.boxes == [_box(0), _box(1), _box(1), _box(2)]


def test_nfc_composes_and_unions_boxes() -> None:
    text, boxes = _page(_chars("e\u0301t"))
    assert text == "\u00e9t"
    assert boxes[0] == (0.0, 0.0, 2.0, 10.0)
    assert boxes[1] == _box(2)


def test_an_accent_drawn_on_a_letter_becomes_the_accented_letter() -> None:
    # TeX's OT1 fonts set "ü" as the glyph "¨" over "u"; pdfium reports "¨u". Boxes as measured
    # in the lineno manual's "Uwe L¨uck": the accent's box lies over the letter's.
    chars = [
        RawChar(ord("L"), (306.2, 540.2, 313.5, 551.0)),
        RawChar(0xA8, (313.8, 540.2, 319.7, 551.0)),
        RawChar(ord("u"), (313.5, 540.2, 320.0, 551.0)),
        RawChar(ord("c"), (320.0, 540.2, 325.2, 551.0)),
        RawChar(ord("k"), (325.2, 540.2, 330.4, 551.0)),
    ]
    text, boxes = _page(chars)
    assert text == "Lück"
    assert boxes[1] == (313.5, 540.2, 320.0, 551.0)  # the union of accent and letter
    # an accent on a dotless i is on the i; a cedilla follows its letter
    text, _ = _page([RawChar(0xB4, (0.2, 0, 0.8, 10)), RawChar(0x131, (0, 0, 1, 10))])
    assert text == "\u00ed"
    text, _ = _page([RawChar(ord("c"), (0, 0, 1, 10)), RawChar(0xB8, (0.2, 0, 0.8, 10))])
    assert text == "\u00e7"
    # no precomposed letter: the letter, then its combining mark, each with its own box
    text, boxes = _page([RawChar(0x2DC, (2.3, 3, 7.8, 14)), RawChar(ord("f"), (0, 0, 6, 11))])
    assert text == "f\u0303" and boxes == [(0, 0, 6, 11), (2.3, 3, 7.8, 14)]


def test_the_slash_of_not_and_the_bar_of_mapsto_join_the_glyph_after_them() -> None:
    # charread.tex_symbols reads TeX's \not slash as U+0338 and \mapsto's bar as "↦", each set
    # before the glyph it is drawn with ("x 6= y", "x 7→ y" before).
    slash = RawChar(0x338, (5.0, 0, 6.0, 10))
    text, boxes = _page([*_chars("x "), slash, RawChar(ord("="), (5.0, 0, 7.0, 10))])
    assert text == "x \u2260" and boxes[2] == (5.0, 0, 7.0, 10)
    bar = RawChar(0x21A6, (5.0, 0, 5.5, 10))
    text, boxes = _page([*_chars("x "), bar, RawChar(0x2192, (5.0, 0, 9.0, 10)), *_chars(" y")])
    assert text == "x \u21a6 y" and boxes[2] == (5.0, 0, 9.0, 10)
    # a combining slash a PDF maps as such follows the "=" it is drawn on: it stays on that one
    on_equals = RawChar(0x338, (5.2, 0, 6.0, 10))
    text, _ = _page(
        [RawChar(ord("="), (5.0, 0, 7.0, 10)), on_equals, RawChar(ord("b"), (7, 0, 8, 10))]
    )
    assert text == "\u2260b"


def test_an_accent_or_backtick_beside_a_letter_stays_as_it_is() -> None:
    # a backtick in code and a spacing accent set on its own sit beside the next glyph
    assert _page(_chars("`kpsewhich`"))[0] == "`kpsewhich`"
    assert _page(_chars("don\u00b4t"))[0] == "don\u00b4t"


def test_surrogate_pairs_and_nul() -> None:
    chars = [RawChar(0xD835, _box(0)), RawChar(0xDC00, _box(1)), RawChar(0, _box(2))]
    text, boxes = _page(chars)
    assert text == "\U0001d400"
    assert boxes == [(0.0, 0.0, 2.0, 10.0)]


def test_line_end_hyphen_kept_as_a_real_hyphen_with_its_box() -> None:
    """The page is its own evidence in canonical_page: "high-level" elsewhere keeps the hyphen."""
    line_end = [*_chars("high"), RawChar(0x02, _box(4), hyphen=True)]
    next_line = [RawChar(ord(ch), _box(10 + i)) for i, ch in enumerate("level")]
    breaks = _chars("\r\n", generated="gg")
    text, boxes = _page([*_chars("high-level; "), *line_end, *breaks, *next_line])
    assert text == "high-level; high-level"
    assert boxes[-6] == _box(4)  # the kept hyphen is drawn on the page: it keeps its box
    assert boxes[-5] == _box(10)  # no whitespace inserted: the next half follows directly


def test_finish_page_resolves_each_mark_and_checks_the_count() -> None:
    page = expand_page(
        clean_chars([*_chars("a"), RawChar(0x02, _box(1), hyphen=True), *_chars("bc")])
    )
    assert page.text == "a\ufffebc" and page.boxes[1] == _box(1)
    assert finish_page(page, [True]).text == "a-bc"
    joined = finish_page(page, [False])
    assert joined.text == "abc" and joined.boxes == [_box(0), _box(0), _box(1)]
    for wrong in ([], [True, False]):
        try:
            finish_page(page, wrong)
        except ValueError:
            continue
        raise AssertionError(f"{wrong} accepted")


def test_soft_hyphen_is_never_a_compound_hyphen() -> None:
    assert _page(_chars("high-level high\u00adlevel"))[0] == "high-level highlevel"
