"""Gather an export from an index: for each citation of each stored answer, the document's
title and page label, the passage in its context and, for a PDF whose file still has the
indexed bytes, the image of the cited region (:mod:`.render`). The I/O shell over the writers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..geometry import span_line_rects
from ..model import DocumentInfo, Unit
from ..records import StoredAnswer
from ..store.base import DocumentReader
from .evidence import CitedEvidence, ExportedAnswer, PassageContext
from .render import file_has_bytes, render_cited_region

__all__ = ["CONTEXT_CHARS", "LinkMaker", "collect_answers"]

#: Characters of the page's text shown on each side of a passage.
CONTEXT_CHARS = 300

#: The web app's link to a span: (kind, doc_id, unit, start, end) -> URL.
LinkMaker = Callable[[str, str, int, int, int], str]


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _state(citation: dict[str, Any]) -> str:
    state = citation.get("state")
    if isinstance(state, str):
        return state
    return "quote_only" if citation.get("verified") is True else "unverified"


def _context(text: str, start: int, end: int) -> PassageContext:
    return PassageContext(
        before=text[max(0, start - CONTEXT_CHARS) : start],
        quote=text[start:end],
        after=text[end : end + CONTEXT_CHARS],
    )


class _Reader:
    """The store's documents and units, each read once per export, and whether each
    document's file still has its indexed bytes (hashed once)."""

    def __init__(self, store: DocumentReader) -> None:
        self._store = store
        self._documents: dict[str, DocumentInfo | None] = {}
        self._units: dict[tuple[str, int], Unit | None] = {}
        self._files: dict[str, bool] = {}

    def document(self, doc_id: str) -> DocumentInfo | None:
        if doc_id not in self._documents:
            self._documents[doc_id] = self._store.document(doc_id)
        return self._documents[doc_id]

    def unit(self, doc_id: str, index: int) -> Unit | None:
        if (doc_id, index) not in self._units:
            self._units[(doc_id, index)] = self._store.unit(doc_id, index)
        return self._units[(doc_id, index)]

    def file_ok(self, info: DocumentInfo) -> bool:
        if info.id not in self._files:
            self._files[info.id] = file_has_bytes(Path(info.path), info.id)
        return self._files[info.id]


def _evidence(reader: _Reader, citation: dict[str, Any], link: LinkMaker | None) -> CitedEvidence:
    doc_id = str(citation.get("doc_id", ""))
    unit_index = _int(citation.get("unit"))
    start, end = _int(citation.get("start")), _int(citation.get("end"))
    reasons = citation.get("reasons")
    fields: dict[str, Any] = {
        "n": citation.get("n") if isinstance(citation.get("n"), int) else None,
        "doc_id": doc_id,
        "unit": unit_index,
        "start": start,
        "end": end,
        "quote": str(citation.get("quote", "")),
        "claim": str(citation.get("claim") or ""),
        "state": _state(citation),
        "reasons": tuple(str(r) for r in reasons) if isinstance(reasons, list) else (),
    }
    info = reader.document(doc_id)
    if info is None:
        note = "the document was no longer in the index at export"
        return CitedEvidence(title="", kind=None, page_label=None, note=note, **fields)
    unit = reader.unit(doc_id, unit_index)
    fields |= {"title": info.title, "kind": info.kind}
    if link is not None:
        fields["link"] = link(info.kind, doc_id, unit_index, start, end)
    if unit is None or not 0 <= start <= end <= len(unit.text):
        note = "the cited page or span is not in the index"
        return CitedEvidence(page_label=None, note=note, **fields)
    fields |= {"page_label": unit.label, "context": _context(unit.text, start, end)}
    if info.kind != "pdf":
        return CitedEvidence(**fields)
    if not reader.file_ok(info):
        note = "no image: the file at the document's path no longer has the indexed bytes"
        return CitedEvidence(note=note, **fields)
    rects = span_line_rects(unit.text, unit.boxes, start, end)
    image = render_cited_region(Path(info.path), unit_index, rects)
    return CitedEvidence(image_png=image, **fields)


def collect_answers(
    store: DocumentReader, answers: Sequence[StoredAnswer], link: LinkMaker | None = None
) -> tuple[ExportedAnswer, ...]:
    """The export of ``answers`` (one, or a thread's in order) from ``store``; ``link`` makes
    each citation's link to the web app (None: no links)."""
    reader = _Reader(store)
    exported = []
    for stored in answers:
        record = stored.answer
        citations = record.get("citations")
        exported.append(
            ExportedAnswer(
                answer_id=stored.id,
                question=stored.question,
                created_at=stored.created_at,
                text=str(record.get("text") or ""),
                refused=record.get("refused") is True,
                citations=tuple(
                    _evidence(reader, c, link)
                    for c in (citations if isinstance(citations, list) else [])
                    if isinstance(c, dict)
                ),
                record=record,
            )
        )
    return tuple(exported)
