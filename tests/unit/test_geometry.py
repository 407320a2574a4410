"""span_line_rects: one rectangle per rendered line, from per-character boxes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.geometry import span_line_rects
from truthbase.model import Rect


def line(text: str, x: float, y: float, width: float = 5.0, height: float = 10.0) -> list[Rect]:
    return [(x + i * width, y, x + (i + 1) * width, y + height) for i in range(len(text))]


def test_one_rect_per_line_and_union_within_a_line() -> None:
    text = "abc\ndef"
    boxes: list[Rect | None] = [*line("abc", 10, 100), None, *line("def", 10, 88)]
    assert span_line_rects(text, boxes, 0, len(text)) == [(10, 100, 25, 110), (10, 88, 25, 98)]
    assert span_line_rects(text, boxes, 1, 6) == [(15, 100, 25, 110), (10, 88, 20, 98)]


def test_a_wrap_without_a_line_break_still_starts_a_new_line() -> None:
    # pdfium joins a hyphenated word across lines with no break character between the halves
    text = "abcdef"
    boxes: list[Rect | None] = [*line("abc", 50, 100), *line("def", 10, 88)]
    assert span_line_rects(text, boxes, 0, 6) == [(50, 100, 65, 110), (10, 88, 25, 98)]


def test_superscripts_stay_on_their_line() -> None:
    text = "ab1"
    boxes: list[Rect | None] = [*line("ab", 0, 100), (10, 104, 13, 112)]
    assert span_line_rects(text, boxes, 0, 3) == [(0, 100, 13, 112)]


def test_right_to_left_runs_stay_one_line() -> None:
    text = "abc"
    boxes: list[Rect | None] = [(30, 0, 35, 10), (25, 0, 30, 10), (20, 0, 25, 10)]
    assert span_line_rects(text, boxes, 0, 3) == [(20, 0, 35, 10)]


def test_synthesized_characters_contribute_nothing() -> None:
    assert span_line_rects("  ", [None, None], 0, 2) == []
    assert span_line_rects("", [], 0, 0) == []


def test_bad_spans_are_rejected() -> None:
    with pytest.raises(ValueError):
        span_line_rects("ab", [None, None], 1, 3)
    with pytest.raises(ValueError):
        span_line_rects("ab", [None, None], 2, 1)


@given(st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8))
def test_every_glyph_is_inside_some_rect(line_lengths: list[int]) -> None:
    text_parts: list[str] = []
    boxes: list[Rect | None] = []
    for i, length in enumerate(line_lengths):
        text_parts.append("x" * length)
        boxes.extend(line("x" * length, 10, 500 - 14 * i))
        text_parts.append("\n")
        boxes.append(None)
    text = "".join(text_parts)
    rects = span_line_rects(text, boxes, 0, len(text))
    assert len(rects) == len(line_lengths)
    for box in boxes:
        if box is not None:
            assert any(
                r[0] <= box[0] and box[2] <= r[2] and r[1] <= box[1] and box[3] <= r[3]
                for r in rects
            )
