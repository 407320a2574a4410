"""Find the prompts' delimiter tags in data text, look-alikes included, and defuse them.

A document (or a question) must not be able to close the delimiter it sits in and speak as the
user. Matching the tags on the raw text misses look-alikes a model reads the same way: a tag
with an invisible character inside (``<\\u200b/source>``, ``<\\u2060/sources>``, bidi controls,
Unicode tag characters), a fullwidth one (``＜/source＞``), fullwidth letters. So the tags are
matched on a *folded* copy of the text: each character NFKC-normalized on its own (so a
combining mark after ``<`` cannot compose it into another character), invisible characters
(format, combining and control characters, the Hangul fillers) dropped, and a few
``<``/``/`` confusables NFKC keeps apart mapped to ASCII. Each match's ``<`` is then replaced
in the *original* text by ``&lt;``: nothing else of the text changes, so ordinary text (ZWJ in
an emoji or a Persian word, ligatures, fullwidth CJK punctuation) reaches the model as stored.

Pure.
"""

from __future__ import annotations

import re
import sys
import unicodedata

__all__ = ["LT_CHARS", "defuse_tags", "fold", "scan_lt_chars"]

#: Characters no font draws but the text may carry between ``<`` and a tag name.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Cc", "Co", "Cn"})
#: Default-ignorable letters (category Lo, yet drawn as nothing).
_INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: Confusables of ``<`` and ``/`` that NFKC does not map to ASCII.
_CONFUSABLES = {
    "\u2039": "<",  # SINGLE LEFT-POINTING ANGLE QUOTATION MARK
    "\u2329": "<",  # LEFT-POINTING ANGLE BRACKET
    "\u27e8": "<",  # MATHEMATICAL LEFT ANGLE BRACKET
    "\u3008": "<",  # LEFT ANGLE BRACKET
    "\u02c2": "<",  # MODIFIER LETTER LEFT ARROWHEAD
    "\u1438": "<",  # CANADIAN SYLLABICS PA
    "\u2044": "/",  # FRACTION SLASH
    "\u2215": "/",  # DIVISION SLASH
    "\u29f8": "/",  # BIG SOLIDUS
    "\u30ce": "/",  # KATAKANA LETTER NO
}
_ESCAPED_LT = "&lt;"


def _fold_char(ch: str) -> str:
    if ch in _CONFUSABLES:
        return _CONFUSABLES[ch]
    if ch.isspace():
        return ch
    if ch in _INVISIBLE_LETTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES:
        return ""
    folded = unicodedata.normalize("NFKC", ch)
    return _CONFUSABLES.get(folded, folded)


#: Every character that folds to a text holding ``<``; :func:`scan_lt_chars` derives the same
#: set from the whole of Unicode (a unit test keeps the two equal as Python's Unicode changes).
LT_CHARS = frozenset("<\uff1c\ufe64\ufe3f") | {c for c, a in _CONFUSABLES.items() if a == "<"}


def scan_lt_chars() -> frozenset[str]:
    """Every code point (surrogates aside) whose fold holds ``<``; slow (a second or two)."""
    return frozenset(
        chr(c)
        for c in range(sys.maxunicode + 1)
        if not 0xD800 <= c < 0xE000 and "<" in _fold_char(chr(c))
    )


def fold(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the index in ``text`` it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = _fold_char(ch)
        out.append(piece)
        origin.extend([i] * len(piece))
    return "".join(out), origin


def defuse_tags(text: str, tag: re.Pattern[str]) -> str:
    """``text`` with the ``<`` of every match of ``tag`` (a pattern matching at a ``<``, as
    ``<(?=\\s*/?\\s*source\\b)``) written ``&lt;``, the matches found on the folded text."""
    if not any(ch in text for ch in LT_CHARS):  # the common case: no tag can start anywhere
        return text
    folded, origin = fold(text)
    starts = sorted({origin[m.start()] for m in tag.finditer(folded)})
    if not starts:
        return text
    pieces: list[str] = []
    last = 0
    for i in starts:
        pieces.append(text[last:i])
        pieces.append(_ESCAPED_LT)
        last = i + 1
    pieces.append(text[last:])
    return "".join(pieces)
