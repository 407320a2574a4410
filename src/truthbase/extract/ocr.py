"""OCR words to canonical text with glyph boxes in PDF user space (pure functions, no engine).

An OCR engine reads a page rendered to an image and reports lines of words, each with its
pixel box, its confidence and, when the engine knows them, one box per symbol (Tesseract does).
This module turns that into the same kind of page text a text layer gives (``text.PageText``):

- words joined by one synthesized space, lines by one synthesized line break (box None), as
  pdfium's text pages come out; a line that ends in a hyphen before a letter leaves the hyphen
  mark (U+FFFE) that the document-wide hyphen decisions (``hyphens``) join or keep;
- each letter's box spans its symbol's share of the word (symbols' boxes cut at the middle of
  the gaps between them, so the word's letters tile its box like a font's advance widths), or
  an equal share when the engine gives no symbols; vertically, the line's band from the
  baseline (ascent above it, descent below it, like pdfium's loose boxes take the font's ascent
  and descent) united with the word's own box, so a line's highlight has one even height;
- boxes converted from image pixels (y down) to PDF user space through the rendered frame: the
  page's crop box and the total clockwise rotation of the render (the page's /Rotate plus any
  turn applied after orientation detection).

Ligature code points are expanded (each letter keeping the ligature's box), and NFC runs later
in ``text.finish_page``, as for text pages.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Rect
from .hyphens import HYPHEN_MARK
from .ligatures import UNICODE_LIGATURES
from .text import PageText

__all__ = [
    "MIN_WORD_CONFIDENCE",
    "OcrLine",
    "OcrPage",
    "OcrText",
    "OcrWord",
    "PixelBox",
    "RenderFrame",
    "has_usable_text",
    "large_print_factor",
    "letter_boxes",
    "ocr_page_text",
    "pixel_to_user",
    "render_scale",
]

#: (left, top, right, bottom) in image pixels, y growing downwards (the engine's convention).
PixelBox = tuple[float, float, float, float]

#: Words the engine is less sure of than this (0-100) are specks, rules and picture edges read as
#: letters (measured on the corpus scans: real words score 25 and up, specks 0-10).
MIN_WORD_CONFIDENCE = 10.0

#: Tesseract misreads very large print (measured on the poster page of ocrmypdf-multipage.pdf:
#: letters 122 px above the baseline read "9OQO0O0x9O000 pixels at BOO DP", 73 px read
#: "9000x9000 pixels at 300 DPI"); a page whose typical line is taller than this is read again
#: rendered smaller, its letters :data:`_TARGET_ASCENT_PX` tall.
_MAX_ASCENT_PX = 90.0
_TARGET_ASCENT_PX = 60.0

_HYPHENS = "-\u2010"
_POINTS_PER_INCH = 72.0


@dataclass(frozen=True, slots=True)
class OcrWord:
    """One word as the engine read it; ``symbols`` pairs each symbol's text with its box."""

    text: str
    box: PixelBox
    confidence: float  # 0..100
    symbols: tuple[tuple[str, PixelBox], ...] = ()


@dataclass(frozen=True, slots=True)
class OcrLine:
    """A text line in reading order, with its baseline and the heights of its letters' band.

    ``baseline`` is two points on it, in pixels; ``ascent`` and ``descent`` are how far above
    and below the baseline the line's letters reach (x-height plus ascenders, descenders).
    """

    words: tuple[OcrWord, ...]
    baseline: tuple[tuple[float, float], tuple[float, float]] | None = None
    ascent: float | None = None
    descent: float | None = None


@dataclass(frozen=True, slots=True)
class OcrPage:
    """What the engine read from one image of ``width`` x ``height`` pixels."""

    lines: tuple[OcrLine, ...]
    width: int
    height: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderFrame:
    """How a page was rendered: its crop box (user space), the total clockwise rotation of the
    image against user space (the page's /Rotate plus any extra turn), and the image size."""

    cropbox: Rect
    rotation: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class OcrText:
    """A page's OCR text (hyphen marks not yet decided) with the words kept and their mean
    confidence."""

    page: PageText
    words: int
    mean_confidence: float


