"""The weak outcome (answer.policy): a refusal of the refusal model whose best support is still
at least ``weak_threshold`` shows the closest passages instead of claiming anything; it still
counts as refused."""

from __future__ import annotations

from truthbase.answer.policy import answer_outcome, extractive_outcome
from truthbase.answer.refusal_model import RefusalFeatures
from truthbase.config import ExtractiveSettings, RefusalModelSettings

# A model that answers exactly when the support is at least 0.5 (logit 20 * (support - 0.5)).
_BY_SUPPORT = RefusalModelSettings(intercept=-10.0, w_support=20.0)
_CFG = ExtractiveSettings(refusal=_BY_SUPPORT, threshold=0.5, weak_threshold=0.4)


def _features(support: float) -> RefusalFeatures:
    return RefusalFeatures(
        support=support, lexical=0.5, context=0.5, retrieval=0.5, margin=0.5, agreeing=1.0
    )


def test_a_refusal_of_the_model_above_weak_threshold_is_weak() -> None:
    assert extractive_outcome(True, (), _features(0.55), _CFG) == "answered"
    assert extractive_outcome(True, (), _features(0.45), _CFG) == "weak"
    assert extractive_outcome(True, (), _features(0.39), _CFG) == "refused"


def test_a_missing_named_term_or_no_candidate_is_a_plain_refusal() -> None:
    assert extractive_outcome(True, ("CISA",), _features(0.9), _CFG) == "refused"
    assert extractive_outcome(False, (), _features(0.9), _CFG) == "refused"


def test_the_settled_outcome_follows_refused_and_the_answerer() -> None:
    assert answer_outcome(False, {"outcome": "weak"}) == "answered"
    assert answer_outcome(True, {"outcome": "weak"}) == "weak"
    assert answer_outcome(True, {}) == "refused"
