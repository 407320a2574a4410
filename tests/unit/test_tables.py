"""Ruled tables kept as rows: grids from rules, row assembly, headers, chunking (pure)."""

from __future__ import annotations

import random

from truthbase.chunking import chunk_unit
from truthbase.extract.pathrules import could_grid
from truthbase.extract.tables import (
    CELL_SEPARATOR,
    PageTable,
    Rule,
    assemble_tables,
    find_grids,
    frame_point,
    link_headers,
)
from truthbase.extract.text import PageText
from truthbase.model import Rect, TableRows, Unit


def _grid_rules(xs: list[float], ys: list[float]) -> list[Rule]:
    """A full grid in user space (y up): one horizontal rule per y, one vertical per x."""
    rules = [Rule(xs[0], y, xs[-1], y) for y in ys]
    rules += [Rule(x, ys[0], x, ys[-1]) for x in xs]
    return rules


def _page(runs: list[tuple[str, float, float]]) -> PageText:
    """Text runs placed at (x, y baseline) with 5-pt-wide, 8-pt-tall glyphs, in the given
    order, separated by generated newlines (box None), as pdfium would deliver them."""
    text: list[str] = []
    boxes: list[Rect | None] = []
    for k, (run, x, y) in enumerate(runs):
        if k:
            text.append("\n")
            boxes.append(None)
        for i, ch in enumerate(run):
            text.append(ch)
            boxes.append(None if ch == " " else (x + 5 * i, y, x + 5 * i + 5, y + 8))
    return PageText("".join(text), boxes)


def test_frame_point_turns_each_rotation_upright() -> None:
    # Reading direction becomes +u and the line advance +v, whatever way the text is turned.
    assert frame_point(10, 20, 0) == (10, -20)
    assert frame_point(10, 20, 90) == (20, 10)
    assert frame_point(10, 20, 180) == (-10, 20)
    assert frame_point(10, 20, 270) == (-20, -10)


def test_find_grids_snaps_double_rules_and_needs_crossings() -> None:
    rules = _grid_rules([0, 100, 200], [0, 20, 40])
    # A hairline drawn as a filled rectangle: two edges half a point apart are one rule.
    rules += [Rule(0, 40.4, 200, 40.4)]
    (grid,) = find_grids(rules, 0)
    assert len(grid.xs) == 3 and len(grid.ys) == 3
    # Lonely rules that cross nothing (an underline, a footer line) are no grid.
    assert find_grids([Rule(0, 0, 100, 0), Rule(0, 50, 100, 50)], 0) == []


def test_rows_come_out_by_geometry_not_by_text_order() -> None:
    # pdfium-like order: the last column's cells come first and in the wrong row order.
    page = _page(
        [
            ("Intro", 0, 100),
            ("Closure", 210, 2),
            ("Layoff", 210, 22),
            ("Acme", 10, 22),
            ("120", 110, 22),
            ("Bolt", 10, 2),
            ("35", 110, 2),
        ]
    )
    grids = find_grids(_grid_rules([0, 100, 200, 300], [0, 20, 40]), 0)
    out, tables = assemble_tables(page, grids, 0)
    assert out.text == "Intro\nAcme | 120 | Layoff\nBolt | 35 | Closure\n"
    assert len(out.boxes) == len(out.text)
    (table,) = tables
    assert [out.text[s:e] for s, e in table.rows] == [
        "Acme | 120 | Layoff",
        "Bolt | 35 | Closure",
    ]
    # Cell characters keep their own boxes; the separators are synthesized.
    start = out.text.index("Layoff")
    assert out.boxes[start] == (210, 22, 215, 30)
    sep = out.text.index(CELL_SEPARATOR)
    assert out.boxes[sep : sep + 3] == [None, None, None]


def test_a_grid_without_two_multi_cell_rows_leaves_the_page_alone() -> None:
    page = _page([("A boxed note", 10, 22), ("second line", 10, 2)])
    # One column: a frame around a paragraph, not a table.
    grids = find_grids(_grid_rules([0, 300], [0, 20, 40]), 0)
    out, tables = assemble_tables(page, grids, 0)
    assert out is page and tables == []


def test_wrapped_cell_joins_its_lines_and_cjk_lines_join_without_space() -> None:
    page = _page(
        [
            ("Name", 10, 30),
            ("Value", 110, 25),
            ("of it", 10, 20),
            ("财务", 210, 30),
            ("费用", 210, 20),
            ("X", 10, 2),
            ("1", 110, 2),
            ("2", 210, 2),
        ]
    )
    grids = find_grids(_grid_rules([0, 100, 200, 300], [0, 18, 42]), 0)
    out, (table,) = assemble_tables(page, grids, 0)
    assert [out.text[s:e] for s, e in table.rows] == ["Name of it | Value | 财务费用", "X | 1 | 2"]


def test_a_spanning_cell_and_empty_columns() -> None:
    rules = _grid_rules([0, 100, 200, 300], [0, 20, 40])
    # The middle column rule stops at y=20: in the top band columns 2 and 3 are one cell.
    rules = [r for r in rules if not (r.x0 == 200 and r.x1 == 200)] + [Rule(200, 0, 200, 20)]
    page = _page(
        [("Head", 10, 22), ("Spanning title", 110, 22), ("a", 10, 2), ("b", 110, 2), ("c", 210, 2)]
    )
    out, (table,) = assemble_tables(page, find_grids(rules, 0), 0)
    assert [out.text[s:e] for s, e in table.rows] == ["Head | Spanning title", "a | b | c"]


