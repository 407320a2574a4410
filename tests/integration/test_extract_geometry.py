"""Glyph boxes from pdfium against an independent extractor, pdfminer.six.

For every golden quote on a seed PDF (and a few lines of a /Rotate 90 page) the quote's span is
turned into per-line highlight rects with ``span_line_rects``; each rect is compared with the
pdfminer.six boxes of the same characters: left edge of the line's first glyph and right edge of
its last glyph within 0.1 pt, and the rect's vertical extent overlapping pdfminer's text-line
box by at least 80%.

Characters are matched by text, not by position: the normalized, whitespace-free characters of
one highlight line are looked up in pdfminer's character stream (widened with neighbouring text
until the match is unique), so a geometric disagreement cannot hide behind a geometric match.
"""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import pytest

from tests.helpers.corpus import GOLDEN_DEV, ROBUSTNESS, SHARED
from truthbase.extract import extract_pdf
from truthbase.geometry import span_line_rects
from truthbase.model import ExtractedDocument, Rect
from truthbase.text.matching import find_quote, normalize

pdfminer_layout = pytest.importorskip("pdfminer.layout")

GOLDEN = GOLDEN_DEV
ROTATED = ROBUSTNESS / "pdfplumber-nics-background-checks-2015-11-rotated.pdf"

pytestmark = pytest.mark.corpus

MAX_EDGE_ERROR_PT = 0.1
MIN_VERTICAL_OVERLAP = 0.8
CONTEXT_STEP = 8


@cache
def _extracted(path: Path) -> ExtractedDocument:
    return extract_pdf(path)


@dataclass(frozen=True)
class _MinerPage:
    """pdfminer's characters of one page, normalized and whitespace-free, in its own order."""

    text: str
    boxes: tuple[Rect, ...]  # glyph box per character, back in unrotated user space
    lines: tuple[Rect, ...]  # the LTTextLine box each character belongs to


def _to_user_space(box: Rect, rotation: int, mediabox: Rect) -> Rect:
    """Undo the page rotation pdfminer bakes into its coordinates (PDFPageInterpreter.process_page).

    pdfium's boxes are in unrotated user space; pdfminer maps user space through
    ctm = (1,0,0,1,-x0,-y0) at 0 degrees and the rotations at 90/180/270.
    """
    mx0, my0, mx1, my1 = mediabox
    corners = [(box[0], box[1]), (box[2], box[3])]
    if rotation == 90:  # x' = y - y0, y' = x1 - x
        pts = [(mx1 - y, x + my0) for x, y in corners]
    elif rotation == 180:  # x' = x1 - x, y' = y1 - y
        pts = [(mx1 - x, my1 - y) for x, y in corners]
    elif rotation == 270:  # x' = y1 - y, y' = x - x0
        pts = [(y + mx0, my1 - x) for x, y in corners]
    else:
        pts = [(x + mx0, y + my0) for x, y in corners]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def _pdfminer_layout(path: Path, index: int, laparams: object) -> object:
    """pdfminer's LTPage; built by hand because extract_pages turns laparams=None into defaults."""
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    with path.open("rb") as fp:
        manager = PDFResourceManager()
        device = PDFPageAggregator(manager, laparams=laparams)
        interpreter = PDFPageInterpreter(manager, device)
        for number, page in enumerate(PDFPage.get_pages(fp)):
            if number == index:
                interpreter.process_page(page)
                return device.get_result()
    raise IndexError(f"{path.name} has no page {index + 1}")


