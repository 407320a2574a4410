"""Ruled tables kept as rows: pure geometry over pdfium's rules and the page's canonical text.

pdfium's character order follows the content stream, which for tables is often column by column
or, worse, off by a row in one column (the CA WARN report puts its Layoff/Closure column on the
wrong rows). Here a table's characters are re-assembled by geometry instead: every row becomes
one line of the canonical text, its cells in column order joined by " | " (synthesized, box
None), each cell's characters in pdfium's order within the cell and keeping their own boxes.

Only ruled tables are detected: a grid of horizontal and vertical rules (stroked lines or the
edges of rectangles, as pdfium's path objects draw them) that holds text in at least two rows of
at least two cells. Text outside every grid is left exactly as it was, so a page without such a
grid comes out unchanged.

Everything works in the *reading frame* of the page's text (``frame_point``): u grows along the
lines and v from one line to the next, for text drawn turned by 0, 90, 180 or 270 degrees (the
shell measures which from pdfium's glyph angles). That is not always the page's /Rotate: the NICS
report is a landscape table drawn upright in user space on a page that /Rotate 90 shows sideways.

Steps: ``find_grids`` (rules to grids, :mod:`.table_grid`) -> ``assemble_tables`` (one page's
text and boxes to the same text with each grid's characters replaced by its rows) ->
``link_headers`` (document-wide: which rows are headers, and which tables continue the previous
page's table).
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Rect, TableRows
from .table_grid import SNAP, Grid, Rule, find_grids, frame_point, frame_rect
from .text import PageText

__all__ = [
    "CELL_SEPARATOR",
    "Grid",
    "PageTable",
    "Rule",
    "assemble_tables",
    "find_grids",
    "frame_point",
    "frame_rect",
    "link_headers",
]

#: Between the cells of a row line (all three characters synthesized: box None).
CELL_SEPARATOR = " | "

_MIN_ROWS = 2
# A table needs two rows with at least two non-empty cells, or this many rows and one such row
# (a financial statement continued on the next page: label-only rows and one row of figures).
# Without any, it is a framed paragraph; two rows and one such row were a fragment of RAPTOR's
# figure 1 (node boxes "7" over "1 4 5").
_MIN_SPARSE_ROWS = 4
# A chart's grid (gridlines under a plot, tick labels here and there) is not a table: measured,
# the two in pypdf-GeoTopo cross in 0.63 and 0.64 of their rule pairs and have text in 0.23 and
# 0.37 of their cells; every corpus table below this lattice has text in at least 0.64 of them
# (sparse financial statements, with crossings 1.0, go down to 0.38).
_PLOT_LATTICE = 0.7
_MIN_FILL = 0.5
# A band of this many text lines that each reach two cells is several rows under one pair of
# rules; fewer lines are one row of wrapped cells (a two-line header: "Employees / Affected").
_MIN_SPLIT_LINES = 3
_MIN_CELLS = 2
_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


@dataclass(slots=True)
class PageTable:
    """A table as found on one page: its row spans in the page's new text, the text of each row's
    cells, and its column rules (to recognise the same table continued on the next page)."""

    rows: list[tuple[int, int]]
    cells: list[list[str]]
    columns: tuple[float, ...]
    header_rows: int = 0
    header: str = ""

    def record(self) -> TableRows:
        return TableRows(rows=tuple(self.rows), header_rows=self.header_rows, header=self.header)


@dataclass(slots=True)
class _Member:
    index: int  # into the page text
    u: float  # box centre in the frame
    v: float
    height: float
    box: Rect  # frame box


@dataclass(slots=True)
class _Cell:
    members: list[_Member] = field(default_factory=list)


def _is_cjk(ch: str) -> bool:
    if not ch:
        return False
    name = unicodedata.east_asian_width(ch)
    return name in ("W", "F")


def _lines(members: Sequence[_Member]) -> list[list[_Member]]:
    """Members grouped into text lines by their vertical centres, top to bottom."""
    if not members:
        return []
    ordered = sorted(members, key=lambda m: m.v)
    lines: list[list[_Member]] = [[ordered[0]]]
    # The line's running sum of centres, added in the order sum() over the line would add them
    # (the same float), instead of summing the whole line again for every member.
    total = 0 + ordered[0].v
    for m in ordered[1:]:
        last = lines[-1]
        ref = total / len(last)
        if abs(m.v - ref) <= 0.5 * max(m.height, last[0].height, 1.0):
            last.append(m)
            total += m.v
        else:
            lines.append([m])
            total = 0 + m.v
    return lines


def _cell_text(
    cell: Sequence[_Member], text: str, boxes: Sequence[Rect | None]
) -> tuple[list[str], list[Rect | None]]:
    """A cell's characters, line by line, each line in pdfium's order; a synthesized space where
    pdfium had whitespace between two of them or they stand apart, none between CJK lines."""
    out_t: list[str] = []
    out_b: list[Rect | None] = []
    prev: _Member | None = None
    prev_line = -1
    for number, line in enumerate(_lines(cell)):
        for m in sorted(line, key=lambda x: x.index):
            ch = text[m.index]
            if ch.isspace():
                if out_t and not out_t[-1].isspace():
                    # A drawn line break inside a cell would end the row's line: a space, with
                    # its box, stands for it.
                    out_t.append(" " if ch in _BREAKS else ch)
                    out_b.append(boxes[m.index])
                prev, prev_line = m, number
                continue
            if prev is not None and out_t and not out_t[-1].isspace():
                space = False
                if prev_line == number:
                    gap = text[prev.index + 1 : m.index]
                    if m.index != prev.index + 1:
                        space = any(c.isspace() for c in gap) or (
                            m.box[0] - prev.box[2] > 0.15 * max(m.height, 1.0)
                        )
                elif m.index != prev.index + 1:
                    # The cell wraps: a word break, except between CJK characters. Adjacent in
                    # the page's text means joined there already (a line-end hyphenation).
                    space = not (_is_cjk(text[prev.index]) and _is_cjk(ch))
                if space:
                    out_t.append(" ")
                    out_b.append(None)
            out_t.append(ch)
            out_b.append(boxes[m.index])
            prev, prev_line = m, number
    while out_t and out_t[-1].isspace():
        out_t.pop()
        out_b.pop()
    return out_t, out_b


def _rows_of(grid: Grid, members: Sequence[_Member], text: str) -> list[list[list[_Member]]]:
    """The grid's rows (top to bottom) as lists of cells (left to right), empty rows left out.

    A band between two row rules is one row, unless it holds at least three text lines that each
    reach two cells and most of the band's columns: then the rules only frame the table and each
    line is a row of its own (wrapped cells leave some columns empty on some lines). A column rule
    that does not run through a band joins the cells on both sides of it (a spanning cell).
    """
    ncols = len(grid.xs) - 1
    # Each member's column, once (it was looked up again for every band and line).
    columns = {
        m.index: min(max(bisect.bisect_right(grid.xs, m.u) - 1, 0), ncols - 1) for m in members
    }

    def column(m: _Member) -> int:
        return columns[m.index]

    # Columns without text in any row (grid lines drawn for spanning cells) are left out.
    used = sorted({column(m) for m in members if not _blank(m, text)})
    if not used:
        return []
    bands: dict[int, list[_Member]] = {}
    for m in members:
        band = min(max(bisect.bisect_right(grid.ys, m.v) - 1, 0), len(grid.ys) - 2)
        bands.setdefault(band, []).append(m)
    rows: list[list[list[_Member]]] = []
    for band in sorted(bands):
        lo, hi = grid.ys[band], grid.ys[band + 1]
        # Cells of this band: used columns, joined until a rule between them separates them.
        group_of = dict.fromkeys(range(ncols), 0)
        current = 0
        for a, b in itertools.pairwise(used):
            if any(grid.separates(k, lo, hi) for k in range(a + 1, b + 1)):
                current += 1
            for col in range(a + 1, b + 1):
                group_of[col] = current
        for col in range(used[-1] + 1, ncols):
            group_of[col] = current
        ngroups = current + 1

        def group(m: _Member, group_of: dict[int, int] = group_of) -> int:
            return group_of[column(m)]

        lines = [line for line in _lines(bands[band]) if any(not _blank(m, text) for m in line)]
        reach = [{group(m) for m in line if not _blank(m, text)} for line in lines]
        union = set().union(*reach) if reach else set()
        split = len(lines) >= _MIN_SPLIT_LINES and all(
            len(r) >= max(_MIN_CELLS, 0.6 * len(union)) for r in reach
        )
        for part in lines if split else [bands[band]]:
            cells: list[list[_Member]] = [[] for _ in range(ngroups)]
            for m in part:
                cells[group(m)].append(m)
            rows.append(cells)
    return rows


def _occupancy(grid: Grid, members: Sequence[_Member], text: str) -> float:
    """Share of the grid cells with text, among the rows and the columns that have any."""
    cells = {
        (bisect.bisect_right(grid.ys, m.v), bisect.bisect_right(grid.xs, m.u))
        for m in members
        if not _blank(m, text)
    }
    rows = {r for r, _ in cells}
    columns = {c for _, c in cells}
    return len(cells) / (len(rows) * len(columns)) if cells else 0.0


def _plot(grid: Grid, members: Sequence[_Member], text: str) -> bool:
    """A chart's grid: few rule pairs cross and few cells hold text."""
    return grid.lattice() < _PLOT_LATTICE and _occupancy(grid, members, text) < _MIN_FILL


