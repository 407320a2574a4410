"""Text drawn inside a figure or chart: its own block, never part of a sentence.

A figure made of vector graphics keeps its labels in the page's text layer ("Root layer",
"Leaf layer", axis ticks, node numbers), and in reading order they run straight into the
caption below them, so the caption's sentence began with them ("Formation of one tree layer
Root layer Leaf layer RAPTOR Tree ... Figure 1: Tree construction process: ..."). What marks
them is where they stand and what they look like: a run of short lines, with no sentence
punctuation at their ends, right above a caption line ("Figure 1:", "Fig. 2.", "Chart 3").

:func:`figure_blocks` finds such runs on a page; the sentence splitter cuts at their edges
(:mod:`.sentences`), PDF extraction records them on the unit (``Unit.figures``), chunking keeps
them apart from prose (still searchable, still highlightable) and the extractive answerer
never quotes them. :func:`looks_like_labels` judges a span on its own (a chunk that holds only
a figure's labels, with its caption in the next chunk).

Pure and deterministic: strings in, spans out.
"""

from __future__ import annotations

import re

__all__ = ["figure_blocks", "looks_like_labels"]

#: A caption line: a figure label with its number, then ":" "." or a dash ("Figure 1:",
#: "Fig. 3.", "Abbildung 2 –"). Tables are not here: their rows are a block kind of their own.
_CAPTION = re.compile(
    r"(?:fig(?:ure)?s?\.?|chart|diagram|graph|plot|abb(?:ildung)?\.?|grafik)\s*\d+[a-z]?"
    r"\s*(?:[:.|]|[-–—]\s)",
    re.IGNORECASE,
)
_LINE = re.compile(r"[^\n\r\u2028\u2029\x0b\x0c]+")
_TERMINAL_END = re.compile(r"[.!?…;,][\"'”’)\]]*$")

#: A label line is at most this share of the page's long lines...
LABEL_SHARE = 0.6
#: ...and at most this many words.
LABEL_WORDS = 6
#: A figure block has at least this many label lines (one short line above a caption can be
#: a paragraph's last line or a heading).
MIN_LABEL_LINES = 3


def _long_line(lengths: list[int]) -> int:
    """The page's long-line length: the 90th percentile of its line lengths."""
    ordered = sorted(lengths)
    return ordered[int(0.9 * (len(ordered) - 1))] if ordered else 0


def _is_label(line: str, long_line: int) -> bool:
    """A line as figures label things: short, few words, no sentence or clause end."""
    words = line.split()
    if not words or len(line) > LABEL_SHARE * long_line:
        return False
    # Ticks and node numbers (".1", "10", "3 5 1 4 5 2 3") are labels however many or
    # whatever they end with.
    if all(not ch.isalpha() for ch in line):
        return True
    return len(words) <= LABEL_WORDS and _TERMINAL_END.search(line) is None


def figure_blocks(text: str) -> list[tuple[int, int]]:
    """The spans [start, end) of the figure-text blocks of a page: each a maximal run of at
    least :data:`MIN_LABEL_LINES` label lines that ends right above a caption line (blank
    lines between them belong to the run), from its first label's start to its last label's
    end. In order, not overlapping."""
    if _CAPTION.search(text) is None:
        return []  # most pages: no caption anywhere, nothing to measure
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text)]
    lines = [(s + len(text[s:e]) - len(text[s:e].lstrip()), e) for s, e in lines]
    lines = [(s, s + len(text[s:e].rstrip())) for s, e in lines if text[s:e].strip()]
    if not lines:
        return []
    page_long_line = _long_line([e - s for s, e in lines])
    blocks: list[tuple[int, int]] = []
    floor = 0  # a block never reaches back into the one before
    for i, (start, end) in enumerate(lines):
        if not _CAPTION.match(text, start, end):
            continue
        first = i
        # The caption's first line is as wide as the column: the measure where the page (or
        # a chunk of it) is mostly labels.
        long_line = max(page_long_line, end - start)
        while first > floor and _is_label(
            text[lines[first - 1][0] : lines[first - 1][1]], long_line
        ):
            first -= 1
        if i - first >= MIN_LABEL_LINES:
            blocks.append((lines[first][0], lines[i - 1][1]))
        floor = i + 1
    return blocks


def looks_like_labels(text: str) -> bool:
    """Whether ``text`` on its own reads as a figure's labels rather than prose: at least
    :data:`MIN_LABEL_LINES` lines, nearly all of them short label lines (measured against
    its own longest lines, and at most :data:`LABEL_WORDS` words each)."""
    lines = [m.group().strip() for m in _LINE.finditer(text)]
    lines = [line for line in lines if line]
    if len(lines) < MIN_LABEL_LINES:
        return False
    # Against a full line's width of prose (80 characters), not the span's own lines: a
    # figure's labels are all short together.
    labels = sum(_is_label(line, max(80, _long_line([len(x) for x in lines]))) for line in lines)
    return labels >= 0.8 * len(lines)