def has_usable_text(text: str) -> bool:
    """True when a text layer has at least one letter or digit.

    Pages without one have no text layer, or a font without a Unicode mapping whose glyphs come
    out as control characters (``ocrmypdf-type3_font_nomapping.pdf``): those are OCR'd. Digits
    count so that a chart whose only text is its tick labels keeps its own (exact) text.
    """
    return any(ch.isalnum() for ch in text)


def render_scale(width_pt: float, height_pt: float, dpi: float, max_megapixels: float) -> float:
    """Pixels per point to render a page at ``dpi``, lowered so that the image stays within
    ``max_megapixels`` (a poster page at 300 dpi is 81 megapixels)."""
    scale = dpi / _POINTS_PER_INCH
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    limit = max_megapixels * 1e6
    if area * scale * scale > limit:
        scale = math.sqrt(limit / area)
    return scale


def large_print_factor(page: OcrPage) -> float | None:
    """The factor (< 1) to render the page by for a second reading when its typical (median)
    line's letters stand more than :data:`_MAX_ASCENT_PX` above the baseline; None otherwise."""
    ascents = sorted(line.ascent for line in page.lines if line.ascent and line.words)
    if not ascents:
        return None
    typical = ascents[len(ascents) // 2]
    return _TARGET_ASCENT_PX / typical if typical > _MAX_ASCENT_PX else None


def _point_to_user(x: float, y: float, frame: RenderFrame) -> tuple[float, float]:
    x0, y0, x1, y1 = frame.cropbox
    fx = x / frame.width if frame.width else 0.0
    fy = y / frame.height if frame.height else 0.0
    rotation = frame.rotation % 360
    # The image's top-left corner is the crop box corner that the clockwise turn brings there:
    # (x0, y1) unturned, (x0, y0) at 90, (x1, y0) at 180, (x1, y1) at 270.
    if rotation == 0:
        return x0 + fx * (x1 - x0), y1 - fy * (y1 - y0)
    if rotation == 90:
        return x0 + fy * (x1 - x0), y0 + fx * (y1 - y0)
    if rotation == 180:
        return x1 - fx * (x1 - x0), y0 + fy * (y1 - y0)
    if rotation == 270:
        return x1 - fy * (x1 - x0), y1 - fx * (y1 - y0)
    raise ValueError(f"rotation {frame.rotation} is not a multiple of 90 degrees")


def pixel_to_user(box: PixelBox, frame: RenderFrame) -> Rect:
    """A pixel box of the rendered image as a rect in PDF user space (x0 <= x1, y0 <= y1)."""
    ax, ay = _point_to_user(box[0], box[1], frame)
    bx, by = _point_to_user(box[2], box[3], frame)
    return (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))


def _band(word: OcrWord, line: OcrLine) -> tuple[float, float]:
    """The word's letters' vertical extent in pixels (top, bottom)."""
    top, bottom = word.box[1], word.box[3]
    if line.baseline is None or line.ascent is None or line.descent is None:
        return top, bottom
    if line.ascent <= 0 or line.descent < 0:
        return top, bottom
    (bx0, by0), (bx1, by1) = line.baseline
    middle = (word.box[0] + word.box[2]) / 2
    base = by0 if bx1 == bx0 else by0 + (by1 - by0) * (middle - bx0) / (bx1 - bx0)
    return min(top, base - line.ascent), max(bottom, base + line.descent)


def _expand(text: str) -> str:
    return "".join(UNICODE_LIGATURES.get(ch, ch) for ch in text)


def _cuts(low: float, high: float, spans: Sequence[tuple[float, float]]) -> list[float] | None:
    """Where consecutive symbols (their extents along the reading direction, increasing) part:
    the middle of each gap, from ``low`` to ``high``; None when one would get no extent."""
    cuts = [low]
    for (_, before_end), (after_start, _) in itertools.pairwise(spans):
        cuts.append(min(max((before_end + after_start) / 2, cuts[-1]), high))
    cuts.append(high)
    return cuts if all(a < b for a, b in itertools.pairwise(cuts)) else None


