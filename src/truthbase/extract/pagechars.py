"""A page's characters as columns: the fast path of ``text``'s per-character functions.

``text.clean_chars``, ``text.expand_page`` and ``text.pua_tokens`` walk a list of ``RawChar``
records, one Python step per character. Here a page is its text (one character per pdfium
character) and a list of boxes, and each pass copies the runs between the few characters it
has to act on as slices; what it does at those characters is what the record functions do.
``tests/unit/test_extract_pagechars.py`` checks that both give the same text and boxes.

One invariant makes the flags of the records unnecessary: a generated character (a space or
line break pdfium inserted) has no box. Every use of ``RawChar.generated`` in ``text`` replaces
the box with None when it is set, and a box that is already None needs no flag. The reader
(``charread.read_page``) keeps the invariant.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import Rect
from .hyphens import HYPHEN_MARK
from .ligatures import UNICODE_LIGATURES, PuaKey, Template, Token
from .text import PageText, _union

# What text._clean acts on: NUL, pdfium's line-end hyphen codes (0x02, U+FFFE), the soft hyphen,
# CR and high surrogates. Everything else is copied as it is.
_CLEAN_AT = re.compile("[\x00\x02\r\u00ad\ud800-\udbff\ufffe]")
# What text._expand acts on: Unicode ligatures and private-use glyphs.
_EXPAND_AT = re.compile("[\ufb00-\ufb06\ue000-\uf8ff]")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
# Runs that can hold a word of ``ligatures.words_of``: letters, private-use glyphs and marks
# (which the tokens leave out, so a word runs on across one). ``[^\W\d_]`` holds every letter
# (``str.isalpha``) and the numerals that are not decimal digits, which do end a word: a run
# with any of those, a glyph or a mark is split one character at a time.
_WORDISH = re.compile("(?:[^\\W\\d_]|[\ue000-\uf8ff\ufffe])+")


@dataclass(frozen=True, slots=True)
class PageChars:
    """A page's characters: ``text[i]`` is character i (its code point, as ``chr``)."""

    text: str
    # loose box; None for generated characters and where pdfium has none
    boxes: Sequence[Rect | None]
    # Indices pdfium flags as line-end hyphens (FPDFText_IsHyphen) whose code point does not
    # already say so (0x02, U+FFFE).
    hyphens: frozenset[int] = frozenset()
    fonts: dict[int, str] = field(default_factory=dict)  # font of each private-use character


EMPTY = PageChars("", [])


def has_private_use(page: PageChars) -> bool:
    return _PRIVATE_USE.search(page.text) is not None


def _move_fonts(fonts: Mapping[int, str], spans: list[tuple[int, int, int]]) -> dict[int, str]:
    """Fonts re-indexed after cleaning: ``spans`` are the (start, end, new start) of the runs
    copied unchanged, the only place private-use characters go (none is acted on)."""
    starts = [start for start, _, _ in spans]
    moved: dict[int, str] = {}
    for index, font in fonts.items():
        at = bisect_left(starts, index + 1) - 1
        if at >= 0:
            start, end, new = spans[at]
            if index < end:
                moved[new + index - start] = font
    return moved


