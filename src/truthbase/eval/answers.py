"""Answer evaluation on a golden set: refusals, answers, correct citations, verified share.

A citation is *correct* when its span overlaps the span of a golden quote on the same document
and page; the golden quote's span is found in the stored unit text with the one matcher
(:func:`truthbase.textmatch.find_quote`). ``verified_share`` re-checks every citation marked
verified independently of the citation code: the stored unit is read again and the quote must
be in the text at the citation's span. It must be 1.0.

Unanswerable questions are all asked (they name no document); answerable ones whose documents
are not indexed are skipped, as in the retrieval evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..answer import Answer, Answerer, ask
from ..config import RetrievalSettings
from ..embed import Embedder
from ..store import Store
from ..textmatch import find_quote, normalize, quote_in
from .golden import GoldenQuestion, GoldenSet
from .metrics import same_section
from .refusal import cross_validate_refusal
from .retrieval import PreparedCorpus, split_questions

#: The metrics the answer gate compares; "false_refusals" is lower-is-better.
ANSWER_METRICS = (
    "unanswerable_refused",
    "answered",
    "answered_with_correct_citation",
    "citation_precision",
    "false_refusals",
    "verified_share",
)


@dataclass(frozen=True, slots=True)
class GoldenSpan:
    doc_id: str
    unit: int
    start: int
    end: int


def golden_spans(
    question: GoldenQuestion, prepared: PreparedCorpus, store: Store
) -> tuple[list[GoldenSpan], list[str]]:
    """Where each evidence quote lies in the stored text, and the quotes that were not found."""
    spans: list[GoldenSpan] = []
    missing: list[str] = []
    for evidence in question.evidence:
        doc_id = prepared.doc_ids.get(evidence.doc)
        index = evidence.unit_index
        if evidence.section is not None and doc_id is not None:
            index = section_unit(store, doc_id, evidence.section)
        unit = store.unit(doc_id, index) if doc_id is not None and index is not None else None
        found = find_quote(evidence.quote, unit.text) if unit is not None else None
        if doc_id is None or index is None or found is None:
            missing.append(f"{evidence.doc} p{evidence.page or evidence.section}")
            continue
        spans.append(GoldenSpan(doc_id, index, found[0][0], found[-1][1]))
    return spans, missing


def section_unit(store: Store, doc_id: str, section: str) -> int | None:
    """The unit index of an EPUB spine item named by its href (as golden sets name sections)."""
    info = store.document(doc_id)
    for index in range(info.unit_count if info is not None else 0):
        unit = store.unit(doc_id, index)
        if unit is not None and unit.href is not None and same_section(unit.href, section):
            return index
    return None


def recheck(store: Store, doc_id: str, unit: int, start: int, end: int, quote: str) -> bool:
    """The evaluation's own check of a citation: the quote is in the stored text at its span."""
    stored = store.unit(doc_id, unit)
    if stored is None or not 0 <= start < end <= len(stored.text) or not normalize(quote):
        return False
    return quote_in(quote, stored.text[start:end])


def _overlaps(spans: Sequence[GoldenSpan], doc_id: str, unit: int, start: int, end: int) -> bool:
    return any(
        s.doc_id == doc_id and s.unit == unit and start < s.end and s.start < end for s in spans
    )


def _record(
    question: GoldenQuestion, answer: Answer, spans: Sequence[GoldenSpan], store: Store
) -> dict[str, Any]:
    citations = []
    for c in answer.citations:
        citations.append(
            {
                "n": c.n,
                "doc_id": c.doc_id,
                "page": c.page,
                "start": c.start,
                "end": c.end,
                "verified": c.verified,
                "state": c.state,
                "rechecked": recheck(store, c.doc_id, c.unit, c.start, c.end, c.quote)
                if c.verified
                else None,
                "correct": _overlaps(spans, c.doc_id, c.unit, c.start, c.end),
            }
        )
    return {
        "id": question.id,
        "answerable": question.answerable,
        "tags": list(question.tags),
        "kind": question.kind,
        "refused": answer.refused,
        "weak": answer.outcome == "weak",
        "support": answer.info.get("support"),
        "text": answer.text,
        "citations": citations,
        "correct": any(c["correct"] for c in citations),
        "problems": list(answer.problems),
    }


