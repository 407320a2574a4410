"""Cross-validated refusal calibration (truthbase.eval.refusal): the objective and the held-out
counts on records made up for the purpose."""

from __future__ import annotations

from typing import Any

from truthbase.eval.refusal import MARGIN, choose_threshold, cross_validate_refusal


def test_choose_threshold_answers_at_most_the_allowed_unanswerable() -> None:
    train = [(False, 0.9), (False, 0.5), (False, 0.3), (True, 0.8), (True, 0.4)]
    assert choose_threshold(train, 0) == 0.9 + MARGIN  # refuses every unanswerable one
    assert choose_threshold(train, 1) == 0.5 + MARGIN  # one (0.9) may be answered
    assert choose_threshold(train, 3) == 0.0


def _records(pairs: list[tuple[bool, float]]) -> list[dict[str, Any]]:
    return [{"answerable": a, "support": s} for a, s in pairs]


def test_held_out_numbers_see_what_the_fit_does_not() -> None:
    # Answerable questions score high, unanswerable low, except one unanswerable outlier: fitted
    # on all the questions the threshold refuses it, but a fold that holds it out cannot know it.
    pairs = [(True, 0.6 + i / 100) for i in range(16)] + [(False, 0.1 + i / 100) for i in range(7)]
    pairs.append((False, 0.95))
    report = cross_validate_refusal(
        _records(pairs), folds=4, seeds=(1, 2), allowed_per_fold=0, fitted_threshold=0.96
    )
    assert report["fitted"]["unanswerable_answered_rate"] == 0.0
    assert report["fitted"]["false_refusal_rate"] == 1.0  # 0.96 refuses every answerable one
    assert report["cv_unanswerable_answered_rate"] > 0.0  # the outlier, when held out
    assert report["cv_false_refusal_rate"] < 1.0
    assert report["answerable"] == 16 and report["unanswerable"] == 8


def test_too_few_questions_for_the_folds_is_said() -> None:
    report = cross_validate_refusal(_records([(True, 0.5), (False, 0.1)]), folds=4)
    assert "skipped" in report
