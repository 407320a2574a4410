"""Re-check stored answers: every citation shown as verified must still be on its page.

``truthbase verify`` runs :func:`verify_answers` over a store's answer log. For each citation
marked verified it reads the stored unit and checks, with the one matcher
(:func:`truthbase.text.matching.quote_in`, through :func:`~truthbase.cite.resolve.span_verified`),
that the citation's quote is in the unit text at [start, end). Citations stored as unverified
were never shown as verified and are counted, not checked.

A citation of a document that was deleted since (``truthbase`` keeps stored answers as they were
shown) is not a failure: it is listed apart as "document deleted" (:class:`DeletedCitation`),
when the caller names the documents the index holds (``known_documents``).

A citation says its quote is on the page by ``verified: true`` or, since citations have states,
by ``state`` ``supported`` or ``quote_only``; either way it is re-checked. A stored answer from
before states has ``verified`` only and is checked as it always was.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..records import MAX_INDEX, StoredAnswer
from .resolve import UnitCache, UnitReader, span_verified

__all__ = [
    "DOCUMENT_DELETED",
    "AuditFailure",
    "AuditReport",
    "DeletedCitation",
    "check_citation",
    "record_int",
    "verify_answers",
]

#: What a citation of a deleted document says, in the audit and wherever it is shown.
DOCUMENT_DELETED = "document deleted"


@dataclass(frozen=True, slots=True)
class DeletedCitation:
    """A stored citation whose document is no longer in the index."""

    answer_id: int
    n: int | None
    doc_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "n": self.n,
            "doc_id": self.doc_id,
            "why": DOCUMENT_DELETED,
        }


@dataclass(frozen=True, slots=True)
class AuditFailure:
    """A citation shown as verified that the re-check does not confirm."""

    answer_id: int
    n: int | None
    doc_id: str
    page: int | None
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "n": self.n,
            "doc_id": self.doc_id,
            "page": self.page,
            "why": self.why,
        }


@dataclass(slots=True)
class AuditReport:
    answers: int = 0
    verified_citations: int = 0  # citations marked verified, each re-checked
    unverified_citations: int = 0  # citations shown as unverified (not re-checked)
    failures: list[AuditFailure] = field(default_factory=list)
    deleted: list[DeletedCitation] = field(default_factory=list)  # not failures

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "answers": self.answers,
            "verified_citations": self.verified_citations,
            "unverified_citations": self.unverified_citations,
            "failures": [f.to_json() for f in self.failures],
            "deleted_citations": [d.to_json() for d in self.deleted],
        }


def record_int(value: Any) -> int | None:
    """``value`` when it is an integer a citation record can hold, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INDEX:
        return value
    return None


def check_citation(units: UnitCache, answer_id: int, citation: Any) -> AuditFailure | None:
    """Why a citation marked verified is not on its page, or None when it is."""
    if not isinstance(citation, dict):
        return AuditFailure(answer_id, None, "", None, "the citation is not an object")
    n = record_int(citation.get("n"))
    doc_id = citation.get("doc_id")
    unit = record_int(citation.get("unit"))
    start, end = record_int(citation.get("start")), record_int(citation.get("end"))
    quote = citation.get("quote")
    page = unit + 1 if unit is not None else record_int(citation.get("page"))
    if not isinstance(doc_id, str) or unit is None or start is None or end is None:
        return AuditFailure(answer_id, n, str(doc_id or ""), page, "incomplete citation record")
    if not isinstance(quote, str) or not quote.strip():
        return AuditFailure(answer_id, n, doc_id, page, "no quote")
    stored = units.get(doc_id, unit)
    if stored is None:
        return AuditFailure(answer_id, n, doc_id, page, "the document or page is not in the index")
    if not 0 <= start < end <= len(stored.text):
        return AuditFailure(
            answer_id,
            n,
            doc_id,
            page,
            f"span [{start}, {end}) outside the page text (length {len(stored.text)})",
        )
    if not span_verified(stored.text, start, end, quote):
        why = "the quote is not in the page text at its span"
        return AuditFailure(answer_id, n, doc_id, page, why)
    return None


_ON_THE_PAGE = ("supported", "quote_only")


def _claims_the_page(citation: Any) -> bool:
    """Whether a stored citation says its quote is on the page (what is re-checked)."""
    if not isinstance(citation, dict):
        return True  # not a citation record: checked, and reported as such
    return citation.get("verified") is True or citation.get("state") in _ON_THE_PAGE


def verify_answers(
    answers: Sequence[StoredAnswer],
    reader: UnitReader,
    known_documents: Collection[str] | None = None,
) -> AuditReport:
    """Re-check every citation marked verified of ``answers`` against ``reader``'s units; with
    ``known_documents`` (the ids the index holds), a citation of any other document is reported
    as deleted, not as a failure."""
    report = AuditReport()
    units = UnitCache(reader)
    for stored in answers:
        report.answers += 1
        citations = stored.answer.get("citations", [])
        if not isinstance(citations, list):
            report.failures.append(
                AuditFailure(stored.id, None, "", None, "the citations are not a list")
            )
            continue
        for citation in citations:
            if not _claims_the_page(citation):
                report.unverified_citations += 1
                continue
            report.verified_citations += 1
            doc_id = citation.get("doc_id") if isinstance(citation, dict) else None
            if (
                known_documents is not None
                and isinstance(doc_id, str)
                and doc_id not in known_documents
            ):
                n = record_int(citation.get("n"))
                report.deleted.append(DeletedCitation(stored.id, n, doc_id))
                continue
            failure = check_citation(units, stored.id, citation)
            if failure is not None:
                report.failures.append(failure)
    return report
