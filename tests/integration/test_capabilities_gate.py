"""The capabilities gate: golden/capabilities-dev.json (scans, a table report, German and Chinese
PDFs) against docs/evals/capabilities-baseline.json, and the goals of issue 14.

The baseline holds the `eval retrieval` report (``retrieval``) and the extractive `eval answers`
report (``answers``) of the default settings on the capabilities index, as written by
``benchmarks/capabilities_baseline.py``; it changes only in a commit that says why. Nothing may
fall below it: no question found in the hybrid top 8 lost, no tag's hybrid Recall@8 or MRR lower,
no answer metric lower on the whole set, and per tag no lower share answered with a correct
citation nor of table citations that hold the row's cells.

A document that fails to ingest (the scans, until OCR lands) is reported missing and each of its
questions is a miss, so the question set stays the same as the parts of issue 14 land and each
of them shows up as a gain here. The goals (hybrid Recall@8 >= 0.85 on each tag, answered with
a correct citation >= 0.75, every table question's citations holding all the row's cells) are
separate tests. The table-cells goal was missed (7 of 8 at 65ae30e: c024) until the answerer's
sentence weights were chosen across the four dev sets (session 16: 8 of 8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.answer_gate import TOLERANCE, answer_metric_drops
from tests.helpers.corpus import GOLDEN_CAPABILITIES, REPO
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.eval.answers import ANSWER_METRICS, evaluate_answers
from truthbase.eval.golden import CAPABILITY_TAGS, default_corpus_root, load_golden
from truthbase.eval.retrieval import evaluate_retrieval, prepare_corpus
from truthbase.store import SQLiteStore

BASELINE = REPO / "docs" / "evals" / "capabilities-baseline.json"
GATE_K = 8
#: The goals of issue 14 on capabilities-dev.json.
RECALL_GOAL = 0.85
ANSWER_GOAL = 0.75
#: Measured (docs/evals/capabilities-baseline.json, session 13, late weight 1 and the document
#: prior on): answered with a correct citation 0.792 (19 of 24): the answer goal holds;
#: table citations holding the row 5 of 8.
pytestmark = pytest.mark.slow


def evaluate(store: Any, embedder: Embedder) -> dict[str, Any]:
    """The two reports the baseline holds, with the default settings."""
    settings = Settings()
    golden = load_golden(GOLDEN_CAPABILITIES)
    prepared = prepare_corpus(
        golden, default_corpus_root(GOLDEN_CAPABILITIES), store, embedder, settings.chunking
    )
    return {
        "retrieval": evaluate_retrieval(golden, prepared, store, embedder, settings.retrieval),
        "answers": evaluate_answers(golden, prepared, store, embedder, settings.retrieval),
    }


@pytest.fixture(scope="module")
def report(capabilities_db: Path, embedder: Embedder) -> dict[str, Any]:
    store = SQLiteStore(capabilities_db)
    try:
        return evaluate(store, embedder)
    finally:
        store.close()


@pytest.fixture(scope="module")
def baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return data


# -- not lower than the baseline ----------------------------------------------------------------


def test_the_same_questions_are_evaluated(report: dict[str, Any], baseline: dict[str, Any]) -> None:
    for part in ("retrieval", "answers"):
        then = {q["id"] for q in baseline[part]["per_question"]}
        now = {q["id"] for q in report[part]["per_question"]}
        assert then == now, (part, sorted(then ^ now))
    # every answerable question is evaluated: a document that failed to ingest is no reason to
    # skip its questions
    golden = load_golden(GOLDEN_CAPABILITIES)
    assert report["retrieval"]["questions"] == len(golden.answerable)
    assert not report["retrieval"]["skipped"] and not report["answers"]["skipped"]


def test_no_question_found_in_the_baseline_is_lost(
    report: dict[str, Any], baseline: dict[str, Any]
) -> None:
    now = {q["id"]: q["hybrid_rank"] for q in report["retrieval"]["per_question"]}
    lost = [
        (q["id"], q["hybrid_rank"], now.get(q["id"]))
        for q in baseline["retrieval"]["per_question"]
        if q["hybrid_rank"] is not None
        and q["hybrid_rank"] <= GATE_K
        and (now.get(q["id"]) is None or now[q["id"]] > GATE_K)
    ]
    assert not lost, f"questions lost from the top {GATE_K} (id, baseline rank, rank now): {lost}"


def test_no_tag_loses_recall_or_mrr(report: dict[str, Any], baseline: dict[str, Any]) -> None:
    """Hybrid, as the dev.json gate: an arm alone may trade places with the other."""
    drops = []
    for tag in CAPABILITY_TAGS:
        then = baseline["retrieval"]["by_capability"][tag]["hybrid"]
        now = report["retrieval"]["by_capability"][tag]["hybrid"]
        for name in (f"recall@{GATE_K}", "mrr"):
            if now[name] < then[name] - TOLERANCE:
                drops.append(f"{tag} {name}: {then[name]:.3f} -> {now[name]:.3f}")
    assert not drops, "retrieval fell: " + "; ".join(drops)


#: Per tag (a handful of questions each) only what the goals measure is gated; the whole set
#: is gated on every answer metric, as dev.json is.
TAG_METRICS = ("answered_with_correct_citation", "cells_held")


def test_no_answer_metric_drops(report: dict[str, Any], baseline: dict[str, Any]) -> None:
    now, then = report["answers"], baseline["answers"]
    drops = answer_metric_drops(now, then, (*ANSWER_METRICS, "cells_held"), "all")
    for tag in CAPABILITY_TAGS:
        drops += answer_metric_drops(
            now["by_capability"][tag], then["by_capability"][tag], TAG_METRICS, tag
        )
    assert not drops, "answer metrics dropped: " + "; ".join(drops)


def test_every_verified_citation_rechecks(report: dict[str, Any]) -> None:
    # Unanswerable questions answered are gated by the baseline (test_no_answer_metric_drops):
    # since OCR, c007 (the LinnSequencer's list price) is answered with a sentence about it.
    assert report["answers"]["verified_share"] == 1.0


def test_a_document_that_failed_to_ingest_is_missing_and_its_questions_miss(
    report: dict[str, Any],
) -> None:
    retrieval = report["retrieval"]
    missing = set(retrieval.get("missing_documents", {}))
    assert missing == set(report["answers"].get("missing_documents", {}))
    golden = load_golden(GOLDEN_CAPABILITIES)
    on_missing = {q.id for q in golden.answerable if {e.doc for e in q.evidence} & missing}
    for row in retrieval["per_question"]:
        if row["id"] in on_missing:
            assert row["missing_documents"] and row["hybrid_rank"] is None, row
    missed = {m["id"] for m in retrieval["misses"]}
    assert on_missing <= missed
    for record in report["answers"]["per_question"]:
        if record["id"] in on_missing:
            assert record["missing_documents"] and not record["correct"], record["id"]


def test_table_questions_report_whether_citations_hold_the_row(report: dict[str, Any]) -> None:
    golden = load_golden(GOLDEN_CAPABILITIES)
    with_cells = {q.id for q in golden.answerable if any(e.cells for e in q.evidence)}
    records = {r["id"]: r for r in report["answers"]["per_question"]}
    assert with_cells and all("cells_held" in records[i] for i in with_cells)
    table = report["answers"]["by_capability"]["table"]
    assert table["table_questions"] == sum("table" in records[i]["tags"] for i in with_cells)


# -- the goals of issue 14 ----------------------------------------------------------------------


def test_goal_hybrid_recall_at_8_on_each_tag(report: dict[str, Any]) -> None:
    rows = report["retrieval"]["by_capability"]
    short = {
        tag: rows[tag]["hybrid"][f"recall@{GATE_K}"]
        for tag in CAPABILITY_TAGS
        if rows[tag]["hybrid"][f"recall@{GATE_K}"] < RECALL_GOAL
    }
    assert not short, f"hybrid recall@{GATE_K} under {RECALL_GOAL}: {short}"


def test_goal_answered_with_a_correct_citation(report: dict[str, Any]) -> None:
    answers = report["answers"]
    per_tag = {
        tag: round(answers["by_capability"][tag]["answered_with_correct_citation"], 3)
        for tag in CAPABILITY_TAGS
    }
    assert answers["answered_with_correct_citation"] >= ANSWER_GOAL, per_tag


def test_goal_table_citations_hold_all_the_cells(report: dict[str, Any]) -> None:
    records = report["answers"]["per_question"]
    not_held = [r["id"] for r in records if r.get("cells_held") is False]
    assert not not_held, f"table questions whose citations do not hold the row: {not_held}"