def _two_columns(grid: Grid, members: Sequence[_Member], text: str) -> bool:
    """True when text lies in at least two of the grid's columns: a row's cells are groups of
    the columns with text (``_rows_of``), so with one such column no row has two non-empty
    cells, and no table has fewer than one such row."""
    ncols = len(grid.xs) - 1
    first: int | None = None
    for m in members:
        if _blank(m, text):
            continue
        col = min(max(bisect.bisect_right(grid.xs, m.u) - 1, 0), ncols - 1)
        if first is None:
            first = col
        elif col != first:
            return True
    return False


def _blank(m: _Member, text: str) -> bool:
    return text[m.index].isspace()


def _frame_boxes(boxes: np.ndarray, rotation: int) -> np.ndarray:
    """:func:`frame_rect` of every row of ``boxes`` (n x 4) at once: the same float operations
    (negation, min, max), so the same values."""
    x0, y0, x1, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    r = rotation % 360
    if r == 90:
        u0, v0, u1, v1 = y0, x0, y1, x1
    elif r == 180:
        u0, v0, u1, v1 = -x0, y0, -x1, y1
    elif r == 270:
        u0, v0, u1, v1 = -y0, -x0, -y1, -x1
    else:
        u0, v0, u1, v1 = x0, -y0, x1, -y1
    return np.stack(
        [np.minimum(u0, u1), np.minimum(v0, v1), np.maximum(u0, u1), np.maximum(v0, v1)], axis=1
    )