@cache
def _miner_page(path: Path, index: int, *, layout: bool = True) -> _MinerPage:
    """pdfminer's characters; ``layout=False`` keeps content-stream order and has no lines.

    Its layout analysis groups characters in rotated (display) space; on the /Rotate 90 table
    that makes "lines" run down across rows and scrambles the text, so that page is read
    without layout and each character's own box stands in for its line box.
    """
    unit = _extracted(path).units[index]
    assert unit.geometry is not None
    rotation, mediabox = unit.geometry.rotation, unit.geometry.mediabox
    # boxes_flow=None: lines are all this needs; the hierarchical box grouping is the slow part.
    laparams = pdfminer_layout.LAParams(boxes_flow=None) if layout else None
    page = _pdfminer_layout(path, index, laparams)
    chars: list[str] = []
    boxes: list[Rect] = []
    lines: list[Rect] = []

    def walk(item: object, line: Rect | None) -> None:
        if isinstance(item, pdfminer_layout.LTTextLine):
            line = _to_user_space(item.bbox, rotation, mediabox)
        if isinstance(item, pdfminer_layout.LTChar):
            box = _to_user_space(item.bbox, rotation, mediabox)
            for ch in normalize(item.get_text()).replace(" ", ""):
                chars.append(ch)
                boxes.append(box)
                # Characters inside figures belong to no text line: their own box stands in.
                lines.append(line or box)
            return
        if isinstance(item, pdfminer_layout.LTContainer):
            for child in item:
                walk(child, line)

    walk(page, None)
    if not layout:
        # Without layout pdfminer keeps content-stream order, and the rotated table draws the
        # glyphs of a row out of order; rows by baseline, then left to right, restore reading
        # order. This only orders the stream; characters are still matched by text.
        order = sorted(range(len(chars)), key=lambda k: (-round(boxes[k][1]), boxes[k][0]))
        chars = [chars[k] for k in order]
        boxes = [boxes[k] for k in order]
        lines = [lines[k] for k in order]
    return _MinerPage("".join(chars), tuple(boxes), tuple(lines))


@dataclass(frozen=True)
class _Visible:
    """A unit's boxed, non-space characters, normalized, with the offset each came from."""

    text: str
    offsets: tuple[int, ...]

    def index(self, offset: int) -> int:
        """Position of the first visible character at or after ``offset``."""
        return bisect.bisect_left(self.offsets, offset)


@cache
def _visible(path: Path, page: int) -> _Visible:
    unit = _extracted(path).units[page]
    chars: list[str] = []
    offsets: list[int] = []
    for i, ch in enumerate(unit.text):
        if unit.boxes[i] is None:
            continue
        for norm in normalize(unicodedata.normalize("NFKC", ch)).replace(" ", ""):
            chars.append(norm)
            offsets.append(i)
    return _Visible("".join(chars), tuple(offsets))


def _locate(miner: _MinerPage, visible: _Visible, lo: int, hi: int) -> int | None:
    """Where visible characters [lo, hi) start in pdfminer's stream, widened until unique."""
    before, after = lo, hi
    while True:
        probe = visible.text[before:after]
        at = miner.text.find(probe)
        if at < 0:
            return None
        if miner.text.find(probe, at + 1) < 0:
            return at + (lo - before)
        if before == 0 and after == len(visible.text):
            return None
        before, after = max(0, before - CONTEXT_STEP), min(len(visible.text), after + CONTEXT_STEP)


@dataclass(frozen=True)
class LineCheck:
    where: str
    text: str
    edge_error: float  # max of |x0 - pdfminer x0|, |x1 - pdfminer x1| in points; -1: unmatched
    # An edge beyond pdfminer's advance box that pdfium put at the glyph's ink edge: pdfium's
    # loose box is the union of the advance box and the ink box, pdfminer's is the advance only.
    ink_explained: bool
    vertical_overlap: float  # overlap / smaller height, pdfminer's box of the same characters
    line_overlap: float  # the same against pdfminer's whole LTTextLine box (other glyphs too)


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    smaller = min(a1 - a0, b1 - b0)
    return (min(a1, b1) - max(a0, b0)) / smaller if smaller > 0 else 0.0