def threshold_curve(records: Sequence[dict[str, Any]], step: float = 0.01) -> list[dict[str, Any]]:
    """For each refusal threshold, how many unanswerable and answerable questions it refuses.

    Uses the best support each answer reported (extractive answers do); the answered ones with a
    correct citation are counted among those still answered at that threshold.
    """
    scored = [r for r in records if isinstance(r.get("support"), int | float)]
    if not scored:
        return []
    curve: list[dict[str, Any]] = []
    t = 0.0
    while t <= 1.0 + 1e-9:
        unans = [r for r in scored if not r["answerable"]]
        ans = [r for r in scored if r["answerable"]]
        curve.append(
            {
                "threshold": round(t, 2),
                "unanswerable_refused": sum(r["support"] < t for r in unans),
                "unanswerable": len(unans),
                "answerable_refused": sum(r["support"] < t for r in ans),
                "answerable": len(ans),
            }
        )
        t += step
    return curve


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The answer metrics over per-question records."""
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    citations = [c for r in records if not r["refused"] for c in r["citations"]]
    verified = [c for c in citations if c["verified"]]
    supported = [c for c in verified if c.get("state", "supported") == "supported"]

    def share(part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    return {
        "unanswerable_refused": share(sum(r["refused"] for r in unanswerable), len(unanswerable)),
        "answered": share(sum(not r["refused"] for r in answerable), len(answerable)),
        "answered_with_correct_citation": share(
            sum((not r["refused"]) and r["correct"] for r in answerable), len(answerable)
        ),
        "citation_precision": share(sum(c["correct"] for c in citations), len(citations)),
        "false_refusals": sum(r["refused"] for r in answerable),
        "verified_share": share(sum(bool(c["rechecked"]) for c in verified), len(verified))
        if verified
        else 1.0,
        # Of the citations whose quote rechecks, the share whose claim also passes the support
        # checks (``state`` supported); a record from before states counts as supported.
        "supported_share": share(sum(bool(c["rechecked"]) for c in supported), len(verified))
        if verified
        else 1.0,
        "citations": len(citations),
        "verified_citations": len(verified),
        "supported_citations": len(supported),
        # Weak answers (refused, the closest passages shown) are counted as refused above and
        # reported here apart: how many answerable and unanswerable questions got one.
        "weak_answerable": sum(bool(r.get("weak")) for r in answerable),
        "weak_unanswerable": sum(bool(r.get("weak")) for r in unanswerable),
    }


def evaluate_answers(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Store,
    embedder: Embedder,
    retrieval: RetrievalSettings,
    *,
    answerer: Answerer | None = None,
    on_question: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The answer report: metrics, the refusal threshold curve, skipped and per-question records."""
    runnable, skipped = split_questions(golden, prepared)
    questions = [q for q in golden.questions if not q.answerable] + runnable
    order = {q.id: i for i, q in enumerate(golden.questions)}
    questions.sort(key=lambda q: order[q.id])
    records: list[dict[str, Any]] = []
    name = "extractive"
    fitted: float | None = None
    for question in questions:
        if on_question is not None:
            on_question(question.id)
        spans, missing = golden_spans(question, prepared, store)
        answer = ask(store, embedder, question.question, retrieval, answerer=answerer)
        name = answer.answerer
        if isinstance(answer.info.get("threshold"), int | float):
            fitted = float(answer.info["threshold"])
        record = _record(question, answer, spans, store)
        if missing:
            record["golden_quotes_not_found"] = missing
        records.append(record)
    kinds = sorted({r["kind"] for r in records if r["answerable"]})
    by_kind = {}
    for kind in kinds:
        # Unanswerable questions have no evidence, so no kind: the refusal share is overall only.
        summary = summarize([r for r in records if r["kind"] == kind])
        del summary["unanswerable_refused"], summary["weak_unanswerable"]
        by_kind[kind] = {"n": sum(r["kind"] == kind for r in records), **summary}
    return {
        **summarize(records),
        "by_kind": by_kind,
        "answerer": name,
        "questions": len(records),
        "skipped": skipped,
        "threshold_curve": threshold_curve(records),
        # The refusal threshold fitted on part of the questions, measured on the rest.
        "refusal_cv": [
            cross_validate_refusal(records, allowed_per_fold=allowed, fitted_threshold=fitted)
            for allowed in (0, 1)
        ],
        "per_question": records,
    }