def _grid_members(
    boxes: Sequence[Rect | None], grids: Sequence[Grid], rotation: int, text: str = ""
) -> list[tuple[int, int, Rect]]:
    """(char index, grid index, frame box) of each boxed character whose box centre lies in a
    grid (the first that holds it), in character order: numpy over the whole page instead of a
    Python loop per character, as most of a page lies outside its grids."""
    index = [i for i, box in enumerate(boxes) if box is not None]
    if not index or not grids:
        return []
    frame = _frame_boxes(np.array([boxes[i] for i in index], dtype=np.float64), rotation)
    u = (frame[:, 0] + frame[:, 2]) / 2
    v = (frame[:, 1] + frame[:, 3]) / 2
    owner = np.full(len(index), -1, dtype=np.int64)
    for g, grid in enumerate(grids):
        inside = (grid.xs[0] <= u) & (u <= grid.xs[-1]) & (grid.ys[0] <= v) & (v <= grid.ys[-1])
        owner[inside & (owner < 0)] = g
    if text:
        # A grid whose non-blank characters all lie in one column is no table
        # (``_two_columns``): its characters stay its own (no later grid takes them) but need
        # no members. Most such grids frame a whole page: skipping them here saves building a
        # member for every character of the page.
        blank = np.array([text[i].isspace() for i in index], dtype=bool)
        for g, grid in enumerate(grids):
            mine = (owner == g) & ~blank
            if not mine.any():
                continue
            ncols = len(grid.xs) - 1
            cols = np.clip(np.searchsorted(grid.xs, u[mine], side="right") - 1, 0, ncols - 1)
            if int(cols.min()) == int(cols.max()):
                owner[owner == g] = -2
    hits = np.flatnonzero(owner >= 0)
    rows = frame[hits].tolist()
    grid_of = owner[hits].tolist()
    return [
        (index[k], g, (fb[0], fb[1], fb[2], fb[3]))
        for k, g, fb in zip(hits.tolist(), grid_of, rows, strict=True)
    ]


