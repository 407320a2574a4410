"""The blind seed set's answer gate: golden-blind-seed-s36.json, written by a session that saw
neither the code nor dev.json's questions (docs/evals/blind-sets.md), must not fall below its
stored baseline either. dev.json's gate guards what was tuned on; this one guards questions of
the same documents that were not, on the same index (the seed PDFs and the two books)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.answer_gate import answer_metric_drops, answer_report
from tests.helpers.corpus import REPO
from truthbase.embed import Embedder

GOLDEN_BLIND = REPO / "docs" / "evals" / "golden-blind-seed-s36.json"
BASELINE = REPO / "docs" / "evals" / "answers-blind-seed-baseline.json"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    return answer_report(GOLDEN_BLIND, golden_db, embedder)


def test_the_baseline_asked_the_same_questions(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))
    then = {r["id"] for r in baseline["per_question"]}
    now = {r["id"] for r in report["per_question"]}
    assert then == now and not report["skipped"], (sorted(then ^ now), report["skipped"])


def test_no_metric_drops_against_the_blind_baseline(report: dict[str, Any]) -> None:
    drops = answer_metric_drops(report, json.loads(BASELINE.read_text("utf-8")))
    assert not drops, "answer metrics dropped on the blind seed set: " + "; ".join(drops)


def test_every_blind_quote_is_located_for_scoring(report: dict[str, Any]) -> None:
    """A quote the set's writer copied from the page must be found where the index keeps the
    page (a table question's cells in its row), or every citation of it would count wrong."""
    lost = {r["id"]: r.get("golden_quotes_not_found") for r in report["per_question"]}
    assert not {k: v for k, v in lost.items() if v}, lost
