"""BoxColumn: a unit's glyph boxes packed in one float64 array and a presence mask (issue 28
item 3), read back bit for bit; and the stored blob of a packed page is the list's."""

from __future__ import annotations

import math
import sys

from truthbase.model import BoxColumn, Rect, Unit, packed_boxes
from truthbase.store.boxes import encode_boxes

BOXES: list[Rect | None] = [
    (10.0, 700.25, 15.5, 712.125),
    None,
    (0.1 + 0.2, -3.0e-7, 1e300, math.pi),  # values a float32 or a decimal round trip would change
    (-0.0, 5.0, 6.0, 7.0),
    None,
]


def test_a_column_reads_back_each_box_and_none_bit_for_bit() -> None:
    column = packed_boxes(BOXES)
    assert isinstance(column, BoxColumn)
    assert len(column) == len(BOXES)
    assert list(column) == BOXES
    assert [column[i] for i in range(len(BOXES))] == BOXES
    assert column[-1] is None and column[-3] == BOXES[2]
    assert column[1:4] == BOXES[1:4] and column[::2] == BOXES[::2]
    assert math.copysign(1.0, column[3][0]) == -1.0  # type: ignore[index]  # -0.0 stays
    assert column == BOXES and BOXES.__eq__(column) is NotImplemented  # list defers to it
    assert list.__eq__(BOXES, list(column)) and column == packed_boxes(BOXES)
    assert column != BOXES[:-1] and column != [*BOXES[:-1], (1.0, 1.0, 1.0, 1.0)]


def test_out_of_range_raises_as_a_list_does() -> None:
    column = packed_boxes(BOXES)
    for index in (len(BOXES), -len(BOXES) - 1):
        try:
            column[index]
        except IndexError:
            continue
        raise AssertionError(f"index {index} did not raise")


def test_boxes_that_would_not_come_back_the_same_stay_a_list() -> None:
    with_int: list[Rect | None] = [(1.0, 2.0, 3.0, 4.0), (1, 2, 3, 4)]  # type: ignore[list-item]
    assert packed_boxes(with_int) is with_int
    column = packed_boxes(BOXES)
    assert packed_boxes(column) is column


def test_a_column_is_a_fraction_of_a_list_of_tuples() -> None:
    boxes: list[Rect | None] = [(float(i), i + 0.5, i + 1.5, i + 2.5) for i in range(10_000)]
    as_list = sys.getsizeof(boxes) + sum(
        sys.getsizeof(b) + sum(sys.getsizeof(v) for v in b) for b in boxes if b is not None
    )
    column = packed_boxes(boxes)
    assert isinstance(column, BoxColumn)
    assert column.values.typecode == "f"  # float32s, as pdfium's boxes are: kept as such
    packed = sys.getsizeof(column.values) + sys.getsizeof(column.present)
    assert packed * 10 < as_list, (packed, as_list)


def test_values_that_are_not_float32s_keep_float64() -> None:
    column = packed_boxes(BOXES)  # 0.1 + 0.2 and pi are not float32s
    assert isinstance(column, BoxColumn) and column.values.typecode == "d"
    assert list(column) == BOXES
    exact: list[Rect | None] = [(0.5, 0.25, 1e30, -3.0), None]
    assert list(packed_boxes(exact)) == exact  # 1e30 is no float32: float64 kept


def test_the_stored_blob_of_a_column_is_the_lists() -> None:
    text = "ab cd"
    page = [b if b is None or b[2] < 1e30 else (0.3, 0.1, 2.0, math.pi) for b in BOXES]
    assert encode_boxes(text, packed_boxes(page)) == encode_boxes(text, page)
    grid: list[Rect | None] = [(i * 0.5, 100.0, i * 0.5 + 0.5, 110.0) for i in range(5)]
    assert encode_boxes(text, packed_boxes(grid)) == encode_boxes(text, grid)
    empty: list[Rect | None] = [None] * 5
    assert encode_boxes(text, packed_boxes(empty)) is None


def test_a_unit_takes_a_column() -> None:
    unit = Unit(index=0, text="ab cd", boxes=packed_boxes(BOXES))
    assert unit.boxes == BOXES
    try:
        Unit(index=0, text="abc", boxes=packed_boxes(BOXES))
    except ValueError:
        return
    raise AssertionError("a column of another length was taken")
