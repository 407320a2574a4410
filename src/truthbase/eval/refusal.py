"""Cross-validated calibration of the extractive refusal: the refusal model, and one threshold.

The refusal model (:mod:`truthbase.answer.refusal_model`) is fitted across dev sets by
:func:`refusal_across_sets` (``truthbase eval refusal``), from each question's features in a run
that answers every question the hard rules let through (``extractive.threshold`` 0). The
objective, written down: minimise false refusals + :data:`UNANSWERABLE_COST` (2) x unanswerable
answered on the training questions. The fit: an L2-penalised logistic regression (on
standardized features; the penalty chosen from :data:`L2_GRID` by the pooled left-out
objective) of answerable against unanswerable, the unanswerable weighed 2, whose intercept is
then moved to the cut with the lowest objective (the middle one of equal cost).
Each set is measured with the model fitted on the other sets (left out) beside the model fitted
on all of them (fitted: the defaults), and beside the one support threshold (before).

The older calibration of one support threshold (:func:`cross_validate_refusal`, the
``refusal_cv`` of ``eval answers``) stays for comparison. Its objective: on the training
questions, choose the LOWEST threshold (so the most answerable questions are answered) under
which at most ``allowed_per_fold`` unanswerable questions per fold of training data would be
answered (``support >= threshold``); candidate thresholds are the training supports plus a 0.01
margin. Folds are stratified (answerable and unanswerable questions dealt round-robin after a
seeded shuffle) and repeated over several seeds; the report sums the held-out counts over every
fold of every seed.

Pure: it reads the per-question records of ``eval answers`` (``answerable``, ``support``,
``refusal_features``, ``refused``, ``correct``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from ..answer.refusal_model import FEATURES

__all__ = [
    "MARGIN",
    "UNANSWERABLE_COST",
    "Item",
    "choose_threshold",
    "cross_validate_refusal",
    "fit_refusal_model",
    "items_of",
    "model_answers",
    "refusal_across_sets",
]

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


# The refusal model (truthbase.answer.refusal_model), fitted across dev sets.

#: The cost of answering an unanswerable question, in false refusals: the written objective is
#: ``false refusals + UNANSWERED_COST * unanswerable answered`` on the training questions.
UNANSWERABLE_COST = 2.0
#: The L2 penalties of the logistic fit (on standardized features; the intercept is free) that
#: :func:`refusal_across_sets` chooses from by the pooled left-out objective.
L2_GRID = (0.1, 1.0, 10.0, 30.0, 100.0)


@dataclass(frozen=True, slots=True)
class Item:
    """One question of an open run (every question answered that the hard rules let through):
    its set, whether it is answerable, whether the model may decide it (``eligible``: it had a
    sentence and no missing named term), its features, and whether its answer cites the
    golden evidence (``correct``)."""

    set_name: str
    id: str
    answerable: bool
    eligible: bool
    features: tuple[float, ...]
    correct: bool


def items_of(set_name: str, records: Sequence[dict[str, Any]]) -> list[Item]:
    """The :class:`Item` of each per-question record of an open ``eval answers`` run."""
    out = []
    for r in records:
        feats = r.get("refusal_features") or {}
        out.append(
            Item(
                set_name=set_name,
                id=str(r["id"]),
                answerable=bool(r["answerable"]),
                eligible=not r["refused"] and bool(feats),
                features=tuple(float(feats.get(name, 0.0)) for name in FEATURES),
                correct=bool(r["answerable"] and not r["refused"] and r["correct"]),
            )
        )
    return out


def _logistic(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64], l2: float
) -> tuple[float, npt.NDArray[np.float64]]:
    """Weighted L2-penalised logistic regression by Newton's method: (intercept, coefficients)
    on the features as given (the fit itself runs on standardized ones)."""
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    beta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        grad = z.T @ (w * (p - y)) + penalty * beta
        hess = (z.T * (w * p * (1 - p))) @ z + np.diag(penalty) + 1e-9 * np.eye(z.shape[1])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    coefs = beta[1:] / std
    return float(beta[0] - coefs @ mean), coefs


def cost(items: Sequence[Item], answered: Sequence[bool]) -> float:
    """The objective: false refusals + :data:`UNANSWERABLE_COST` x unanswerable answered."""
    fr = sum(i.answerable and not a for i, a in zip(items, answered, strict=True))
    ua = sum((not i.answerable) and a for i, a in zip(items, answered, strict=True))
    return fr + UNANSWERABLE_COST * ua


def fit_refusal_model(train: Sequence[Item], l2: float = 1.0) -> dict[str, float]:
    """The coefficients (``intercept``, ``w_<feature>``) fitted on ``train``'s eligible items:
    a logistic regression of answerable against unanswerable (the unanswerable weighed
    :data:`UNANSWERABLE_COST`), then its intercept moved so that logit 0 is the cut with the
    lowest :func:`cost` on ``train`` (the middle one of equal-cost cuts)."""
    fit = [i for i in train if i.eligible]
    names = ["intercept", *(f"w_{n}" for n in FEATURES)]
    if not fit or all(i.answerable for i in fit) or not any(i.answerable for i in fit):
        return dict.fromkeys(names, 0.0)
    x = np.array([i.features for i in fit], dtype=np.float64)
    y = np.array([1.0 if i.answerable else 0.0 for i in fit])
    w = np.where(y > 0, 1.0, UNANSWERABLE_COST)
    intercept, coefs = _logistic(x, y, w, l2)
    logits = sorted(set((x @ coefs + intercept).tolist()))
    cuts = [logits[0] - 1.0] + [(a + b) / 2 for a, b in pairwise(logits)] + [logits[-1] + 1.0]
    scored = [
        (cost(train, [i.eligible and _logit(i, intercept, coefs) >= c for i in train]), c)
        for c in cuts
    ]
    best = min(s for s, _ in scored)
    ties = [c for s, c in scored if s == best]
    cut = ties[len(ties) // 2]
    return dict(zip(names, [intercept - cut, *coefs.tolist()], strict=True))


def _logit(item: Item, intercept: float, coefs: npt.NDArray[np.float64]) -> float:
    return float(np.dot(coefs, item.features) + intercept)


def model_answers(item: Item, model: dict[str, float]) -> bool:
    """Whether the model answers ``item`` (at ``extractive.threshold`` 0.5: logit >= 0)."""
    logit = model["intercept"] + sum(
        model[f"w_{n}"] * v for n, v in zip(FEATURES, item.features, strict=True)
    )
    return item.eligible and logit >= 0


def outcome_counts(items: Sequence[Item], answered: Sequence[bool]) -> dict[str, Any]:
    """False refusals, unanswerable answered and answered with a correct citation."""
    pairs = list(zip(items, answered, strict=True))
    answerable = sum(i.answerable for i in items)
    correct = sum(i.correct and a for i, a in pairs)
    return {
        "answerable": answerable,
        "unanswerable": len(items) - answerable,
        "false_refusals": sum(i.answerable and not a for i, a in pairs),
        "unanswerable_answered": sum((not i.answerable) and a for i, a in pairs),
        "answered_with_correct_citation": round(correct / answerable, 4) if answerable else 0.0,
        "cost": cost(items, answered),
    }


def support_only(items: Sequence[Item]) -> list[Item]:
    """``items`` with every feature but the support zeroed: the one-threshold rule, fitted by
    the same objective (its weight on the support and its intercept make one threshold)."""
    return [
        Item(i.set_name, i.id, i.answerable, i.eligible, (i.features[0],) + (0.0,) * 5, i.correct)
        for i in items
    ]


def _left_out(items: Sequence[Item], l2: float) -> dict[str, dict[str, float]]:
    """Per set, the model fitted on the other sets."""
    names = sorted({i.set_name for i in items})
    return {n: fit_refusal_model([i for i in items if i.set_name != n], l2) for n in names}


def _left_out_cost(items: Sequence[Item], l2: float) -> float:
    models = _left_out(items, l2)
    return cost(items, [model_answers(i, models[i.set_name]) for i in items])


def refusal_across_sets(
    items: Sequence[Item], support_threshold: float, l2_grid: Sequence[float] = L2_GRID
) -> dict[str, Any]:
    """Per set, the refusal numbers of the support threshold (before: as shipped, and fitted
    by the same objective on the other sets), of the model fitted on the other sets (left out)
    and on all of them (fitted); the L2 penalty is the one of ``l2_grid`` with the lowest
    pooled left-out objective (ties: the larger)."""
    by_l2 = {l2: _left_out_cost(items, l2) for l2 in l2_grid}
    l2 = min(sorted(l2_grid, reverse=True), key=lambda v: by_l2[v])
    fitted = fit_refusal_model(items, l2)
    left = _left_out(items, l2)
    plain = support_only(items)
    plain_left = _left_out(plain, l2)
    sets: dict[str, Any] = {}
    for name in sorted(left):
        mine = [i for i in items if i.set_name == name]
        mine_plain = [i for i in plain if i.set_name == name]
        sets[name] = {
            "before": outcome_counts(
                mine, [i.eligible and i.features[0] >= support_threshold for i in mine]
            ),
            "before_left_out": outcome_counts(
                mine, [model_answers(i, plain_left[name]) for i in mine_plain]
            ),
            "left_out": outcome_counts(mine, [model_answers(i, left[name]) for i in mine]),
            "fitted": outcome_counts(mine, [model_answers(i, fitted) for i in mine]),
            "left_out_model": {k: round(v, 4) for k, v in left[name].items()},
        }
    return {
        "objective": f"minimise false refusals + {UNANSWERABLE_COST:g} x unanswerable answered",
        "features": list(FEATURES),
        "l2": l2,
        "left_out_cost_by_l2": {str(k): v for k, v in by_l2.items()},
        "support_threshold_before": support_threshold,
        "fitted_model": {k: round(v, 4) for k, v in fitted.items()},
        "sets": sets,
    }
