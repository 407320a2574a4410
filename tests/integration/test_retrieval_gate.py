"""The CI retrieval gate: no drop against docs/evals/retrieval-baseline.json on golden/dev.json.

The baseline is the `truthbase eval retrieval --json` report of the default settings, and changes
only in a commit that says why. A question the baseline found within the top 8 (hybrid) must still
be found there, and the hybrid MRR must not fall.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_DEV, REPO
from truthbase.config import ChunkingSettings, RetrievalSettings
from truthbase.embed import Embedder
from truthbase.eval.golden import default_corpus_root, load_golden
from truthbase.eval.retrieval import evaluate_retrieval, prepare_corpus
from truthbase.store import SQLiteStore

BASELINE = REPO / "docs" / "evals" / "retrieval-baseline.json"
GATE_K = 8
MRR_SLACK = 1e-9

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    golden = load_golden(GOLDEN_DEV)
    store = SQLiteStore(golden_db)
    try:
        prepared = prepare_corpus(
            golden, default_corpus_root(GOLDEN_DEV), store, embedder, ChunkingSettings()
        )
        return evaluate_retrieval(golden, prepared, store, embedder, RetrievalSettings())
    finally:
        store.close()


@pytest.fixture(scope="module")
def baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return data


def test_no_question_found_in_the_baseline_is_lost(
    report: dict[str, Any], baseline: dict[str, Any]
) -> None:
    now = {q["id"]: q["hybrid_rank"] for q in report["per_question"]}
    lost = [
        (q["id"], q["hybrid_rank"], now.get(q["id"]))
        for q in baseline["per_question"]
        if q["hybrid_rank"] is not None
        and q["hybrid_rank"] <= GATE_K
        and (now.get(q["id"]) is None or now[q["id"]] > GATE_K)
    ]
    assert not lost, f"questions lost from the top {GATE_K} (id, baseline rank, rank now): {lost}"


def test_hybrid_mrr_does_not_drop(report: dict[str, Any], baseline: dict[str, Any]) -> None:
    before = baseline["modes"]["hybrid"]["mrr"]
    after = report["modes"]["hybrid"]["mrr"]
    assert after >= before - MRR_SLACK, f"hybrid MRR fell from {before:.4f} to {after:.4f}"


def test_the_same_questions_are_evaluated(report: dict[str, Any], baseline: dict[str, Any]) -> None:
    assert report["questions"] == baseline["questions"]


def test_hybrid_beats_each_arm_alone_at_recall_8(report: dict[str, Any]) -> None:
    modes = report["modes"]
    assert modes["hybrid"]["recall@8"] > modes["fts"]["recall@8"]
    assert modes["hybrid"]["recall@8"] > modes["dense"]["recall@8"]