@cache
def _ink_boxes(path: Path, index: int) -> dict[Rect, Rect]:
    """pdfium's tight (ink) box keyed by its loose box, for explaining edge differences."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        textpage = document[index].get_textpage()
        ink: dict[Rect, Rect] = {}
        for i in range(textpage.count_chars()):
            try:
                loose = textpage.get_charbox(i, loose=True)
                tight = textpage.get_charbox(i)
            except pdfium.PdfiumError:
                continue
            ink[tuple(float(v) for v in loose)] = tuple(float(v) for v in tight)  # type: ignore[assignment]
        return ink
    finally:
        document.close()


def _inside(box: Rect, rect: Rect) -> bool:
    eps = 1e-6
    return (
        box[0] >= rect[0] - eps
        and box[2] <= rect[2] + eps
        and box[1] >= rect[1] - eps
        and box[3] <= rect[3] + eps
    )


def _edge_explained(mine: float, miner: float, ink: float | None) -> bool:
    """A difference is explained when pdfium's edge is its ink edge, outside pdfminer's box."""
    return abs(mine - miner) <= MAX_EDGE_ERROR_PT or (ink is not None and abs(mine - ink) <= 0.01)


def check_span(
    path: Path, page: int, start: int, end: int, *, layout: bool = True
) -> list[LineCheck]:
    """Compare each highlight line of a span with pdfminer's boxes of the same characters."""
    unit = _extracted(path).units[page]
    miner = _miner_page(path, page, layout=layout)
    where = f"{path.name} p{page + 1}"
    checks: list[LineCheck] = []
    # Each rect's characters: the boxed characters of the span that lie inside it, in order.
    offsets = [i for i in range(start, end) if unit.boxes[i] is not None]
    for rect in span_line_rects(unit.text, unit.boxes, start, end):
        members = [i for i in offsets if _inside(unit.boxes[i], rect)]  # type: ignore[arg-type]
        if not members:
            continue
        lo, hi = members[0], members[-1] + 1
        visible = _visible(path, page)
        vlo, vhi = visible.index(lo), visible.index(hi)
        at = _locate(miner, visible, vlo, vhi) if vhi > vlo else None
        if at is None:
            checks.append(LineCheck(where, unit.text[lo:hi], -1.0, False, -1.0, -1.0))
            continue
        miner_boxes = miner.boxes[at : at + vhi - vlo]
        miner_lines = miner.lines[at : at + vhi - vlo]
        mine = [b for i in visible.offsets[vlo:vhi] if (b := unit.boxes[i]) is not None]
        first = min(mine, key=lambda b: b[0])
        last = max(mine, key=lambda b: b[2])
        x0_miner = min(b[0] for b in miner_boxes)
        x1_miner = max(b[2] for b in miner_boxes)
        ink = _ink_boxes(path, page)
        first_ink, last_ink = ink.get(first), ink.get(last)
        explained = _edge_explained(
            first[0], x0_miner, first_ink[0] if first_ink else None
        ) and _edge_explained(last[2], x1_miner, last_ink[2] if last_ink else None)
        edge = max(abs(first[0] - x0_miner), abs(last[2] - x1_miner))
        chars_overlap = _overlap(
            rect[1], rect[3], min(b[1] for b in miner_boxes), max(b[3] for b in miner_boxes)
        )
        line_overlap = _overlap(
            rect[1], rect[3], min(b[1] for b in miner_lines), max(b[3] for b in miner_lines)
        )
        checks.append(
            LineCheck(where, unit.text[lo:hi], edge, explained, chars_overlap, line_overlap)
        )
    return checks


def _golden_spans() -> list[tuple[Path, int, int, int]]:
    if not GOLDEN.exists():
        return []
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    spans: list[tuple[Path, int, int, int]] = []
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            rel = golden["documents"][evidence["doc"]]["path"]
            if not rel.endswith(".pdf") or not rel.startswith("corpus/seed/"):
                continue
            path = SHARED / rel
            page = evidence["page"] - 1
            found = find_quote(evidence["quote"], _extracted(path).units[page].text)
            assert found is not None, f"{evidence['doc']} p{evidence['page']}: quote not found"
            for start, end in found:
                spans.append((path, page, start, end))
    return spans