def assemble_tables(
    page: PageText, grids: Sequence[Grid], rotation: int
) -> tuple[PageText, list[PageTable]]:
    """``page`` with the characters inside each grid replaced by the grid's rows, one line each.

    A grid whose text does not make two rows of at least two non-empty cells (or four rows, one
    of them with two) is not a table: its characters stay where they were. The rows go where
    the grid's first character (in the page's order) was, on lines of their own. Without tables
    the page is returned as it is.
    """
    if all(len(grid.xs) <= 2 for grid in grids):
        # A grid of one column holds no row of two non-empty cells (``_two_columns``): a page
        # whose grids all have one column (a page frame, a boxed paragraph) has no table, and
        # its characters need no members.
        return page, []
    text, boxes = page.text, page.boxes
    owner: dict[int, int] = {}  # char index -> grid index
    by_grid: list[list[_Member]] = [[] for _ in grids]
    for i, g, fb in _grid_members(boxes, grids, rotation, text):
        owner[i] = g
        u, v = (fb[0] + fb[2]) / 2, (fb[1] + fb[3]) / 2
        by_grid[g].append(_Member(i, u, v, fb[3] - fb[1], fb))
    blocks: dict[int, tuple[list[str], list[Rect | None], list[tuple[int, int]], list[list[str]]]]
    blocks = {}
    for g, grid in enumerate(grids):
        if not _two_columns(grid, by_grid[g], text) or _plot(grid, by_grid[g], text):
            # No row can have two non-empty cells, or a chart's grid: not a table (the checks
            # below would say so after assembling every row; a page frame or a figure's box
            # ends here cheaply).
            for m in by_grid[g]:
                owner.pop(m.index, None)
            continue
        rows = _rows_of(grid, by_grid[g], text)
        lines: list[tuple[list[str], list[Rect | None], list[str]]] = []
        for cells in rows:
            parts = [_cell_text(cell, text, boxes) for cell in cells]
            if not any(t for t, _ in parts):
                continue
            row_t: list[str] = []
            row_b: list[Rect | None] = []
            for k, (t, b) in enumerate(parts):
                if k:
                    row_t.extend(CELL_SEPARATOR)
                    row_b.extend([None] * len(CELL_SEPARATOR))
                row_t.extend(t)
                row_b.extend(b)
            lines.append((row_t, row_b, ["".join(t) for t, _ in parts]))
        full = [line for line in lines if sum(1 for c in line[2] if c) >= _MIN_CELLS]
        sparse_ok = len(lines) >= _MIN_SPARSE_ROWS and len(full) >= 1
        if len(lines) < _MIN_ROWS or (len(full) < _MIN_ROWS and not sparse_ok):
            for m in by_grid[g]:
                owner.pop(m.index, None)  # not a table: its characters stay in the flow
            continue
        block_t: list[str] = []
        block_b: list[Rect | None] = []
        spans: list[tuple[int, int]] = []
        for row_t, row_b, _ in lines:
            if block_t:
                block_t.append("\n")
                block_b.append(None)
            spans.append((len(block_t), len(block_t) + len(row_t)))
            block_t.extend(row_t)
            block_b.extend(row_b)
        blocks[g] = (block_t, block_b, spans, [line[2] for line in lines])
    if not blocks:
        return page, []

    # Generated whitespace between two characters of one table goes with the table.
    n = len(text)
    prev_owner: list[int | None] = [None] * n
    last: int | None = None
    for i in range(n):
        if not text[i].isspace():
            last = owner.get(i)
        prev_owner[i] = last
    next_owner: list[int | None] = [None] * n
    last = None
    for i in range(n - 1, -1, -1):
        if not text[i].isspace():
            last = owner.get(i)
        next_owner[i] = last

    out_t: list[str] = []
    out_b: list[Rect | None] = []
    tables: list[PageTable] = []
    emitted: set[int] = set()
    after_block = False
    for i in range(n):
        at = owner.get(i)
        if at is not None and at in blocks:
            if at not in emitted:
                emitted.add(at)
                block_t, block_b, spans, texts = blocks[at]
                if out_t and out_t[-1] != "\n":
                    out_t.append("\n")
                    out_b.append(None)
                base = len(out_t)
                out_t.extend(block_t)
                out_b.extend(block_b)
                out_t.append("\n")
                out_b.append(None)
                tables.append(
                    PageTable(
                        rows=[(base + s, base + e) for s, e in spans],
                        cells=texts,
                        columns=grids[at].xs,
                    )
                )
            after_block = True
            continue
        if text[i].isspace() and boxes[i] is None:
            inside = prev_owner[i] is not None and prev_owner[i] == next_owner[i]
            if after_block or (inside and prev_owner[i] in blocks):
                continue
        after_block = False
        out_t.append(text[i])
        out_b.append(boxes[i])
    return PageText("".join(out_t), out_b), tables


def _same_columns(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= SNAP for x, y in zip(a, b, strict=True))


def link_headers(pages: Sequence[Sequence[PageTable]]) -> None:
    """Decide the header of every table, in document order (in place).

    A page's first table that has the same column rules as the table before it (the last one of
    an earlier page) continues it: it keeps that table's header, and its first row is a header
    row only when it repeats the header. Any other table's first row is its header row.
    """
    previous: PageTable | None = None
    for tables in pages:
        for k, table in enumerate(tables):
            if not table.rows:
                continue
            first = table.cells[0]
            if k == 0 and previous is not None and _same_columns(table.columns, previous.columns):
                table.header = previous.header
                previous_cells = [c.strip() for c in previous.header.split(CELL_SEPARATOR)]
                table.header_rows = 1 if [c.strip() for c in first] == previous_cells else 0
                if not table.header:  # the previous table had none: this one starts afresh
                    table.header, table.header_rows = CELL_SEPARATOR.join(first), 1
            else:
                table.header = CELL_SEPARATOR.join(first)
                table.header_rows = 1
            previous = table
