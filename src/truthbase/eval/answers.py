"""Answer evaluation on a golden set: refusals, answers, correct citations, verified share.

A citation is *correct* when it holds a golden evidence record on the same document and page
(:func:`truthbase.eval.evidence.citation_holds`): its span overlaps the golden quote's span, found
in the stored unit text with the one matcher (:func:`truthbase.text.matching.find_quote`; fuzzily
for an OCR record), or, for table evidence, its span holds every cell of the record.
``verified_share`` re-checks every citation marked verified independently of the citation code:
the stored unit is read again and the quote must be in the text at the citation's span. It must
be 1.0.

Unanswerable questions are all asked (they name no document); answerable ones whose documents
are not indexed are skipped, as in the retrieval evaluation, except where a document failed to
ingest: its questions are asked and can only miss. On a set that uses the README's
"Capabilities" section the report adds ``by_capability``: the metrics per tag and, for
questions with table evidence, the share whose citations hold all the row's cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..answer import Answer, Answerer, ask
from ..config import RetrievalSettings
from ..embed import Embedder
from ..store import DocumentReader, Searchable
from ..text.matching import normalize, quote_in
from .evidence import citation_holds, locate_evidence
from .golden import CAPABILITY_TAGS, GoldenEvidence, GoldenQuestion, GoldenSet
from .metrics import same_section
from .refusal import cross_validate_refusal
from .retrieval import PreparedCorpus, missing_documents, split_questions

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
    """Where an evidence record lies in the stored text: its unit, and its quote's span."""

    doc_id: str
    unit: int
    start: int
    end: int
    evidence: GoldenEvidence
    text: str  # the stored unit text (table evidence is checked against a citation's span)


def golden_spans(
    question: GoldenQuestion, prepared: PreparedCorpus, store: DocumentReader
) -> tuple[list[GoldenSpan], list[str]]:
    """Where each evidence record lies in the stored text, and the records that were not found."""
    spans: list[GoldenSpan] = []
    missing: list[str] = []
    for evidence in question.evidence:
        doc_id = prepared.doc_ids.get(evidence.doc)
        index = evidence.unit_index
        if evidence.section is not None and doc_id is not None:
            index = section_unit(store, doc_id, evidence.section)
        unit = store.unit(doc_id, index) if doc_id is not None and index is not None else None
        found = locate_evidence(evidence, unit.text) if unit is not None else None
        if doc_id is None or index is None or unit is None or found is None:
            missing.append(f"{evidence.doc} p{evidence.page or evidence.section}")
            continue
        spans.append(GoldenSpan(doc_id, index, found[0], found[1], evidence, unit.text))
    return spans, missing


def section_unit(store: DocumentReader, doc_id: str, section: str) -> int | None:
    """The unit index of an EPUB spine item named by its href (as golden sets name sections)."""
    info = store.document(doc_id)
    for index in range(info.unit_count if info is not None else 0):
        unit = store.unit(doc_id, index)
        if unit is not None and unit.href is not None and same_section(unit.href, section):
            return index
    return None


def recheck(
    store: DocumentReader, doc_id: str, unit: int, start: int, end: int, quote: str
) -> bool:
    """The evaluation's own check of a citation: the quote is in the stored text at its span."""
    stored = store.unit(doc_id, unit)
    if stored is None or not 0 <= start < end <= len(stored.text) or not normalize(quote):
        return False
    return quote_in(quote, stored.text[start:end])


def _holds(spans: Sequence[GoldenSpan], doc_id: str, unit: int, start: int, end: int) -> bool:
    """Whether a citation holds one of the located evidence records."""
    return any(
        s.doc_id == doc_id
        and s.unit == unit
        and citation_holds(s.evidence, (s.start, s.end), s.text, start, end)
        for s in spans
    )


def _cells_held(question: GoldenQuestion, answer: Answer, spans: Sequence[GoldenSpan]) -> bool:
    """An answered table question whose citations hold all the cells of every table record."""
    tables = [s for s in spans if s.evidence.cells is not None]
    wanted = sum(1 for e in question.evidence if e.cells is not None)
    return (
        not answer.refused
        and len(tables) == wanted
        and all(
            any(
                c.doc_id == s.doc_id
                and c.unit == s.unit
                and citation_holds(s.evidence, None, s.text, c.start, c.end)
                for c in answer.citations
            )
            for s in tables
        )
    )