def clean_page(page: PageChars) -> PageChars:
    """``text.clean_chars`` on columns: marks for line-end hyphens (the whitespace after one
    skipped), soft hyphens and NULs dropped, CR LF as one LF, surrogate pairs joined."""
    text, boxes = page.text, page.boxes
    at = {m.start() for m in _CLEAN_AT.finditer(text)}
    at.update(page.hyphens)
    if not at:
        return PageChars(text, boxes, fonts=dict(page.fonts))
    parts: list[str] = []
    out: list[Rect | None] = []
    spans: list[tuple[int, int, int]] = []
    n = len(text)
    i = 0  # the next character not yet copied or consumed
    for p in sorted(at):
        if p < i:
            continue  # consumed by the character before (whitespace after a mark)
        if p > i:
            spans.append((i, p, len(out)))
            parts.append(text[i:p])
            out.extend(boxes[i:p])
        ch = text[p]
        if p in page.hyphens or ch in "\x02\ufffe\u00ad":
            if ch != "\u00ad":
                parts.append(HYPHEN_MARK)
                out.append(boxes[p])
            i = p + 1
            while i < n and text[i].isspace():
                i += 1
        elif ch == "\x00":
            i = p + 1
        elif ch == "\r":
            parts.append("\n")
            out.append(boxes[p])
            i = p + 2 if p + 1 < n and text[p + 1] == "\n" else p + 1
        elif p + 1 < n and "\udc00" <= text[p + 1] <= "\udfff":  # a high surrogate and its pair
            code = 0x10000 + ((ord(ch) - 0xD800) << 10) + (ord(text[p + 1]) - 0xDC00)
            parts.append(chr(code))
            out.append(_union([boxes[p], boxes[p + 1]]))
            i = p + 2
        else:  # a high surrogate alone stays
            spans.append((p, p + 1, len(out)))
            parts.append(ch)
            out.append(boxes[p])
            i = p + 1
    if i < n:
        spans.append((i, n, len(out)))
        parts.append(text[i:])
        out.extend(boxes[i:])
    fonts = _move_fonts(page.fonts, spans) if page.fonts else {}
    return PageChars("".join(parts), out, fonts=fonts)


def expand_page_chars(page: PageChars, pua_map: Mapping[PuaKey, str] | None = None) -> PageText:
    """``text.expand_page`` on a cleaned page: ligatures become letters that each keep the
    ligature's box."""
    text, boxes = page.text, page.boxes
    mapping = pua_map or {}
    parts: list[str] = []
    out: list[Rect | None] = []
    i = 0
    for match in _EXPAND_AT.finditer(text):
        p = match.start()
        ch = text[p]
        letters = UNICODE_LIGATURES.get(ch)
        if letters is None:  # private use
            letters = mapping.get((page.fonts.get(p) or "", ord(ch)))
            if letters is None:
                continue  # stays as it is: copied with the run it is in
        if p > i:
            parts.append(text[i:p])
            out.extend(boxes[i:p])
        parts.append(letters)
        out.extend([boxes[p]] * len(letters))
        i = p + 1
    if i == 0:
        return PageText(text, boxes)
    parts.append(text[i:])
    out.extend(boxes[i:])
    return PageText("".join(parts), out)


def pua_tokens_of(page: PageChars) -> list[Token]:
    """``text.pua_tokens`` of a cleaned page."""
    fonts = page.fonts
    tokens: list[Token] = []
    for i, ch in enumerate(page.text):
        if ch == HYPHEN_MARK:
            continue
        code = ord(ch)
        tokens.append((fonts.get(i) or "", code) if 0xE000 <= code <= 0xF8FF else ch)
    return tokens


def pua_words(page: PageChars) -> tuple[list[str], list[Template]]:
    """``ligatures.words_of(pua_tokens_of(page))``, the words without a private-use glyph as
    strings and those with one as templates (what ``ligatures.infer_from_words`` takes)."""
    plain: list[str] = []
    keyed: list[Template] = []
    text, fonts = page.text, page.fonts
    for match in _WORDISH.finditer(text):
        run = match.group()
        if run.isalpha():
            plain.append(run)
            continue
        current: list[Token] = []
        has_key = False
        for i in range(match.start(), match.end()):
            ch = text[i]
            if ch == HYPHEN_MARK:
                continue
            code = ord(ch)
            if 0xE000 <= code <= 0xF8FF:
                current.append((fonts.get(i) or "", code))
                has_key = True
            elif ch.isalpha():
                current.append(ch)
            elif current:
                if has_key:
                    keyed.append(tuple(current))
                else:
                    plain.append("".join(current))  # type: ignore[arg-type]
                current, has_key = [], False
        if current:
            if has_key:
                keyed.append(tuple(current))
            else:
                plain.append("".join(current))  # type: ignore[arg-type]
    return plain, keyed


def pua_keys(page: PageChars) -> list[PuaKey]:
    """The page's private-use glyphs as keys, in order."""
    fonts = page.fonts
    return [(fonts.get(m.start()) or "", ord(m.group())) for m in _PRIVATE_USE.finditer(page.text)]
