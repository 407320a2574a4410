"""The answer gate: the extractive run on dev.json must not fall below the stored baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.answer_gate import answer_metric_drops, answer_report
from tests.helpers.corpus import GOLDEN_DEV, REPO
from truthbase.embed import Embedder

BASELINE = REPO / "docs" / "evals" / "answers-baseline.json"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    return answer_report(GOLDEN_DEV, golden_db, embedder)


def _asked(report: dict[str, Any]) -> set[str]:
    return {record["id"] for record in report["per_question"]}


def test_the_baseline_asked_the_same_questions(report: dict[str, Any]) -> None:
    """Like with like: a baseline taken on another question set (say, before the EPUB books
    were indexed) is no baseline; regenerate it on the golden_db corpus."""
    baseline = json.loads(BASELINE.read_text("utf-8"))
    then, now = _asked(baseline), _asked(report)
    assert then == now, (
        f"baseline questions differ: only in baseline {sorted(then - now)}, "
        f"only now {sorted(now - then)}"
    )
    assert baseline["questions"] == report["questions"]
    assert {s["id"] for s in baseline["skipped"]} == {s["id"] for s in report["skipped"]}


def test_no_metric_drops_against_the_baseline(report: dict[str, Any]) -> None:
    drops = answer_metric_drops(report, json.loads(BASELINE.read_text("utf-8")))
    assert not drops, "answer metrics dropped: " + "; ".join(drops)


#: The unanswerable questions of dev.json answered, as measured: d067 and d068 (a name no page
#: gives, supports 0.53-0.54) since session 12; d053 and d059 (a key length and GPU hours,
#: 0.43 and 0.47) since session 39's threshold (0.419, chosen on nine sets under `eval
#: refusal`'s objective, false refusals + 2 x unanswerable answered: docs/evals/refusal-slots.md;
#: the issue 13 objective of at most one, fitted on dev.json alone, gave way to it).
MAX_UNANSWERABLE_ANSWERED = 4


def test_at_most_the_measured_unanswerable_questions_are_answered(report: dict[str, Any]) -> None:
    answered = [
        (r["id"], r["support"])
        for r in report["per_question"]
        if not r["answerable"] and not r["refused"]
    ]
    assert len(answered) <= MAX_UNANSWERABLE_ANSWERED, answered


def test_every_verified_citation_rechecks(report: dict[str, Any]) -> None:
    assert report["verified_share"] == 1.0
    for record in report["per_question"]:
        for citation in record["citations"]:
            if citation["verified"]:
                assert citation["rechecked"], (record["id"], citation)


def test_questions_on_unindexed_documents_are_skipped_not_failed(report: dict[str, Any]) -> None:
    skipped = {item["id"] for item in report["skipped"]}
    asked = {record["id"] for record in report["per_question"]}
    assert not skipped & asked
    assert report["questions"] == len(asked)


def test_every_golden_quote_is_located_for_scoring(report: dict[str, Any]) -> None:
    """A golden quote that cannot be located would make every citation of its question count as
    wrong (EPUB evidence names a spine href, PDF evidence a page)."""
    lost = {r["id"]: r.get("golden_quotes_not_found") for r in report["per_question"]}
    assert not {k: v for k, v in lost.items() if v}, lost
    kinds = {r["kind"] for r in report["per_question"] if r["answerable"]}
    assert kinds == set(report["by_kind"]) and {"pdf", "epub"} <= kinds
