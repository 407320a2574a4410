"""The weak outcome (answer.policy): a refusal whose best support is near the threshold shows
the closest passages instead of claiming anything; it still counts as refused."""

from __future__ import annotations

from truthbase.answer.policy import answer_outcome, extractive_outcome
from truthbase.config import ExtractiveSettings


def test_the_band_between_weak_threshold_and_threshold_is_weak() -> None:
    cfg = ExtractiveSettings()
    assert cfg.weak_threshold < cfg.threshold
    assert extractive_outcome(True, (), cfg.threshold, cfg.threshold, cfg.weak_threshold) == (
        "answered"
    )
    middle = (cfg.threshold + cfg.weak_threshold) / 2
    assert extractive_outcome(True, (), middle, cfg.threshold, cfg.weak_threshold) == "weak"
    low = cfg.weak_threshold - 0.01
    assert extractive_outcome(True, (), low, cfg.threshold, cfg.weak_threshold) == "refused"


def test_a_missing_named_term_or_no_candidate_is_a_plain_refusal() -> None:
    assert extractive_outcome(True, ("CISA",), 0.45, 0.479, 0.4) == "refused"
    assert extractive_outcome(False, (), 0.45, 0.479, 0.4) == "refused"


def test_the_settled_outcome_follows_refused_and_the_answerer() -> None:
    assert answer_outcome(False, {"outcome": "weak"}) == "answered"
    assert answer_outcome(True, {"outcome": "weak"}) == "weak"
    assert answer_outcome(True, {}) == "refused"