def _symbol_stretches(
    word: OcrWord, symbols: Sequence[tuple[str, PixelBox]]
) -> tuple[int, list[tuple[float, float]]] | None:
    """Each symbol's stretch of the word's box along the reading direction, and that axis (0: x,
    1: y). The direction is the symbols' own: left to right as usual; top to bottom or bottom to
    top for a vertical line (Tesseract reads those on a sideways page it was not turned for)."""
    first, last = symbols[0][1], symbols[-1][1]
    dx = (last[0] + last[2] - first[0] - first[2]) / 2
    dy = (last[1] + last[3] - first[1] - first[3]) / 2
    axis = 1 if abs(dy) > abs(dx) else 0
    backwards = (dy if axis else dx) < 0
    low, high = word.box[axis], word.box[axis + 2]
    spans = [(box[axis], box[axis + 2]) for _, box in symbols]
    if backwards:  # mirror, cut, mirror back
        cuts = _cuts(-high, -low, [(-end, -start) for start, end in spans])
        return (axis, [(-b, -a) for a, b in itertools.pairwise(cuts)]) if cuts else None
    cuts = _cuts(low, high, spans)
    return (axis, list(itertools.pairwise(cuts))) if cuts else None


def letter_boxes(word: OcrWord, line: OcrLine | None = None) -> list[tuple[str, PixelBox]]:
    """Each letter of ``word`` (ligatures expanded) with its pixel box.

    With symbol boxes that spell the word, each symbol gets the stretch of the word's box from
    the middle of the gap before it to the middle of the gap after it (the first from the word's
    start, the last to its end), and each of a symbol's letters that whole stretch; across the
    reading direction, a horizontal word takes its line's band. Without symbols (or when
    overlapping symbols would leave one no extent), the word's characters share its width
    equally (a ligature's letters its share).
    """
    left, top, right, bottom = word.box
    letters: list[tuple[str, PixelBox]] = []
    symbols = [(text, box) for text, box in word.symbols if text]
    if symbols and "".join(text for text, _ in symbols) == word.text:
        found = _symbol_stretches(word, symbols)
        if found is not None:
            axis, stretches = found
            if axis == 0 and line is not None:
                top, bottom = _band(word, line)
            for (text, _), (a, b) in zip(symbols, stretches, strict=True):
                box = (a, top, b, bottom) if axis == 0 else (left, a, right, b)
                letters.extend((letter, box) for letter in _expand(text))
            return letters
    if line is not None:
        top, bottom = _band(word, line)
    share = (right - left) / len(word.text) if word.text else 0.0
    for i, ch in enumerate(word.text):
        for letter in _expand(ch):
            letters.append((letter, (left + i * share, top, left + (i + 1) * share, bottom)))
    return letters


def _kept(line: OcrLine, min_confidence: float) -> list[OcrWord]:
    return [w for w in line.words if w.text.strip() and w.confidence >= min_confidence]


def _breaks_word(last: OcrWord, following: OcrWord | None) -> bool:
    """A line that ends in "letter-" before a line that starts with a letter: a line-end hyphen
    (word break or compound, decided later like pdfium's marks)."""
    text = last.text
    if following is None or len(text) < 2 or text[-1] not in _HYPHENS:
        return False
    return text[-2].isalpha() and following.text[:1].isalpha()


def ocr_page_text(
    page: OcrPage, frame: RenderFrame, *, min_word_confidence: float = MIN_WORD_CONFIDENCE
) -> OcrText:
    """The page's text and one user-space box per character (None for synthesized spaces and
    line breaks), words in the engine's reading order."""
    lines = [(line, words) for line in page.lines if (words := _kept(line, min_word_confidence))]
    text: list[str] = []
    boxes: list[Rect | None] = []
    confidences: list[float] = []
    hyphen_before = False
    for n, (line, words) in enumerate(lines):
        if n and not hyphen_before:
            text.append("\n")
            boxes.append(None)
        for k, word in enumerate(words):
            if k:
                text.append(" ")
                boxes.append(None)
            confidences.append(word.confidence)
            for letter, box in letter_boxes(word, line):
                text.append(letter)
                boxes.append(pixel_to_user(box, frame))
        following = lines[n + 1][1][0] if n + 1 < len(lines) else None
        hyphen_before = _breaks_word(words[-1], following)
        if hyphen_before:
            text[-1] = HYPHEN_MARK  # keeps the hyphen's box, as pdfium's marks do
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrText(PageText("".join(text), boxes), len(confidences), mean)
