"""The blind seed set's answer gate: golden-blind-seed-s36.json, written by a session that saw
neither the code nor dev.json's questions (docs/evals/blind-sets.md), must not fall below its
stored baseline either. dev.json's gate guards what was tuned on; this one guards questions of
the same documents that were not, on the same index (the seed PDFs and the two books)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import REPO, SHARED
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.eval.answers import ANSWER_METRICS, evaluate_answers
from truthbase.eval.golden import load_golden
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore

GOLDEN_BLIND = REPO / "docs" / "evals" / "golden-blind-seed-s36.json"
BASELINE = REPO / "docs" / "evals" / "answers-blind-seed-baseline.json"
TOLERANCE = 1e-9

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    settings = Settings()
    golden = load_golden(GOLDEN_BLIND)
    store = SQLiteStore(golden_db)
    try:
        prepared = prepare_corpus(golden, SHARED, store, embedder, settings.chunking)
        return evaluate_answers(golden, prepared, store, embedder, settings.retrieval)
    finally:
        store.close()


def test_the_baseline_asked_the_same_questions(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))
    then = {r["id"] for r in baseline["per_question"]}
    now = {r["id"] for r in report["per_question"]}
    assert then == now and not report["skipped"], (sorted(then ^ now), report["skipped"])


def test_no_metric_drops_against_the_blind_baseline(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))
    drops = []
    for name in ANSWER_METRICS:
        now, then = report[name], baseline[name]
        worse = now > then if name == "false_refusals" else now < then - TOLERANCE
        if worse:
            drops.append(f"{name}: {then} -> {now}")
    assert not drops, "answer metrics dropped on the blind seed set: " + "; ".join(drops)


def test_every_blind_quote_is_located_for_scoring(report: dict[str, Any]) -> None:
    """A quote the set's writer copied from the page must be found where the index keeps the
    page (a table question's cells in its row), or every citation of it would count wrong."""
    lost = {r["id"]: r.get("golden_quotes_not_found") for r in report["per_question"]}
    assert not {k: v for k, v in lost.items() if v}, lost
