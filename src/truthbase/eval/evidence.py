"""Does a text contain a golden evidence record, does a citation span hold it: the one place
that applies the matching rules of golden/README.md to every kind of record.

- A plain record: its quote is in the text under :mod:`truthbase.text.matching` (normalize, then a
  substring; elided pieces in order).
- An OCR record (``"ocr": true``): the quote was read by a person from the scan, the text by an
  engine that misspells. After normalize() on both, the quote's words must appear in the text in
  order, at most 20% of them missing or misspelled: the longest common subsequence of the two
  word lists over a window of the text covers at least 80% of the quote's words, a word counting
  when its edit distance to the text's word is at most 1 for words up to 5 letters, at most 2
  beyond (the quote word's length decides).
- A table record (``"cells"``): every cell, and the quote (the cell holding the answer), is in
  the text. A citation holds the record when its span holds every cell: the cells of one row
  stand together in what the reader is shown.

Two choices the README leaves open, made here:

- A *word* is a whitespace-separated token of the normalized text without the punctuation and
  symbols at its ends ("polyphonic," and "polyphonic." are one word; a lone "|" or "-" is none):
  engines differ most in punctuation, and a rule meant to forgive misspelled words should not
  count a comma as one.
- The *window* is at most ``len(quote words) * 3 // 2 + 2`` text words from the first matched
  word to the last: room for words an engine split in two and for stray marks, not for picking
  the quote's words out of a whole page.

Speed: a whole index can be scanned for an OCR quote. Word pairs are compared once (a cache keyed
by the pair: a document's vocabulary repeats across its chunks), a text is rejected before any
alignment when too few of the quote's words have a counterpart anywhere in it, and alignments
start only at a text word that matches one of the quote's first words.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..text.matching import find_normalized, normalize, normalize_with_offsets, quote_pieces
from .golden import GoldenEvidence

__all__ = [
    "OCR_MIN_COVERAGE",
    "Word",
    "citation_holds",
    "edit_distance_within",
    "evidence_in",
    "locate_evidence",
    "ocr_find",
    "text_words",
    "word_matches",
]

#: The share of an OCR quote's words that must be found in order (README: at most 20% missing
#: or misspelled), as a fraction num / den so that the comparison is exact in integers.
OCR_MIN_COVERAGE = (4, 5)
#: Quote words up to this many characters may differ by one edit, longer ones by two.
_SHORT_WORD = 5


@dataclass(frozen=True, slots=True)
class Word:
    """A word of a normalized text and its [start, end) span in that text."""

    text: str
    start: int
    end: int


def _is_edge(ch: str) -> bool:
    """Punctuation or a symbol: trimmed from the ends of a word."""
    return unicodedata.category(ch)[0] in "PS"


def text_words(normalized: str) -> list[Word]:
    """The words of an already normalized text (see the module docstring)."""
    words: list[Word] = []
    at = 0
    for token in normalized.split(" "):
        start, end = at, at + len(token)
        at = end + 1
        while start < end and _is_edge(normalized[start]):
            start += 1
        while end > start and _is_edge(normalized[end - 1]):
            end -= 1
        if start < end:
            words.append(Word(normalized[start:end], start, end))
    return words


def edit_distance_within(a: str, b: str, limit: int) -> bool:
    """True when the Levenshtein distance of ``a`` and ``b`` is at most ``limit``.

    Only the diagonal band of width 2 * limit + 1 is computed, and the scan stops as soon as
    every cell of a row exceeds the limit.
    """
    if abs(len(a) - len(b)) > limit:
        return False
    if a == b:
        return True
    big = limit + 1
    previous = [j if j <= limit else big for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        current = [i if i <= limit else big] + [big] * len(b)
        low, high = max(1, i - limit), min(len(b), i + limit)
        best = current[0]
        for j in range(low, high + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            current[j] = value if value < big else big
            best = min(best, current[j])
        if best > limit:
            return False
        previous = current
    return previous[len(b)] <= limit


@lru_cache(maxsize=1 << 18)
def word_matches(quote_word: str, text_word: str) -> bool:
    """Whether a text word counts for a quote word: edit distance at most 1 for quote words of
    up to 5 characters, at most 2 beyond."""
    limit = 1 if len(quote_word) <= _SHORT_WORD else 2
    return edit_distance_within(quote_word, text_word, limit)


def _enough(found: int, total: int) -> bool:
    num, den = OCR_MIN_COVERAGE
    return found * den >= total * num


def _max_window(quote_len: int) -> int:
    return quote_len * 3 // 2 + 2


def _ocr_piece(piece: Sequence[str], words: Sequence[Word], first: int) -> tuple[int, int] | None:
    """The best window (indexes of its first and last matched word in ``words``) at or after
    ``first`` whose LCS with ``piece`` covers enough of it, or None."""
    n = len(piece)
    need = -(-n * OCR_MIN_COVERAGE[0] // OCR_MIN_COVERAGE[1])  # ceil(0.8 n)
    # prefilter: enough quote words must have a counterpart somewhere in the text
    vocabulary = {w.text for w in words[first:]}
    misses = 0
    for q in set(piece):
        if q in vocabulary or any(word_matches(q, t) for t in vocabulary):
            continue
        misses += piece.count(q)
        if misses > n - need:
            return None
    hits = [
        frozenset(i for i, q in enumerate(piece) if word_matches(q, w.text)) for w in words[first:]
    ]
    window = _max_window(n)
    best: tuple[int, int, int] | None = None  # (lcs, -length, start); larger is better
    best_span: tuple[int, int] | None = None
    for s, at_start in enumerate(hits):
        # a window that reaches ``need`` matches a word among the quote's first n - need + 1
        if not at_start or min(at_start) > n - need:
            continue
        row = [0] * (n + 1)
        for j in range(s, min(s + window, len(hits))):
            if not hits[j]:
                continue
            new = [0] * (n + 1)
            for i in range(1, n + 1):
                diagonal = row[i - 1] + 1 if (i - 1) in hits[j] else 0
                new[i] = max(row[i], new[i - 1], diagonal)
            if new[n] > row[n]:  # this word extended the best alignment: a candidate end
                score = (new[n], -(j - s), -s)
                if new[n] >= need and (best is None or score > best):
                    best, best_span = score, (first + s, first + j)
            row = new
    return best_span


def ocr_find(quote: str, normalized_text: str) -> list[tuple[int, int]] | None:
    """Spans of normalized ``normalized_text`` where the OCR quote's pieces are found in order
    under the fuzzy rule, or None. Each span runs from the first to the last matched word."""
    words = text_words(normalized_text)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece_words in _quote_words(quote):
        found = _ocr_piece(piece_words, words, cursor)
        if found is None:
            return None
        spans.append((words[found[0]].start, words[found[1]].end))
        cursor = found[1] + 1
    return spans or None


def _find(quote: str, normalized_text: str, ocr: bool) -> list[tuple[int, int]] | None:
    if ocr:
        return ocr_find(quote, normalized_text)
    return find_normalized(_pieces(quote), normalized_text)


@lru_cache(maxsize=4096)
def _pieces(quote: str) -> tuple[str, ...]:
    return tuple(quote_pieces(quote))


@lru_cache(maxsize=4096)
def _quote_words(quote: str) -> tuple[tuple[str, ...], ...]:
    """The words of each piece of a quote (pieces without words left out)."""
    pieces = (tuple(w.text for w in text_words(piece)) for piece in _pieces(quote))
    return tuple(p for p in pieces if p)


def _strings(evidence: GoldenEvidence) -> tuple[str, ...]:
    """What must be in a text for it to contain the record: the quote, and every cell."""
    return (evidence.quote, *(evidence.cells or ()))


def evidence_in(evidence: GoldenEvidence, normalized_text: str) -> bool:
    """True when an already normalized text contains the record (its quote, and its cells)."""
    return all(_find(s, normalized_text, evidence.ocr) is not None for s in _strings(evidence))


def locate_evidence(evidence: GoldenEvidence, text: str) -> tuple[int, int] | None:
    """Where the record's quote lies in ``text`` (original offsets, from its first piece's start
    to its last piece's end), or None when the text does not contain the record (for table
    evidence: the quote, or one of the cells, is missing)."""
    normalized = normalize_with_offsets(text)
    if not evidence_in(evidence, normalized.text):
        return None
    found = _find(evidence.quote, normalized.text, evidence.ocr)
    if found is None:  # pragma: no cover - evidence_in found it
        return None
    return normalized.original_span(found[0][0], found[-1][1])


def citation_holds(
    evidence: GoldenEvidence,
    located: tuple[int, int] | None,
    unit_text: str,
    start: int,
    end: int,
) -> bool:
    """Whether a citation of [start, end) of the record's unit is correct for the record.

    Table evidence: the span holds every cell. Any other record: the span overlaps the quote's
    located span (an extractive citation may cite one sentence of a longer quote).
    """
    if evidence.cells is not None:
        if not 0 <= start < end <= len(unit_text):
            return False
        cited = normalize(unit_text[start:end])
        return all(_find(c, cited, evidence.ocr) is not None for c in evidence.cells)
    return located is not None and start < located[1] and located[0] < end
