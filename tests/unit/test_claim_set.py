"""The realistic claim benchmark's pure parts: reading a claim set, the shares per kind, and the
threshold fitted and cross-validated by item folds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.corpus import SHARED
from truthbase.cite.model import Judgement
from truthbase.errors import InvalidInput
from truthbase.eval.claim_set import (
    cross_validate_min_p,
    cross_validate_threshold,
    evaluate_claim_set,
    fit_min_p,
    fit_threshold,
    judge_says,
    load_claim_set,
    locate_items,
    stratified_subset,
    summarize_claim_set,
)

CLAIMS = SHARED / "golden" / "claims-dev.json"


def record(item: str, kind: str, label: bool, coverage: float, vetoed: bool = False) -> dict:
    return {
        "item": item,
        "kind": kind,
        "label": label,
        "coverage": coverage,
        "score": coverage,
        "vetoed": vetoed,
        "supported": not vetoed and coverage >= 0.5,
    }


def test_the_dev_set_reads() -> None:
    if not CLAIMS.is_file():
        pytest.skip("shared/golden/claims-dev.json is not beside the checkout")
    documents, items = load_claim_set(CLAIMS)
    assert "raptor" in documents
    assert sum(len(i.claims) for i in items) == 180


def test_a_claim_set_of_another_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"version": 2, "documents": {}, "items": []}))
    with pytest.raises(InvalidInput):
        load_claim_set(path)


def test_items_whose_quote_is_not_on_the_page_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    item = {"id": "x1", "doc": "d", "page": 1, "quote": "the quote is here", "claims": []}
    path.write_text(
        json.dumps({"version": 1, "documents": {"d": {"path": "d.pdf"}}, "items": [item]})
    )
    _, items = load_claim_set(path)
    located, missing = locate_items(items, lambda doc, page: "Elsewhere. The quote is here. Then.")
    assert [e.item.id for e in located] == ["x1"] and not missing
    assert located[0].context.startswith("Elsewhere.")
    _, missing = locate_items(items, lambda doc, page: "Nothing of it.")
    assert missing == ["x1"]


def test_shares_per_kind() -> None:
    rows = [
        record("a", "paraphrase", True, 0.9),
        record("a", "paraphrase", True, 0.1),
        record("a", "number", False, 0.9, vetoed=True),
        record("b", "scope", False, 0.9),
    ]
    summary = summarize_claim_set(rows)
    assert summary["kept"] == 0.5 and summary["caught"] == 0.5
    assert summary["by_kind"]["number"] == {"n": 1, "caught": 1.0}
    assert summary["by_kind"]["relation"]["n"] == 0


def test_the_threshold_is_fitted_between_the_scores_and_cross_validated() -> None:
    rows = [record(f"i{k}", "paraphrase", True, 0.8) for k in range(10)]
    rows += [record(f"i{k}", "added-fact", False, 0.2) for k in range(10)]
    threshold = fit_threshold(rows)
    assert 0.2 < threshold < 0.8
    cv = cross_validate_threshold(rows, folds=5, seeds=(0, 1))
    assert cv["cv_kept"] == 1.0 and cv["cv_caught"] == 1.0
    assert cv["folds"] == 5 and cv["seeds"] == [0, 1]


def judged(item: str, label: bool, p: float | None, wrote: bool, asked: bool = True) -> dict:
    row = record(item, "paraphrase" if label else "relation", label, 0.6)
    if asked:
        row["judge"] = {"entailed": wrote, "p_entailed": p, "failure": None}
    return row


def test_the_judges_probability_threshold_is_fitted_and_cross_validated() -> None:
    # The model writes "false" for every claim, but gives "true" 0.35-0.45 on the supported
    # ones and 0.1-0.2 on the others: its written word keeps none, its probability separates.
    rows = [judged(f"g{k}", True, 0.35 + k / 100, wrote=False) for k in range(10)]
    rows += [judged(f"b{k}", False, 0.1 + k / 100, wrote=False) for k in range(10)]
    assert not any(judge_says(r, 0.5) for r in rows)
    assert 0.19 < fit_min_p(rows) < 0.35
    cv = cross_validate_min_p(rows, folds=5, seeds=(0, 1))
    assert cv is not None and cv["cv_kept"] == 1.0 and cv["cv_caught"] == 1.0
    # Not asked (a veto, a verbatim claim): the check's verdict; no probability: the word.
    assert judge_says(judged("v", True, None, wrote=False, asked=False), 0.0)
    assert judge_says(judged("w", True, None, wrote=True), 0.99)
    without_p = [judged(f"n{k}", True, None, wrote=True) for k in range(3)]
    assert cross_validate_min_p(without_p) is None


class _NotEntailed:
    """A judge that finds nothing entailed and counts its calls."""

    name = "never"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, claim: str, quote: str, context: str) -> Judgement:
        self.calls += 1
        return Judgement(entailed=False, departing_words=("week",), judge=self.name)


def test_with_a_judge_each_claim_is_reported_with_and_without_it(tmp_path: Path) -> None:
    quote = "The plant produces forty two units every day."
    claims = [
        {
            "claim": "The plant produces forty two units every week.",
            "supported": False,
            "kind": "number",
        },
        {
            "claim": "The factory makes forty two items daily.",
            "supported": True,
            "kind": "paraphrase",
        },
        {
            "claim": "The plant produces ninety nine units every day.",
            "supported": False,
            "kind": "number",
        },
    ]
    item = {"id": "x1", "doc": "d", "page": 1, "quote": quote, "claims": claims}
    path = tmp_path / "claims.json"
    path.write_text(
        json.dumps({"version": 1, "documents": {"d": {"path": "d.pdf"}}, "items": [item]})
    )
    _, items = load_claim_set(path)
    located, _ = locate_items(items, lambda doc, page: quote)
    assert stratified_subset(located, 1) == {("x1", 0), ("x1", 1)}
    judge = _NotEntailed()
    report = evaluate_claim_set(located, None, judge=judge)
    assert judge.calls == 2  # the vetoed claim (ninety nine) is not judged
    assert report["judge"]["without_judge"]["kept"] == 1.0
    assert report["judge"]["without_judge"]["caught"] == 0.5
    assert report["kept"] == 0.0 and report["caught"] == 1.0
    assert report["judge"]["asked"] == 2 and report["judge"]["failed"] == 0
    weekly = report["per_claim"][0]
    assert weekly["supported_without_judge"] and not weekly["supported"]
    assert weekly["judge"]["departing_words"] == ["week"]
    subset = evaluate_claim_set(located, None, per_kind=1)
    assert len(subset["per_claim"]) == 2 and "judge" not in subset
