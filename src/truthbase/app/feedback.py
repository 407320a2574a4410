"""Feedback on shown answers as use cases, for every door (the chat page's buttons, the HTTP
API, ``truthbase feedback``), and the draft golden set made from it.

The rules, decided here once:

* A user reports only on an answer they may see: one they asked, or, for those who see
  everything (admins, the operator, the local user), any. Any other answer id is NotFound,
  exactly as a missing one.
* ``up`` and ``down`` are said of the answer as a whole (citation 0); ``wrong_passage`` of one
  of its citations [n]; ``passage_missing`` of a citation or of the answer (0: the passage that
  supports it is not cited at all). A comment is optional, at most :data:`COMMENT_MAX_CHARS`.
* A user's later report of a group (up/down; wrong/missing) on the same answer and citation
  replaces the earlier (the store does it in one transaction).
* A user lists their own reports (all, or those on one answer: a reopened answer shows them
  as given); those who see everything list everyone's, and only they draft
  a golden set from them.
* A report is not counted against the chat quota: it calls no model, and the replacing rule
  bounds a user's reports by the answers they were shown (which the quota counts) times their
  citations and the two groups.

The draft (:func:`draft_golden`) is for a person to review, in the golden format of
``shared/golden/README.md``: an up-voted answer's citations become its evidence (the cited
span's text as the quote, its page or EPUB section), less those reported as the wrong passage;
every question carries the tag ``feedback`` and, when a report asks a person to look, ``review``
with the reason (``wrong-passage``, ``passage-missing``, ``thumbs-down``). The format allows no
answerable question without evidence, so a question left without any (its passage missing, or
no confirmed citation) goes to the draft's ``needs_evidence`` list instead, written beside the
golden file (:func:`needs_evidence_path`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..access import owns_answer, sees_everything
from ..errors import InvalidInput, NotFound
from ..people import FEEDBACK_KINDS, FeedbackKind, FeedbackRecord, NewFeedback, Viewer
from ..store import Store
from ..text.valid import quoted
from .errors import Forbidden

__all__ = [
    "COMMENT_MAX_CHARS",
    "GoldenDraft",
    "draft_golden",
    "give_feedback",
    "list_feedback",
    "needs_evidence_path",
    "own_feedback",
]

COMMENT_MAX_CHARS = 2000
#: Reports an admin's listing shows when nobody says how many.
LATEST = 50


def _check(kind: str, citation: int, comment: str, cited: set[int]) -> FeedbackKind:
    if kind not in FEEDBACK_KINDS:
        raise InvalidInput(
            f"unknown feedback kind {quoted(kind)} (one of: {', '.join(FEEDBACK_KINDS)})"
        )
    if len(comment) > COMMENT_MAX_CHARS:
        raise InvalidInput(f"a comment is at most {COMMENT_MAX_CHARS} characters")
    if kind in ("up", "down") and citation != 0:
        raise InvalidInput(f"{kind} is said of the answer as a whole (citation 0)")
    if kind == "wrong_passage" and citation not in cited:
        raise InvalidInput(f"the answer has no citation [{citation}]")
    if kind == "passage_missing" and citation != 0 and citation not in cited:
        raise InvalidInput(f"the answer has no citation [{citation}]")
    return kind


def give_feedback(
    store: Store,
    viewer: Viewer,
    answer_id: int,
    kind: str,
    *,
    citation: int = 0,
    comment: str = "",
) -> FeedbackRecord:
    """Keep ``viewer``'s report on answer ``answer_id``; NotFound for an answer they may not
    see, InvalidInput for a report that does not fit the answer."""
    stored = store.answer(answer_id)
    if stored is None or not owns_answer(viewer, stored.asked_by):
        raise NotFound(f"no answer {answer_id}")
    cited = {int(c["n"]) for c in stored.answer.get("citations", [])}
    checked = _check(kind, citation, comment.strip(), cited)
    report_id = store.put_feedback(
        NewFeedback(
            answer_id=answer_id,
            citation=citation,
            kind=checked,
            comment=comment.strip(),
            user_id=viewer.user_id,
        )
    )
    given = store.feedback(user_id=viewer.user_id, answer_id=answer_id)
    return next(r for r in given if r.id == report_id)


def own_feedback(store: Store, viewer: Viewer, answer_id: int) -> list[FeedbackRecord]:
    """The viewer's own reports on answer ``answer_id``, newest first (a reopened answer shows
    them as given); NotFound for an answer they may not report on, as :func:`give_feedback`.
    Those who see everything still get only their own: the buttons show what *they* said."""
    stored = store.answer(answer_id)
    if stored is None or not owns_answer(viewer, stored.asked_by):
        raise NotFound(f"no answer {answer_id}")
    return store.feedback(user_id=viewer.user_id, answer_id=answer_id)


def list_feedback(store: Store, viewer: Viewer, limit: int | None = LATEST) -> list[FeedbackRecord]:
    """The latest reports, newest first: everyone's for those who see everything, else the
    viewer's own."""
    everyone = sees_everything(viewer)
    return store.feedback(user_id=viewer.user_id, everyone=everyone, limit=limit)