@lru_cache(maxsize=1)
def _golden_checks() -> tuple[LineCheck, ...]:
    return tuple(c for span in _golden_spans() for c in check_span(*span))


def _rotated_spans() -> list[tuple[Path, int, int, int]]:
    """A few spans of the rotated table page: state names and totals that occur once.

    Table rows are one line for pdfium but separate cells for pdfminer's layout analysis, so
    whole lines are not comparable; single cells are. The table's rows are assembled by geometry
    (extract/tables.py), so their order is not pdfminer's: only cells that occur once in both
    texts are taken, which pdfminer's stream locates without surrounding context, from lines
    with cells (the title above the table, in a larger bold font, has ink overhang).
    """
    unit = _extracted(ROTATED).units[0]
    miner = _miner_page(ROTATED, 0, layout=False).text
    spans: list[tuple[Path, int, int, int]] = []
    for match in re.finditer(r"\b[A-Z][a-z]{4,}\b|\b\d{1,3}(?:,\d{3})+\b", unit.text):
        word = normalize(unicodedata.normalize("NFKC", match.group())).replace(" ", "")
        line_start = unit.text.rfind("\n", 0, match.start()) + 1
        line = unit.text[line_start : unit.text.find("\n", match.end())]
        if " | " not in line or unit.text.count(match.group()) != 1 or miner.count(word) != 1:
            continue
        if len(spans) < 12:
            spans.append((ROTATED, 0, match.start(), match.end()))
    return spans


def _summary(checks: Sequence[LineCheck]) -> str:
    matched = [c for c in checks if c.edge_error >= 0]
    strict = [c for c in matched if c.edge_error <= MAX_EDGE_ERROR_PT]
    return (
        f"{len(matched)}/{len(checks)} lines matched; "
        f"{len(strict)} within {MAX_EDGE_ERROR_PT} pt, the rest at the glyph's ink edge; "
        f"max edge error {max(c.edge_error for c in matched):.4f} pt; "
        f"max edge error within advance boxes "
        f"{max(c.edge_error for c in strict):.4f} pt; "
        f"min vertical overlap {min(c.vertical_overlap for c in matched):.3f} "
        f"(whole pdfminer text lines: {min(c.line_overlap for c in matched):.3f})"
    )


def _assert_agree(checks: Sequence[LineCheck]) -> None:
    unmatched = [c for c in checks if c.edge_error < 0]
    assert not unmatched, f"lines not found in pdfminer's text: {unmatched[:3]}"
    unexplained = [c for c in checks if not c.ink_explained]
    assert not unexplained, f"edges off by > {MAX_EDGE_ERROR_PT} pt: {unexplained[:3]}"
    # Ink overhang (italic f, bold capitals) is a fraction of an em, never a whole glyph.
    assert max(c.edge_error for c in checks) < 1.0, checks
    low = [c for c in checks if c.vertical_overlap < MIN_VERTICAL_OVERLAP]
    assert not low, f"lines overlapping pdfminer's boxes < 80%: {low[:3]}"


def test_golden_quotes_geometry_matches_pdfminer() -> None:
    checks = _golden_checks()
    print("seed golden quotes:", _summary(checks))
    assert len(checks) >= 100
    _assert_agree(checks)


def test_rotated_page_geometry_matches_pdfminer() -> None:
    unit = _extracted(ROTATED).units[0]
    assert unit.geometry is not None and unit.geometry.rotation == 90
    checks = [c for span in _rotated_spans() for c in check_span(*span, layout=False)]
    assert len(checks) >= 5
    print("rotated page:", _summary(checks))
    _assert_agree(checks)
    # Every line within 0.1 pt here: no overhanging glyph sits at a line edge.
    assert max(c.edge_error for c in checks) <= MAX_EDGE_ERROR_PT
