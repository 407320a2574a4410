"""Canonical text of a page from pdfium's character records (pure functions, no pdfium).

The invariant every function here keeps: one box (or None) per output character. Anything that
changes the number of characters (line-break normalization, hyphenation joins, ligature
expansion, NFC composition) decides the boxes of its output at the same time.

Steps: ``clean_chars`` (per page) -> document-wide ligature inference (``ligatures``) ->
``expand_page`` (text with U+FFFE where pdfium marked a line-end hyphen) -> document-wide
hyphen decisions (``hyphens``) -> ``finish_page`` (each mark joins or becomes "-", accents drawn
on letters join them, then NFC).
``canonical_page`` runs the last three for one page on its own.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..model import Rect
from .hyphens import HYPHEN_MARK, decide_line_end_hyphens
from .ligatures import UNICODE_LIGATURES, PuaKey, Token, is_private_use

# pdfium's marker for a line-end hyphen: GetUnicode reports 0x02 (with IsHyphen set), GetText
# reports U+FFFE. Both mean "the line ends in a hyphen and the word continues on the next line";
# whether that hyphen is a word break or a compound's hyphen is decided later (``hyphens``).
_LINE_END_HYPHENS = frozenset({0x02, 0xFFFE})
_SOFT_HYPHEN = 0x00AD  # a discretionary break by definition: always removed
_MARK = ord(HYPHEN_MARK)
_CR, _LF = 0x0D, 0x0A


class RawChar(NamedTuple):
    """One entry of pdfium's character array, as read by the I/O shell.

    A named tuple, not a dataclass: a page has thousands and building a frozen dataclass costs
    several times a tuple (measured: the biggest share of reading the seed corpus's chars).
    """

    code: int  # FPDFText_GetUnicode
    box: Rect | None  # loose box in user space; None for generated characters
    generated: bool = False  # FPDFText_IsGenerated: pdfium inserted it (space, line break)
    hyphen: bool = False  # FPDFText_IsHyphen: a line-end hyphenation
    font: str | None = None  # only read for private-use code points (per-font repair)

    def pua_key(self) -> PuaKey | None:
        if is_private_use(self.code):
            return (self.font or "", self.code)
        return None


@dataclass(frozen=True, slots=True)
class PageText:
    text: str
    boxes: Sequence[Rect | None]


def _is_space(code: int) -> bool:
    return chr(code).isspace()


def _union(boxes: Sequence[Rect | None]) -> Rect | None:
    real = [b for b in boxes if b is not None]
    if not real:
        return None
    return (
        min(b[0] for b in real),
        min(b[1] for b in real),
        max(b[2] for b in real),
        max(b[3] for b in real),
    )


def _clean(chars: Sequence[RawChar]) -> list[RawChar]:
    """Mark line-end hyphens, drop soft hyphens and NULs, turn CR LF into one LF, pair surrogates.

    A line-end hyphen becomes one U+FFFE character (hyphen=True) that keeps the hyphen's glyph
    box; ``finish_page`` later joins it away or turns it into "-".
    """
    out: list[RawChar] = []
    i, n = 0, len(chars)
    while i < n:
        c = chars[i]
        if c.hyphen or c.code in _LINE_END_HYPHENS or c.code == _SOFT_HYPHEN:
            if c.code != _SOFT_HYPHEN:
                out.append(RawChar(_MARK, None if c.generated else c.box, hyphen=True))
            # The halves stay adjacent either way: skip whatever whitespace pdfium put after the
            # mark (current pdfium puts none, older builds and soft hyphens at a line end put a
            # break).
            i += 1
            while i < n and _is_space(chars[i].code):
                i += 1
            continue
        if c.code == 0:
            # pdfium reports 0 for glyphs it could not map at all; GetText skips them too.
            i += 1
            continue
        if c.code == _CR:
            nxt = chars[i + 1] if i + 1 < n else None
            pair = nxt is not None and nxt.code == _LF
            generated = c.generated and (not pair or (nxt is not None and nxt.generated))
            out.append(RawChar(_LF, None if generated else c.box, generated))
            i += 2 if pair else 1
            continue
        if 0xD800 <= c.code <= 0xDBFF and i + 1 < n and 0xDC00 <= chars[i + 1].code <= 0xDFFF:
            low = chars[i + 1]
            code = 0x10000 + ((c.code - 0xD800) << 10) + (low.code - 0xDC00)
            out.append(RawChar(code, _union([c.box, low.box]), c.generated and low.generated))
            i += 2
            continue
        out.append(c)
        i += 1
    return out


def clean_chars(chars: Sequence[RawChar]) -> list[RawChar]:
    """Public form of the cleaning pass: ligature inference runs on joined words."""
    return _clean(chars)


def pua_tokens(chars: Sequence[RawChar]) -> list[Token]:
    """The page as inference tokens: private-use glyphs as keys, everything else as text."""
    tokens: list[Token] = []
    append = tokens.append
    for c in chars:
        code = c.code
        if code == _MARK:
            continue  # inference reads the two halves as one word, as it did before marks
        # c.pua_key(), inlined: this runs once per character of the document.
        append((c.font or "", code) if 0xE000 <= code <= 0xF8FF else chr(code))
    return tokens


def _expand(
    chars: Sequence[RawChar], pua_map: Mapping[PuaKey, str]
) -> tuple[list[str], list[Rect | None]]:
    """Characters to text: ligatures become letters that each keep the ligature's box."""
    text: list[str] = []
    boxes: list[Rect | None] = []
    add_text, add_box = text.append, boxes.append
    ligatures = UNICODE_LIGATURES
    for c in chars:
        box = None if c.generated else c.box
        code = c.code
        ch = chr(code)
        letters = ligatures.get(ch)
        if letters is None and 0xE000 <= code <= 0xF8FF:  # c.pua_key(), inlined
            letters = pua_map.get((c.font or "", code))
        if letters is None:
            add_text(ch)
            add_box(box)
            continue
        for letter in letters:
            add_text(letter)
            add_box(box)
    return text, boxes


#: Spacing accents and the combining marks they stand for. TeX's 7-bit fonts (OT1, the default
#: before T1 and still in many manuals and papers) have no accented letters: "ü" is the glyph "¨"
#: set over "u", which pdfium reports as two characters, "¨u" ("Schr¨oder", Dutch "´e´en").
_ACCENTS: dict[str, str] = {
    "\u00a8": "\u0308",  # ¨ diaeresis
    "\u00b4": "\u0301",  # ´ acute
    "`": "\u0300",  # grave (TeX's grave accent glyph reads as U+0060)
    "\u02c6": "\u0302",  # ˆ circumflex
    "\u02dc": "\u0303",  # ˜ tilde
    "\u00af": "\u0304",  # ¯ macron
    "\u02d8": "\u0306",  # ˘ breve
    "\u02d9": "\u0307",  # ˙ dot above
    "\u02da": "\u030a",  # ˚ ring above
    "\u02dd": "\u030b",  # ˝ double acute
    "\u02c7": "\u030c",  # ˇ caron
    "\u00b8": "\u0327",  # ¸ cedilla (set after its letter)
    "\u02db": "\u0328",  # ˛ ogonek
}
#: The dotless letters TeX puts an accent on (\"\i for "ï"): the accented letter is the dotted one.
_DOTLESS = {"\u0131": "i", "\u0237": "j"}


#: What ``charread.tex_symbols`` makes of TeX's math-symbol glyphs drawn over the next one: the
#: slash of \not (set before the relation it negates: "=" then NFC makes "≠") and the bar of
#: \mapsto (set before its arrow, which it joins: "↦").
_NOT_SLASH = "\u0338"
_MAPSTO, _ARROW = "\u21a6", "\u2192"
#: Every character ``_stacked_accents`` may join to the one beside it.
_DRAWN_ON = frozenset((*_ACCENTS, _NOT_SLASH, _MAPSTO))


def _over(accent: Rect, letter: Rect) -> bool:
    """Whether the accent's glyph is drawn on the letter: its middle within the letter's width
    (a spacing accent that stands alone, or a backtick in code, sits beside the next glyph)."""
    middle = (accent[0] + accent[2]) / 2
    return letter[0] <= middle <= letter[2]


def _stacked_accents(text: str, boxes: Sequence[Rect | None]) -> tuple[str, list[Rect | None]]:
    """Each spacing accent drawn on the letter next to it (before it, or after it for a
    cedilla), as that letter followed by the combining mark, each with its own box: NFC then
    makes them one character (``_nfc``: "ü", the union of the boxes), or keeps the mark on the
    letter where Unicode has no such character ("f̃")."""
    if _DRAWN_ON.isdisjoint(text):  # most pages: one pass over the text
        return text, list(boxes)
    out_text: list[str] = []
    out_boxes: list[Rect | None] = []
    i, n = 0, len(text)
    while i < n:
        ch, box = text[i], boxes[i]
        after = i + 1
        drawn_on = boxes[after] if after < n else None
        # Only where the glyph is drawn on the next one: a combining U+0338 a PDF maps as such
        # follows the character it is on, and stays there.
        if box is not None and drawn_on is not None and _over(box, drawn_on):
            if ch == _NOT_SLASH and not text[after].isspace():
                out_text += [text[after], ch]  # the relation, then the slash over it
                out_boxes += [drawn_on, box]
                i += 2
                continue
            if ch == _MAPSTO and text[after] == _ARROW:
                out_text.append(ch)
                out_boxes.append(_union([box, drawn_on]))
                i += 2
                continue
        mark = _ACCENTS.get(ch)
        if mark is not None and box is not None:
            if drawn_on is not None and text[after].isalpha() and _over(box, drawn_on):
                out_text += [_DOTLESS.get(text[after], text[after]), mark]
                out_boxes += [drawn_on, box]
                i += 2
                continue
            before = out_boxes[-1] if out_boxes else None
            if before is not None and out_text[-1].isalpha() and _over(box, before):
                out_text[-1] = _DOTLESS.get(out_text[-1], out_text[-1])
                out_text.append(mark)
                out_boxes.append(box)
                i += 1
                continue
        out_text.append(ch)
        out_boxes.append(box)
        i += 1
    return "".join(out_text), out_boxes


def _composes(ch: str) -> bool:
    """True for characters NFC may fold into the character before them."""
    if unicodedata.combining(ch):
        return True
    code = ord(ch)
    # Hangul vowel and trailing jamo compose with the syllable before them, class 0 or not.
    return 0x1160 <= code <= 0x11FF or 0x3099 <= code <= 0x309A


def _nfc(text: Sequence[str], boxes: Sequence[Rect | None]) -> PageText:
    """NFC per cluster (a character and what composes onto it); the cluster's box is the union."""
    # Below U+0300 nothing composes and everything is NFC: a page whose other characters
    # neither compose nor change alone comes out as it went in (most pages; checked per distinct
    # character, not per character).
    if all(
        ch < "\u0300" or (not _composes(ch) and unicodedata.is_normalized("NFC", ch))
        for ch in set(text)
    ):
        return PageText(text if isinstance(text, str) else "".join(text), list(boxes))
    out_text: list[str] = []
    out_boxes: list[Rect | None] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and _composes(text[j]):
            j += 1
        if j == i + 1 and (text[i] < "\u0300" or unicodedata.is_normalized("NFC", text[i])):
            out_text.append(text[i])
            out_boxes.append(boxes[i])
        else:
            cluster = "".join(text[i:j])
            normalized = unicodedata.normalize("NFC", cluster)
            if normalized == cluster:
                out_text.extend(text[i:j])
                out_boxes.extend(boxes[i:j])
            else:
                box = _union(boxes[i:j])
                out_text.extend(normalized)
                out_boxes.extend([box] * len(normalized))
        i = j
    return PageText("".join(out_text), out_boxes)


def expand_page(chars: Sequence[RawChar], pua_map: Mapping[PuaKey, str] | None = None) -> PageText:
    """Cleaned characters to text and boxes, ligatures expanded, line-end hyphens still U+FFFE."""
    text, boxes = _expand(chars, pua_map or {})
    return PageText("".join(text), boxes)


def finish_page(page: PageText, keep: Sequence[bool]) -> PageText:
    """Resolve each U+FFFE mark (``keep`` holds one decision per mark, in order), put each
    spacing accent drawn on a letter onto it (``_stacked_accents``), then NFC.

    A kept mark becomes "-" with the hyphen's glyph box (it is drawn on the page); a joined one
    disappears with its box. No whitespace is added: the halves stay adjacent.
    """
    if len(page.text) != len(page.boxes):
        raise ValueError("a page's text and boxes differ in length")
    # Slices between the marks, not a loop per character.
    parts: list[str] = []
    boxes: list[Rect | None] = []
    decisions = iter(keep)
    start = 0
    at = page.text.find(HYPHEN_MARK)
    while at >= 0:
        parts.append(page.text[start:at])
        boxes.extend(page.boxes[start:at])
        decision = next(decisions, None)
        if decision is None:
            raise ValueError("fewer hyphen decisions than line-end hyphens")
        if decision:
            parts.append("-")
            boxes.append(page.boxes[at])
        start = at + 1
        at = page.text.find(HYPHEN_MARK, start)
    parts.append(page.text[start:])
    boxes.extend(page.boxes[start:])
    if next(decisions, None) is not None:
        raise ValueError("more hyphen decisions than line-end hyphens")
    return _nfc(*_stacked_accents("".join(parts), boxes))


def canonical_page(
    chars: Sequence[RawChar], pua_map: Mapping[PuaKey, str] | None = None
) -> PageText:
    """The canonical text of one page and its per-character boxes, the page its own evidence.

    ``chars`` must already be cleaned (``clean_chars``): the document-level ligature inference
    runs between the two steps. Whole documents decide line-end hyphens from all their pages
    (``expand_page``, ``decide_line_end_hyphens``, ``finish_page``).
    """
    page = expand_page(chars, pua_map)
    (keep,) = decide_line_end_hyphens([page.text])
    return finish_page(page, keep)