def _record(
    question: GoldenQuestion, answer: Answer, spans: Sequence[GoldenSpan], store: DocumentReader
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
                "correct": _holds(spans, c.doc_id, c.unit, c.start, c.end),
            }
        )
    extra: dict[str, Any] = {}
    if any(e.cells is not None for e in question.evidence):
        extra["cells_held"] = _cells_held(question, answer, spans)
    if answer.info.get("unfilled_slot"):
        extra["unfilled_slot"] = answer.info["unfilled_slot"]  # refused by policy rule 3's slot
    return {
        "id": question.id,
        "answerable": question.answerable,
        "tags": list(question.tags),
        "kind": question.kind,
        "refused": answer.refused,
        "weak": answer.outcome == "weak",
        "support": answer.info.get("support"),
        "answer_probability": answer.info.get("answer_probability"),
        "refusal_features": answer.info.get("refusal_features"),
        "text": answer.text,
        "citations": citations,
        "correct": any(c["correct"] for c in citations),
        "problems": list(answer.problems),
        **extra,
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


def by_capability(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per capability tag present (ocr, german, table, cjk), the answer metrics of its questions
    and ``n``; ``unanswerable_refused`` only where the tag has unanswerable questions, and
    ``cells_held`` (the share of its table-evidence questions answered with citations that hold
    all the row's cells) where it has such questions."""
    report: dict[str, dict[str, Any]] = {}
    for tag in CAPABILITY_TAGS:
        group = [r for r in records if tag in r["tags"]]
        if not group:
            continue
        summary: dict[str, Any] = {"n": len(group), **summarize(group)}
        if not any(not r["answerable"] for r in group):
            del summary["unanswerable_refused"], summary["weak_unanswerable"]
        tables = [r for r in group if "cells_held" in r]
        if tables:
            summary["table_questions"] = len(tables)
            summary["cells_held"] = sum(r["cells_held"] for r in tables) / len(tables)
        report[tag] = summary
    return report


def evaluate_answers(
    golden: GoldenSet,
    prepared: PreparedCorpus,
    store: Searchable,
    embedder: Embedder,
    retrieval: RetrievalSettings,
    *,
    answerer: Answerer | None = None,
    on_question: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The answer report: metrics, the refusal threshold curve, skipped and per-question records."""
    runnable, skipped = split_questions(golden, prepared)
    missing_docs = missing_documents(golden, prepared)
    questions = [q for q in golden.questions if not q.answerable] + runnable
    order = {q.id: i for i, q in enumerate(golden.questions)}
    questions.sort(key=lambda q: order[q.id])
    records: list[dict[str, Any]] = []
    name = "extractive"
    for question in questions:
        if on_question is not None:
            on_question(question.id)
        spans, missing = golden_spans(question, prepared, store)
        answer = ask(store, embedder, question.question, retrieval, answerer=answerer)
        name = answer.answerer
        record = _record(question, answer, spans, store)
        if missing:
            record["golden_quotes_not_found"] = missing
        unindexed = sorted({e.doc for e in question.evidence} & set(missing_docs))
        if unindexed:
            record["missing_documents"] = unindexed
        records.append(record)
    kinds = sorted({r["kind"] for r in records if r["answerable"]})
    by_kind = {}
    for kind in kinds:
        # Unanswerable questions have no evidence, so no kind: the refusal share is overall only.
        summary = summarize([r for r in records if r["kind"] == kind])
        del summary["unanswerable_refused"], summary["weak_unanswerable"]
        by_kind[kind] = {"n": sum(r["kind"] == kind for r in records), **summary}
    extra: dict[str, Any] = {}
    if golden.uses_capabilities:
        extra["by_capability"] = by_capability(records)
    if missing_docs:
        extra["missing_documents"] = missing_docs
    return {
        **summarize(records),
        "by_kind": by_kind,
        **extra,
        "answerer": name,
        "questions": len(records),
        "skipped": skipped,
        "threshold_curve": threshold_curve(records),
        # One support threshold fitted on part of the questions, measured on the rest: the
        # comparison for the refusal model (``eval refusal``), which decides today.
        "refusal_cv": [
            cross_validate_refusal(records, allowed_per_fold=allowed) for allowed in (0, 1)
        ],
        "per_question": records,
    }