@dataclass(frozen=True, slots=True)
class GoldenDraft:
    """A draft golden set (``golden``: the format's JSON object) and the reported questions
    that need a person to find their evidence (``needs_evidence``)."""

    golden: dict[str, Any]
    needs_evidence: list[dict[str, Any]]


def needs_evidence_path(golden_path: Path) -> Path:
    """Where the draft's ``needs_evidence`` list is written: beside the golden file."""
    return golden_path.with_name(f"{golden_path.stem}.needs_evidence.json")


def _review_tags(kinds: set[FeedbackKind]) -> list[str]:
    reasons: dict[FeedbackKind, str] = {
        "wrong_passage": "wrong-passage",
        "passage_missing": "passage-missing",
        "down": "thumbs-down",
    }
    tags = [reason for kind, reason in reasons.items() if kind in kinds]
    return ["review", *tags] if tags else []


class _Names:
    """Each cited document's name in the set (its file name's stem, made unique) and path."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.documents: dict[str, dict[str, str]] = {}
        self._by_id: dict[str, str] = {}

    def name(self, doc_id: str) -> str | None:
        if doc_id not in self._by_id:
            info = self._store.document(doc_id)
            if info is None:
                return None
            base = Path(info.path).stem or doc_id[:12]
            name, n = base, 2
            while name in self.documents:
                name, n = f"{base}-{n}", n + 1
            self._by_id[doc_id] = name
            self.documents[name] = {"path": info.path}
        return self._by_id[doc_id]


def _evidence(store: Store, names: _Names, citation: dict[str, Any]) -> dict[str, Any] | None:
    name = names.name(str(citation["doc_id"]))
    if name is None:  # the document was deleted since
        return None
    record: dict[str, Any] = {"doc": name, "quote": str(citation["quote"])}
    unit = int(citation["unit"])
    stored = store.unit(str(citation["doc_id"]), unit)
    if stored is not None and stored.href:
        record["section"] = stored.href.split("#", 1)[0]
    else:
        record["page"] = unit + 1
    return record


def _question(
    store: Store, names: _Names, answer_id: int, reports: Sequence[FeedbackRecord]
) -> tuple[dict[str, Any], bool]:
    """The draft question of one answer and whether its evidence is complete."""
    stored = store.answer(answer_id)
    assert stored is not None  # a report's answer is kept as long as the report
    kinds = {r.kind for r in reports}
    wrong = {r.citation for r in reports if r.kind == "wrong_passage"}
    confirmed = "up" in kinds and "down" not in kinds
    refused = bool(stored.answer.get("refused"))
    evidence: list[dict[str, Any]] = []
    if confirmed and not refused and "passage_missing" not in kinds:
        for citation in stored.answer.get("citations", []):
            if int(citation["n"]) not in wrong:
                record = _evidence(store, names, citation)
                if record is not None and record not in evidence:
                    evidence.append(record)
    unanswerable = confirmed and refused
    tags = ["feedback", *_review_tags(kinds)] + (["unanswerable"] if unanswerable else [])
    comments = [r.comment for r in reports if r.comment]
    question: dict[str, Any] = {
        "id": f"fb{answer_id}",
        "question": stored.question,
        "answerable": not unanswerable,
        "answer": None if unanswerable else str(stored.answer.get("text", "")),
        "evidence": evidence,
        "tags": tags,
    }
    if comments:
        question["comments"] = comments  # only in needs_evidence: the format has no field
    return question, unanswerable or bool(evidence)


def draft_golden(store: Store, viewer: Viewer) -> GoldenDraft:
    """Every reported question as a draft golden set, for a person to review; Forbidden for
    those who do not see everything (the reports are everyone's)."""
    if not sees_everything(viewer):
        raise Forbidden("drafting a golden set from feedback is for admins")
    by_answer: dict[int, list[FeedbackRecord]] = defaultdict(list)
    for report in store.feedback(everyone=True):
        by_answer[report.answer_id].append(report)
    names = _Names(store)
    questions: list[dict[str, Any]] = []
    needs: list[dict[str, Any]] = []
    for answer_id in sorted(by_answer):
        question, complete = _question(store, names, answer_id, by_answer[answer_id])
        if complete:
            question.pop("comments", None)
            questions.append(question)
        else:
            needs.append(question)
    golden = {"version": 1, "documents": names.documents, "questions": questions}
    return GoldenDraft(golden=golden, needs_evidence=needs)