def test_link_headers_continues_a_table_across_pages() -> None:
    def table(first: list[str], columns: tuple[float, ...]) -> PageTable:
        return PageTable(rows=[(0, 1), (2, 3)], cells=[first, ["x", "y"]], columns=columns)

    cols = (0.0, 100.0, 200.0)
    p1 = [table(["Company", "City"], cols)]
    p2 = [table(["Acme", "Torrance"], cols)]  # continues: same columns, no header row
    p3 = [table(["Company", "City"], cols)]  # repeats its header
    p4 = [table(["Tier", "Meaning"], (0.0, 50.0, 300.0))]  # another table
    link_headers([p1, p2, p3, p4])
    assert (p1[0].header, p1[0].header_rows) == ("Company | City", 1)
    assert (p2[0].header, p2[0].header_rows) == ("Company | City", 0)
    assert (p3[0].header, p3[0].header_rows) == ("Company | City", 1)
    assert (p4[0].header, p4[0].header_rows) == ("Tier | Meaning", 1)


def _unit(text: str, tables: list[TableRows]) -> Unit:
    return Unit(index=0, text=text, boxes=[None] * len(text), tables=tables)


def _rows(text: str) -> tuple[tuple[int, int], ...]:
    spans = []
    pos = 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return tuple(spans)


def _table_unit(nrows: int, before: str = "Before the table. It has rows.\n") -> Unit:
    header = "Company | City | Employees"
    rows = [header] + [f"Company number {i} | Some City {i} | {100 + i}" for i in range(nrows)]
    table_text = "\n".join(rows)
    text = before + table_text + "\nAfter the table."
    offset = len(before)
    spans = tuple((s + offset, e + offset) for s, e in _rows(table_text))
    return _unit(text, [TableRows(rows=spans, header_rows=1, header=header)])


def test_table_chunks_never_split_a_row_and_carry_the_header_as_context() -> None:
    unit = _table_unit(30)
    text = unit.text
    (table,) = unit.tables
    chunks = chunk_unit(unit, max_chars=200, overlap=0.15)
    row_set = {text[s:e] for s, e in table.rows}
    table_chunks = [c for c in chunks if c.kind == "table"]
    assert len(table_chunks) >= 5
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]  # citations use the span
        lines = chunk.text.split("\n")
        rows = [line for line in lines if line in row_set]
        assert (chunk.kind == "table") == bool(rows)
        # A row is whole or absent: every row span is inside the chunk or outside it.
        for s, e in table.rows:
            assert e <= chunk.start or s >= chunk.end or (chunk.start <= s and e <= chunk.end)
    # The first chunk holds the caption-like sentence, the header row and the first rows.
    assert table_chunks[0].text.startswith("Before the table.")
    assert table.header in table_chunks[0].text and table_chunks[0].context == ""
    assert all(c.context == table.header for c in table_chunks[1:])
    covered = {line for c in table_chunks for line in c.text.split("\n")}
    assert row_set <= covered


def test_a_small_table_stays_with_its_caption() -> None:
    unit = _table_unit(2, before="Table 11: Prompt for summarization.\n")
    (chunk,) = chunk_unit(unit, max_chars=800)
    assert chunk.kind == "table" and chunk.text.startswith("Table 11") and chunk.context == ""


def test_a_row_longer_than_the_limit_is_a_chunk_alone() -> None:
    long_row = "Name | " + " ".join(["word"] * 60)
    text = "h1 | h2\n" + long_row + "\nx | y"
    rows = _rows(text)
    unit = _unit(text, [TableRows(rows=rows, header_rows=1, header="h1 | h2")])
    chunks = chunk_unit(unit, max_chars=100, overlap=0.15)
    assert long_row in [c.text for c in chunks]
    assert all(c.kind == "table" for c in chunks)


def test_a_unit_without_tables_chunks_as_before() -> None:
    text = "One sentence here. Another one there. " * 40
    unit = _unit(text, [])
    chunks = chunk_unit(unit, max_chars=300)
    assert all(c.kind == "text" and c.context == "" for c in chunks)


def test_vectorized_frame_boxes_equal_frame_rect_for_every_rotation() -> None:
    """The numpy grid membership (``_frame_boxes``) must give frame_rect's values exactly, or
    table text would move."""
    import numpy as np

    from truthbase.extract.tables import _frame_boxes, frame_rect

    boxes: list[Rect] = [
        (10.5, 20.25, 30.0, 41.125),
        (0.0, -0.0, 1e-3, 700.7),
        (-5.0, 3.0, -1.0, 4.0),
    ]
    for rotation in (0, 90, 180, 270, 450):
        got = _frame_boxes(np.array(boxes, dtype=np.float64), rotation).tolist()
        assert got == [list(frame_rect(b, rotation)) for b in boxes]


def test_could_grid_is_false_only_where_no_frame_has_a_grid() -> None:
    rng = random.Random(3)
    for _ in range(300):
        rules = []
        for _ in range(rng.randint(0, 6)):
            x, y = rng.uniform(0, 100), rng.uniform(0, 100)
            kind = rng.random()
            if kind < 0.4:
                rules.append(Rule(x, y, x + rng.uniform(-60, 60), y + rng.uniform(-0.6, 0.6)))
            elif kind < 0.8:
                rules.append(Rule(x, y, x + rng.uniform(-0.6, 0.6), y + rng.uniform(-60, 60)))
            else:
                rules.append(Rule(x, y, rng.uniform(0, 100), rng.uniform(0, 100)))
        if not could_grid(rules):
            assert all(find_grids(rules, rotation) == [] for rotation in (0, 90, 180, 270))
    square = [Rule(0, 0, 50, 0), Rule(0, 30, 50, 30), Rule(0, 0, 0, 30), Rule(50, 0, 50, 30)]
    assert could_grid(square) and find_grids(square, 0)
