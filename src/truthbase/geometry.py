"""Span geometry: any character span of a page to one rectangle per rendered line.

Pure functions over the per-character glyph boxes of a unit (PDF user space, y up). Chunks use
this for their highlight, citations for sentence-level highlights, and the server for any span.
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import Rect

# Two consecutive glyphs sit on one line when their vertical extents overlap by at least this
# share of the smaller height. Superscripts and subscripts overlap far more than this; the next
# line of a paragraph (leading >= 1.0 em with loose boxes) overlaps far less.
_SAME_LINE_OVERLAP = 0.5
# Glyphs of a line that runs along y touch (OCR letter boxes tile their word) or leave a word
# space, under half the line's height (its extent across, in x); lines of such a page are kept
# apart by the text's line breaks.
_STACK_GAP = 0.5


def _vertical_overlap(a: Rect, b: Rect) -> float:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min(a[3] - a[1], b[3] - b[1])
    if smaller <= 0:
        return 1.0 if overlap >= 0 else 0.0
    return overlap / smaller


def _stacked(a: Rect, b: Rect) -> bool:
    """True for two glyphs one above the other, touching, that share their horizontal extent:
    consecutive letters of a line that runs along y in user space (an OCR'd page that /Rotate
    turns: its text is upright only on screen)."""
    overlap = min(a[2], b[2]) - max(a[0], b[0])
    narrower = min(a[2] - a[0], b[2] - b[0])
    if narrower <= 0 or overlap / narrower < _SAME_LINE_OVERLAP:
        return False
    gap = max(a[1], b[1]) - min(a[3], b[3])
    return gap <= _STACK_GAP * narrower  # a word space is about a third of the line's height


def _union(a: Rect, b: Rect) -> Rect:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def span_line_rects(text: str, boxes: Sequence[Rect | None], start: int, end: int) -> list[Rect]:
    """One rectangle per rendered line covering the glyphs of ``text[start:end]``.

    A new line starts where the text has a line break or where the next glyph does not share the
    previous glyph's vertical band (a wrap to the next line or column), unless the two are
    stacked (same horizontal extent, touching: a line that runs along y in user space, as on an
    OCR'd page with /Rotate 90). Direction is not used, so right-to-left runs stay one line.
    Characters without a box (synthesized spaces and breaks) contribute nothing.
    """
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"span [{start}, {end}) outside text of length {len(text)}")
    rects: list[Rect] = []
    current: Rect | None = None
    last: Rect | None = None
    for i in range(start, end):
        if text[i] in "\n\r\u2028\u2029":
            if current is not None:
                rects.append(current)
            current = last = None
            continue
        box = boxes[i]
        if box is None:
            continue
        if current is None or last is None:
            current = box
        elif _vertical_overlap(last, box) < _SAME_LINE_OVERLAP and not _stacked(last, box):
            rects.append(current)
            current = box
        else:
            current = _union(current, box)
        last = box
    if current is not None:
        rects.append(current)
    return rects
