"""Cross-validated calibration of the extractive refusal threshold.

The extractive answerer refuses when the best support it finds is below ``extractive.threshold``.
A threshold fitted on all of dev.json says little about other questions, so this module fits it
the same way on part of the questions and measures it on the rest.

The objective, written down: on the training questions, choose the LOWEST threshold (so the most
answerable questions are answered) under which at most ``allowed_per_fold`` unanswerable
questions per fold of training data would be answered (``support >= threshold``); candidate
thresholds are the training supports themselves plus a 0.01 margin, as the shipped threshold was
set (highest unanswerable support + 0.01). Folds are stratified (answerable and unanswerable
questions dealt round-robin after a seeded shuffle) and repeated over several seeds; the report
sums the held-out counts over every fold of every seed.

Pure: it reads the per-question records of ``eval answers`` (``answerable``, ``support``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

__all__ = ["MARGIN", "choose_threshold", "cross_validate_refusal"]

#: Added to the highest admitted unanswerable support, as the shipped threshold was chosen.
MARGIN = 0.01


def _scored(records: Sequence[dict[str, Any]]) -> list[tuple[bool, float]]:
    return [
        (bool(r["answerable"]), float(r["support"]))
        for r in records
        if isinstance(r.get("support"), int | float) and math.isfinite(float(r["support"]))
    ]


def choose_threshold(train: Sequence[tuple[bool, float]], allowed: int) -> float:
    """The lowest threshold answering at most ``allowed`` of the unanswerable ``train`` items.

    Items are (answerable, support); an item is answered when ``support >= threshold``.
    """
    unanswerable = sorted((s for a, s in train if not a), reverse=True)
    if len(unanswerable) <= allowed:
        return 0.0
    # Refuse every unanswerable item from the (allowed + 1)-th highest support down.
    return round(unanswerable[allowed] + MARGIN, 4)


def _folds(items: Sequence[tuple[bool, float]], k: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    for answerable in (True, False):
        idx = [i for i, (a, _) in enumerate(items) if a == answerable]
        rng.shuffle(idx)
        for j, i in enumerate(idx):
            folds[j % k].append(i)
    return folds


def cross_validate_refusal(
    records: Sequence[dict[str, Any]],
    *,
    folds: int = 4,
    seeds: Sequence[int] = (1, 2, 3, 4, 5),
    allowed_per_fold: int = 1,
    fitted_threshold: float | None = None,
) -> dict[str, Any]:
    """Held-out refusal numbers of :func:`choose_threshold` over ``folds`` x ``seeds`` splits,
    beside the fitted ones of ``fitted_threshold`` on all the records (when given)."""
    items = _scored(records)
    n_answerable = sum(a for a, _ in items)
    n_unanswerable = len(items) - n_answerable
    if folds < 2 or n_unanswerable < folds or n_answerable < folds:
        return {"folds": folds, "skipped": "too few scored questions for the folds"}
    false_refusals = unanswerable_answered = 0
    thresholds: list[float] = []
    for seed in seeds:
        for held in _folds(items, folds, seed):
            held_set = set(held)
            train = [item for i, item in enumerate(items) if i not in held_set]
            threshold = choose_threshold(train, allowed_per_fold * (folds - 1))
            thresholds.append(threshold)
            for i in held:
                answerable, support = items[i]
                answered = support >= threshold
                false_refusals += answerable and not answered
                unanswerable_answered += (not answerable) and answered
    runs = len(seeds)
    report: dict[str, Any] = {
        "objective": (
            "lowest threshold with at most "
            f"{allowed_per_fold} unanswerable answered per training fold (+{MARGIN})"
        ),
        "folds": folds,
        "seeds": list(seeds),
        "answerable": n_answerable,
        "unanswerable": n_unanswerable,
        "cv_false_refusal_rate": round(false_refusals / (runs * n_answerable), 4),
        "cv_unanswerable_answered_rate": round(unanswerable_answered / (runs * n_unanswerable), 4),
        "cv_thresholds": {"min": min(thresholds), "max": max(thresholds)},
    }
    if fitted_threshold is not None:
        fitted_fr = sum(a and s < fitted_threshold for a, s in items)
        fitted_ua = sum((not a) and s >= fitted_threshold for a, s in items)
        report["fitted"] = {
            "threshold": fitted_threshold,
            "false_refusal_rate": round(fitted_fr / n_answerable, 4),
            "unanswerable_answered_rate": round(fitted_ua / n_unanswerable, 4),
        }
    return report
