"""Re-check an exported report against an index: what it cites must still hold.

The evidence block of a report (:func:`.html.read_evidence`) keeps each answer's citations as
the answer log kept them, so the re-check is ``truthbase verify``'s audit
(:func:`truthbase.cite.verify_answers`, the one matcher) over them. Where the audit of the log
lists a citation of a deleted document apart (the log keeps answers as they were shown), a report
is evidence: a cited document that is no longer in the index no longer holds, and is listed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..cite import AuditFailure, verify_answers
from ..cite.audit import record_int
from ..cite.resolve import UnitReader
from ..errors import InvalidInput
from ..records import StoredAnswer

__all__ = ["NOT_IN_INDEX", "ReportCheck", "ReportProblem", "recheck_report"]

#: Why a citation of a document the index no longer holds fails the re-check.
NOT_IN_INDEX = "the document (this sha256) is no longer in the index"


#: A citation of the report that no longer holds, and why: the same record as a failure of
#: ``truthbase verify`` (:class:`~truthbase.cite.AuditFailure`).
ReportProblem = AuditFailure


@dataclass(slots=True, kw_only=True)
class ReportCheck:
    """What the re-check of a report found."""

    answers: int = 0
    checked: int = 0  # citations the report shows on their page, each re-checked
    unverified: int = 0  # citations the report shows as unverified (nothing to re-check)
    problems: list[ReportProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "answers": self.answers,
            "checked_citations": self.checked,
            "unverified_citations": self.unverified,
            "problems": [p.to_json() for p in self.problems],
        }


def _stored(entry: Any) -> StoredAnswer:
    if not isinstance(entry, dict):
        raise InvalidInput("an answer of the report's evidence is not an object")
    answer_id, answer = entry.get("id"), entry.get("answer")
    if not isinstance(answer_id, int) or not isinstance(answer, dict):
        raise InvalidInput("an answer of the report's evidence has no id or no answer record")
    return StoredAnswer(
        answer_id, str(entry.get("question", "")), answer, str(entry.get("created_at", ""))
    )


def _page(citation: dict[str, Any]) -> int | None:
    unit = record_int(citation.get("unit"))
    return unit + 1 if unit is not None else None


def _citations(answer: StoredAnswer) -> list[Any]:
    """The answer's citation records (none when they are not a list: the audit reports that)."""
    citations = answer.answer.get("citations", [])
    return citations if isinstance(citations, list) else []


def recheck_report(
    evidence: dict[str, Any], reader: UnitReader, known_documents: Collection[str]
) -> ReportCheck:
    """Re-check the citations of ``evidence`` (a report's evidence block) against ``reader``'s
    units; ``known_documents`` are the ids the index holds. InvalidInput for evidence that is
    not made of answer records."""
    answers = [_stored(entry) for entry in evidence.get("answers", [])]
    audit = verify_answers(answers, reader, known_documents)
    check = ReportCheck(
        answers=audit.answers,
        checked=audit.verified_citations,
        unverified=audit.unverified_citations,
    )
    pages = {
        (a.id, record_int(c.get("n")), c["doc_id"]): _page(c)
        for a in answers
        for c in _citations(a)
        if isinstance(c, dict) and isinstance(c.get("doc_id"), str)
    }
    for d in audit.deleted:
        page = pages.get((d.answer_id, d.n, d.doc_id))
        check.problems.append(
            ReportProblem(
                answer_id=d.answer_id, n=d.n, doc_id=d.doc_id, page=page, why=NOT_IN_INDEX
            )
        )
    check.problems.extend(audit.failures)
    check.problems.sort(key=lambda p: (p.answer_id, p.n if p.n is not None else -1))
    return check
