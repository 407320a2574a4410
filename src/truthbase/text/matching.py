"""The one quote matcher: the normative matching rule of golden/README.md.

A quote Q "is in" a text T when normalize(Q) is a substring of normalize(T). The same code runs
online (citation verification), in the audit command and in the tests, so a citation marked
verified and a golden quote marked found mean the same thing.

``normalize_with_offsets`` also returns, for every normalized character, the span of original
characters it came from, so a match in normalized text turns back into a span of the canonical
text (and from there into glyph boxes).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Invisible joiners: removed together with any whitespace right after them (rule 2).
_JOINERS = frozenset("\u00ad\ufffe\u200b\u200c\u200d\ufeff")
_SINGLE_QUOTES = frozenset("\u2018\u2019\u201a\u201b\u2032")
_DOUBLE_QUOTES = frozenset("\u201c\u201d\u201e\u201f\u2033")
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212")
_ELLIPSIS = "..."


@dataclass(frozen=True, slots=True)
class Normalized:
    """Normalized text with, per character, the [start, end) span of the original it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that normalized characters [start, end) came from."""
        if not 0 <= start < end <= len(self.text):
            raise ValueError(f"bad normalized span [{start}, {end}) of {len(self.text)}")
        return self.starts[start], self.ends[end - 1]


_Item = tuple[str, int, int]  # (character, original start, original end)


def _nfkc(text: str) -> list[_Item]:
    """Rule 1, per cluster of a base character and its combining marks, keeping offsets."""
    items: list[_Item] = []
    i = 0
    n = len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        for ch in unicodedata.normalize("NFKC", text[i:j]):
            items.append((ch, i, j))
        i = j
    return items


def _drop_joiners(items: list[_Item]) -> list[_Item]:
    """Rule 2: remove soft hyphens, U+FFFE and zero-width characters plus the whitespace after."""
    out: list[_Item] = []
    skipping_space = False
    for item in items:
        ch = item[0]
        if ch in _JOINERS:
            skipping_space = True
            continue
        if skipping_space and ch.isspace():
            continue
        skipping_space = False
        out.append(item)
    return out


def _map_punctuation(items: list[_Item]) -> list[_Item]:
    """Rule 3: typographic quotes to ASCII, dashes and minus to '-'."""
    out: list[_Item] = []
    for ch, s, e in items:
        if ch in _SINGLE_QUOTES:
            ch = "'"
        elif ch in _DOUBLE_QUOTES:
            ch = '"'
        elif ch in _DASHES:
            ch = "-"
        out.append((ch, s, e))
    return out


def _join_hyphenated(items: list[_Item]) -> list[_Item]:
    """Rule 4: a hyphen followed by whitespace between two letters loses the whitespace."""
    out: list[_Item] = []
    i = 0
    n = len(items)
    while i < n:
        out.append(items[i])
        ch = items[i][0]
        if ch == "-" and len(out) >= 2 and out[-2][0].isalpha():
            j = i + 1
            while j < n and items[j][0].isspace():
                j += 1
            if j > i + 1 and j < n and items[j][0].isalpha():
                i = j
                continue
        i += 1
    return out


def _collapse_and_fold(items: list[_Item]) -> list[_Item]:
    """Rule 5: whitespace runs to one space, strip both ends, case-fold."""
    out: list[_Item] = []
    pending_space: _Item | None = None
    for ch, s, e in items:
        if ch.isspace():
            start = s if pending_space is None else pending_space[1]
            pending_space = (" ", start, e)
            continue
        if pending_space is not None and out:
            out.append(pending_space)
        pending_space = None
        for folded in ch.casefold():
            out.append((folded, s, e))
    return out


def normalize_with_offsets(text: str) -> Normalized:
    """Apply the matching rule's normalization, keeping where each character came from."""
    items = _collapse_and_fold(_join_hyphenated(_map_punctuation(_drop_joiners(_nfkc(text)))))
    return Normalized(
        text="".join(ch for ch, _, _ in items),
        starts=tuple(s for _, s, _ in items),
        ends=tuple(e for _, _, e in items),
    )


def normalize(text: str) -> str:
    """The normalized form of ``text`` under the matching rule."""
    return normalize_with_offsets(text).text


def quote_pieces(quote: str) -> list[str]:
    """The normalized pieces of a quote; more than one when it elides with '...' or '…'."""
    normalized = normalize(quote)  # NFKC turns '…' into '...'
    return [piece.strip() for piece in normalized.split(_ELLIPSIS) if piece.strip()]


def find_normalized(pieces: Iterable[str], haystack: str) -> list[tuple[int, int]] | None:
    """Positions of ``pieces`` found in order in normalized ``haystack``, or None."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in pieces:
        at = haystack.find(piece, cursor)
        if at < 0:
            return None
        spans.append((at, at + len(piece)))
        cursor = at + len(piece)
    return spans or None


def quote_in(quote: str, text: str) -> bool:
    """True when ``quote`` is in ``text`` under the matching rule (elisions included)."""
    return find_normalized(quote_pieces(quote), normalize(text)) is not None


def find_quote(quote: str, text: str) -> list[tuple[int, int]] | None:
    """Spans of ``text`` (original offsets) that match the quote's pieces in order, or None."""
    normalized = normalize_with_offsets(text)
    found = find_normalized(quote_pieces(quote), normalized.text)
    if found is None:
        return None
    return [normalized.original_span(s, e) for s, e in found]
