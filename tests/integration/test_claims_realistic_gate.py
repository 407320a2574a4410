"""The realistic claim gate: the support checks on claims-dev.json (hand-written claims about
quotes of the seed PDFs and GeoTopo) must not fall below the stored baseline
(docs/evals/claims-realistic.json), fitted or cross-validated, overall or per kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.corpus import REPO, SHARED
from truthbase.embed import Embedder
from truthbase.eval.claim_set import (
    SUPPORTED_KINDS,
    evaluate_claim_set,
    load_claim_set,
    locate_items,
    store_pages,
)
from truthbase.ingest import ingest_file
from truthbase.store import SQLiteStore

CLAIMS = SHARED / "golden" / "claims-dev.json"
BASELINE = REPO / "docs" / "evals" / "claims-realistic.json"
TOLERANCE = 1e-9

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(seed_db: Path, capabilities_db: Path, embedder: Embedder) -> dict[str, Any]:
    documents, items = load_claim_set(CLAIMS)
    stores = [SQLiteStore(seed_db), SQLiteStore(capabilities_db)]
    try:
        page_text, names = store_pages(stores, documents)
        located, missing = locate_items(items, page_text, names)
        assert not missing, missing
        return evaluate_claim_set(located, embedder)
    finally:
        for store in stores:
            store.close()


def test_the_baseline_checked_the_same_claims(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))

    def claims(r: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted((c["item"], c["claim"]) for c in r["per_claim"])

    assert claims(baseline) == claims(report)


def test_no_share_drops_against_the_baseline(report: dict[str, Any]) -> None:
    baseline = json.loads(BASELINE.read_text("utf-8"))
    drops = [
        f"{name}: {baseline[name]} -> {report[name]}"
        for name in ("kept", "caught")
        if report[name] < baseline[name] - TOLERANCE
    ]
    for kind, row in baseline["by_kind"].items():
        key = "kept" if kind in SUPPORTED_KINDS else "caught"
        if report["by_kind"][kind][key] < row[key] - TOLERANCE:
            drops.append(f"{kind}: {row[key]} -> {report['by_kind'][kind][key]}")
    then, now = baseline["threshold"], report["threshold"]
    for name in ("cv_kept", "cv_caught"):
        if now[name] < then[name] - TOLERANCE:
            drops.append(f"{name}: {then[name]} -> {now[name]}")
    assert not drops, "claim shares dropped: " + "; ".join(drops)


def test_the_checks_beat_the_checker_they_replaced(report: dict[str, Any]) -> None:
    """Before issue 24 the checks kept none of the 92 supported claims (0.0) and caught 0.966
    of the unsupported ones (balanced accuracy 0.483, cross-validated 0.49): the badge said
    nothing about a paraphrase. The second round measured balanced accuracy 0.743 fitted and
    0.740 cross-validated, the third 0.861 and 0.858, kept 0.870 / 0.870 and caught 0.852 /
    0.845; with a number joined to a word named by its stem (session 21) 0.8605 and 0.857, kept
    0.880 / 0.880 and caught 0.841 / 0.834; the fourth round (session 32) 0.8945 and 0.891,
    caught 0.909 / 0.902 (docs/evals/claims-realistic.md); the floors sit a little under."""
    threshold = report["threshold"]
    assert (report["kept"] + report["caught"]) / 2 >= 0.82
    assert (threshold["cv_kept"] + threshold["cv_caught"]) / 2 >= 0.82
    assert report["kept"] >= 0.84 and threshold["cv_kept"] >= 0.84
    assert report["caught"] >= 0.86 and threshold["cv_caught"] >= 0.86


@pytest.mark.xfail(
    strict=True,
    reason="caught 0.898 cross-validated, 0.002 under the goal: the weight of a passage's words "
    "chosen by leaving each of nine claim sets out (session 33) lets one added fact of "
    "claims-dev.json through that the score had caught; the eight sets written blind gain "
    "seven kept and lose two caught with it (docs/evals/claims-realistic.md, round 5)",
)
def test_the_issue_goals_cross_validated(report: dict[str, Any]) -> None:
    """Issue 24, item 6, the deterministic checks: kept >= 0.85 and caught >= 0.90, every kind
    >= 0.75, with cross-validated thresholds. Met in session 32 (kept 0.880, caught 0.902
    cross-validated; relation 0.769 and inference-light 0.765 the lowest kinds); missed by one
    claim since round 5 (kept 0.900, caught 0.898)."""
    threshold = report["threshold"]
    assert threshold["cv_kept"] >= 0.85 and threshold["cv_caught"] >= 0.90
    low = {
        kind: share
        for kind, row in threshold["cv_by_kind"].items()
        for name, share in row.items()
        if name in ("kept", "caught") and share < 0.75
    }
    assert not low, low


# -- the claim sets written blind (sessions 32 to 34) --------------------------------------------

HELD_OUT = REPO / "docs" / "evals" / "claims-heldout-s34-results.json"
HELD_OUT_SETS = (
    "claims-heldout-s32.json",
    "claims-heldout2-s32.json",
    "claims-heldout3-s32.json",
    "claims-heldout4-s32.json",
    "claims-heldout5-s33.json",
    "claims-heldout6-s33.json",
    "claims-heldout7-s33.json",
    "claims-heldout8-s33.json",
    "claims-heldout9-s34.json",
    "claims-heldout10-s34.json",
    "claims-heldout11-s34.json",
    "claims-heldout12-s34.json",
)


@pytest.fixture(scope="module")
def other_documents_db(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """The documents of the blind sets that neither the seed nor the capabilities index holds
    (set 10's three robustness PDFs, the six library manuals of sets 11 and 12: 202 pages),
    ingested once for this module."""
    path = tmp_path_factory.mktemp("blind") / "blind.sqlite"
    wanted: dict[str, Path] = {}
    for name in HELD_OUT_SETS:
        documents, _ = load_claim_set(REPO / "docs" / "evals" / name)
        for relative in documents.values():
            if not relative.startswith("corpus/seed/") and "GeoTopo" not in relative:
                wanted[relative] = SHARED / relative
    store = SQLiteStore(path)
    try:
        for file in wanted.values():
            assert ingest_file(file, store, embedder).doc_id is not None, file
    finally:
        store.close()
    return path


@pytest.mark.parametrize("name", HELD_OUT_SETS)
def test_no_share_drops_on_the_sets_written_blind(
    name: str, seed_db: Path, capabilities_db: Path, other_documents_db: Path, embedder: Embedder
) -> None:
    """Twelve sets of 80 claims on other pages, written by helper sessions that never saw the
    checks (docs/evals/claims-realistic.md, rounds 4 to 6; sets 10 to 12 on documents no other
    set uses): kept and caught may not fall below what round 6 measured. They are far below
    claims-dev.json's (pooled kept 0.701, caught 0.665): the number a new rule has to move
    without losing claims-dev.json's."""
    documents, items = load_claim_set(REPO / "docs" / "evals" / name)
    stores = [SQLiteStore(seed_db), SQLiteStore(capabilities_db), SQLiteStore(other_documents_db)]
    try:
        page_text, names = store_pages(stores, documents)
        located, missing = locate_items(items, page_text, names)
        assert not missing, missing
        report = evaluate_claim_set(located, embedder)
    finally:
        for store in stores:
            store.close()
    stored = json.loads(HELD_OUT.read_text("utf-8"))["sets"][name]["round6"]
    assert report["kept"] >= stored["kept"] - TOLERANCE, (report["kept"], stored["kept"])
    assert report["caught"] >= stored["caught"] - TOLERANCE, (report["caught"], stored["caught"])
