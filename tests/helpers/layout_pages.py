"""PDF pages made of lines of text, each line's glyph boxes of one height: what the layout rules
read (section headings in truthbase.sections, a document's shown title in extract/title.py)."""

from __future__ import annotations

from truthbase.model import Rect, TextSource, Unit

__all__ = ["lines_page"]


def lines_page(index: int, lines: list[tuple[str, float]], source: TextSource = "pdf") -> Unit:
    """Page ``index`` of these (text, glyph height) lines; the line breaks have no box."""
    text = "\n".join(line for line, _ in lines)
    boxes: list[Rect | None] = []
    for i, (line, height) in enumerate(lines):
        boxes += [(0.0, 0.0, 5.0, height)] * len(line)
        if i < len(lines) - 1:
            boxes.append(None)
    return Unit(index=index, text=text, boxes=boxes, text_source=source)
