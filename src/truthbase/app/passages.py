"""A span of a document as a citation shows it, and the web app's link to one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ..cite.tags import format_tag
from ..errors import InvalidInput, NotFound
from ..geometry import span_line_rects
from ..model import DocumentInfo, Rect
from ..store import Store

__all__ = ["Passage", "read_passage", "viewer_url"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """One span of a unit's canonical text, as a citation would show it.

    ``unit`` is 0-based (a PDF page or an EPUB section); ``page`` is ``unit + 1``;
    ``[start, end)`` are offsets into the unit's canonical text; ``rects`` are one rectangle per
    rendered line in PDF user space (empty for EPUB sections, which have no glyph boxes);
    ``tag`` is the span's position tag ``[f{unit}-{start}-{end}]``."""

    doc_id: str
    title: str
    kind: str
    unit: int
    page: int
    label: str | None
    start: int
    end: int
    text: str
    rects: tuple[Rect, ...]
    tag: str

    def to_json(self) -> dict[str, Any]:
        """The passage as JSON-ready data (rects as ``[x0, y0, x1, y1]`` lists)."""
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "kind": self.kind,
            "unit": self.unit,
            "page": self.page,
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "rects": [list(r) for r in self.rects],
            "tag": self.tag,
        }


def viewer_url(base_url: str, kind: str, doc_id: str, unit: int, start: int, end: int) -> str:
    """The web app's link to a span: ``/view`` (PDF, 1-based page) or ``/read`` (EPUB, 0-based
    section), highlighted, under ``base_url`` (the ``server.base_url`` setting)."""
    base = base_url.rstrip("/")
    if kind == "epub":
        query = {"doc": doc_id, "unit": unit, "start": start, "end": end}
        return f"{base}/read?{urlencode(query)}"
    query = {"doc": doc_id, "page": unit + 1, "start": start, "end": end}
    return f"{base}/view?{urlencode(query)}"


def read_passage(store: Store, info: DocumentInfo, unit: int, start: int, end: int) -> Passage:
    """The span ``[start, end)`` of unit ``unit`` (0-based) of the (visible) document ``info``;
    InvalidInput for a unit or span out of range."""
    if not 0 <= unit < info.unit_count:
        raise InvalidInput(
            f"unit {unit} is out of range: document {info.id[:12]} has units "
            f"0..{info.unit_count - 1}"
        )
    stored = store.unit(info.id, unit)
    if stored is None:
        raise NotFound(f"unit {unit} of document {info.id[:12]} is not stored")
    if not 0 <= start <= end <= len(stored.text):
        raise InvalidInput(
            f"span [{start}, {end}) is outside unit {unit}'s text of length {len(stored.text)}"
        )
    return Passage(
        doc_id=info.id,
        title=info.title,
        kind=info.kind,
        unit=unit,
        page=unit + 1,
        label=stored.label,
        start=start,
        end=end,
        text=stored.text[start:end],
        rects=tuple(span_line_rects(stored.text, stored.boxes, start, end)),
        tag=format_tag(unit, start, end),
    )
