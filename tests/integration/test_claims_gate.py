"""The claim gate: the support checks on dev.json's perturbed claims must not fall below the
stored baseline, and must keep >= 95% of faithful claims while catching >= 95% of perturbed
ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import GOLDEN_DEV, REPO, SHARED
from truthbase.config import Settings
from truthbase.embed import Embedder
from truthbase.eval.claims import CLAIM_METRICS, PERTURBATION_KINDS, evaluate_claims
from truthbase.eval.golden import load_golden
from truthbase.eval.retrieval import prepare_corpus
from truthbase.store import SQLiteStore

BASELINE = REPO / "docs" / "evals" / "claims-baseline.json"
GOAL = 0.95
TOLERANCE = 1e-9

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(golden_db: Path, embedder: Embedder) -> dict[str, Any]:
    golden = load_golden(GOLDEN_DEV)
    store = SQLiteStore(golden_db)
    try:
        prepared = prepare_corpus(golden, SHARED, store, embedder, Settings().chunking)
        return evaluate_claims(golden, prepared, store, embedder)
    finally:
        store.close()


def test_the_baseline_checked_the_same_claims(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))

    def claims(r: dict[str, Any]) -> set[tuple[str, int, str]]:
        return {(c["id"], c["evidence"], c["kind"]) for c in r["per_claim"]}

    then, now = claims(baseline), claims(report)
    assert then == now, (sorted(then - now)[:10], sorted(now - then)[:10])
    assert not report["quotes_not_found"] and not report["skipped"]


def test_no_share_drops_against_the_baseline(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))
    drops = [
        f"{name}: {baseline[name]} -> {report[name]}"
        for name in CLAIM_METRICS
        if report[name] < baseline[name] - TOLERANCE
    ]
    for kind in PERTURBATION_KINDS:
        then, now = baseline["by_kind"][kind]["caught"], report["by_kind"][kind]["caught"]
        if now < then - TOLERANCE:
            drops.append(f"{kind} caught: {then} -> {now}")
    assert not drops, "claim shares dropped: " + "; ".join(drops)


def test_the_goals_hold(report: dict[str, Any]) -> None:
    missed = [c for c in report["per_claim"] if not c["faithful"] and c["supported"]]
    lost = [c for c in report["per_claim"] if c["faithful"] and not c["supported"]]
    assert report["perturbations_caught"] >= GOAL, missed
    assert report["faithful_supported"] >= GOAL, lost
    for kind in PERTURBATION_KINDS:
        assert report["by_kind"][kind]["n"] > 0, kind
