"""A span of a document as a citation shows it, a span as the viewers read it, and the web
app's link to one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from ..cite.tags import format_tag
from ..errors import InvalidInput, NotFound
from ..geometry import span_line_rects
from ..model import DocumentInfo, DocumentKind, Rect, Unit
from ..store import DocumentReader
from .errors import Conflict

__all__ = ["Passage", "UnitSpan", "read_passage", "read_span", "read_unit", "viewer_url"]

_KIND_NAMES: dict[DocumentKind, str] = {"pdf": "a PDF", "epub": "an EPUB"}


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


def read_passage(
    store: DocumentReader, info: DocumentInfo, unit: int, start: int, end: int
) -> Passage:
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


@dataclass(frozen=True, slots=True)
class UnitSpan:
    """A span ``[start, end)`` of a stored unit's canonical text, as the viewers read it (the
    PDF viewer draws its rects, the EPUB reader maps it to DOM ranges)."""

    document: DocumentInfo
    unit: Unit
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.unit.text[self.start : self.end]


def _unit_name(info: DocumentInfo, index: int) -> str:
    return f"section {index}" if info.kind == "epub" else f"page {index + 1}"


def read_unit(
    store: DocumentReader, info: DocumentInfo, index: int, kind: DocumentKind | None = None
) -> Unit:
    """Unit ``index`` (0-based) of the (visible) document ``info``: Conflict when ``kind`` is
    given and the document is of another kind, NotFound when the unit is not stored (or, for an
    EPUB, has no DOM map for the reader)."""
    if kind is not None and info.kind != kind:
        raise Conflict(f"document {info.id} is a {info.kind}, not {_KIND_NAMES[kind]}")
    unit = store.unit(info.id, index)
    if unit is None or (kind == "epub" and unit.dom is None):
        raise NotFound(f"document {info.id} has no {_unit_name(info, index)}")
    return unit


def read_span(
    store: DocumentReader,
    info: DocumentInfo,
    index: int,
    start: int,
    end: int,
    kind: DocumentKind | None = None,
) -> UnitSpan:
    """The span ``[start, end)`` of unit ``index`` (:func:`read_unit`); InvalidInput when it
    is not inside the unit's text."""
    unit = read_unit(store, info, index, kind)
    if not 0 <= start <= end <= len(unit.text):
        noun = "section" if info.kind == "epub" else "page"
        raise InvalidInput(f"span [{start}, {end}) outside {noun} text of length {len(unit.text)}")
    return UnitSpan(info, unit, start, end)
