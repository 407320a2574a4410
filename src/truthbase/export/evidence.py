"""The records of an export: each answer as it was shown, and for each of its citations the
evidence a reader checks by eye (the cited region of the page, or the passage in its context)
beside the facts a machine re-checks (the document's sha256, the unit, the span, the state).

The machine-readable part (:func:`evidence_json`) holds each answer's citations exactly as the
answer log kept them, so ``truthbase verify --report`` re-checks them with the same audit as
``truthbase verify`` (:func:`truthbase.cite.verify_answers`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..model import DocumentKind

__all__ = [
    "EVIDENCE_FORMAT",
    "EVIDENCE_VERSION",
    "CitedEvidence",
    "ExportedAnswer",
    "PassageContext",
    "evidence_json",
    "split_markers",
]

#: The name and version the embedded evidence carries, checked when a report is read back.
EVIDENCE_FORMAT = "truthbase-evidence"
EVIDENCE_VERSION = 1

# An answer's [n] marker as the answer stage writes it (cite/parse.py): [3] or [1, 2].
_MARKER = re.compile(r"\[\s*(\d{1,4}(?:\s*,\s*\d{1,4})*)\s*\]")

# What of a stored answer's JSON the evidence keeps: the sources (whole retrieved chunks) are
# not evidence of anything the answer says, and can be long.
_ANSWER_KEYS = ("text", "refused", "outcome", "answerer", "citations", "problems")


@dataclass(frozen=True, slots=True, kw_only=True)
class PassageContext:
    """The cited passage with the text around it on its page or section."""

    before: str
    quote: str
    after: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CitedEvidence:
    """One citation of an answer, with what shows it.

    ``kind`` is None when the document was no longer in the index at export (then there is no
    title, image or context, only the stored record). ``image_png`` is the cited region of a PDF
    page rendered with its highlight (None for EPUB, or when the file is not the indexed one);
    ``context`` the passage in its context (EPUB, and PDF pages as well). ``link`` opens the
    highlight in the web app (None: no base URL known)."""

    n: int | None
    doc_id: str  # the sha256 of the document's bytes
    title: str
    kind: DocumentKind | None
    unit: int
    page_label: str | None  # the printed page label (PDF), when the document has them
    start: int
    end: int
    quote: str
    claim: str
    state: str  # supported | quote_only | unverified, as the answer showed it
    reasons: tuple[str, ...] = ()
    link: str | None = None
    image_png: bytes | None = None
    context: PassageContext | None = None
    note: str | None = None  # why an image or context is missing

    @property
    def page(self) -> int:
        """The physical page (PDF) or section (EPUB), 1-based."""
        return self.unit + 1

    @property
    def place(self) -> str:
        """Where the passage is, as a reader says it."""
        if self.kind == "epub":
            return f"section {self.page}"
        if self.page_label and self.page_label != str(self.page):
            return f"p. {self.page_label} (page {self.page} of the file)"
        return f"p. {self.page}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportedAnswer:
    """A stored answer with its citations' evidence; ``record`` is the answer's JSON as the log
    kept it."""

    answer_id: int
    question: str
    created_at: str
    text: str
    refused: bool
    citations: tuple[CitedEvidence, ...]
    record: dict[str, Any]


def evidence_json(answers: tuple[ExportedAnswer, ...], exported_at: str) -> dict[str, Any]:
    """The machine-readable evidence of an export: each answer's stored citations (re-checked
    by ``truthbase verify --report``) and the documents they cite, by sha256."""
    documents: dict[str, dict[str, Any]] = {}
    for answer in answers:
        for c in answer.citations:
            documents.setdefault(c.doc_id, {"sha256": c.doc_id, "title": c.title, "kind": c.kind})
    return {
        "format": EVIDENCE_FORMAT,
        "version": EVIDENCE_VERSION,
        "exported_at": exported_at,
        "documents": list(documents.values()),
        "answers": [
            {
                "id": a.answer_id,
                "question": a.question,
                "created_at": a.created_at,
                "answer": {k: a.record[k] for k in _ANSWER_KEYS if k in a.record},
            }
            for a in answers
        ],
    }


def split_markers(text: str) -> Iterator[str | tuple[int, ...]]:
    """``text`` as runs of plain text and the source numbers of each [n] marker, in order."""
    at = 0
    for match in _MARKER.finditer(text):
        if match.start() > at:
            yield text[at : match.start()]
        yield tuple(int(n) for n in match.group(1).split(","))
        at = match.end()
    if at < len(text):
        yield text[at:]
