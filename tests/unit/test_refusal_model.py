"""The refusal model of the extractive answerer (answer.refusal_model) and its fit across sets
(eval.refusal): pure functions on numbers made up for the purpose."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from truthbase.answer.refusal_model import (
    FEATURES,
    MAX_AGREEING,
    RefusalFeatures,
    answer_logit,
    answer_probability,
    refusal_features,
)
from truthbase.config import ExtractiveSettings, RefusalModelSettings
from truthbase.eval.refusal import (
    Item,
    cost,
    fit_refusal_model,
    model_answers,
    refusal_across_sets,
)


@dataclass(frozen=True)
class _Cand:
    n: int
    cosine: float  # with BY_COSINE, the sentence's support
    lexical: float
    context: float
    start: int = 0
    end: int = 0


#: A model whose support feature is the sentence's cosine alone.
BY_COSINE = RefusalModelSettings(
    support_cosine=1.0, support_lexical=0.0, support_context=0.0, support_rank=0.0
)


def _features(**values: float) -> RefusalFeatures:
    base = dict.fromkeys(FEATURES, 0.0)
    base.update(values)
    return RefusalFeatures(**base)


def test_the_logit_is_the_intercept_plus_the_weighted_features() -> None:
    zero = RefusalModelSettings(
        intercept=0, w_support=0, w_lexical=0, w_context=0, w_retrieval=0, w_margin=0, w_agreeing=0
    )
    model = zero.model_copy(
        update={"intercept": -1.0, "w_support": 4.0, "w_margin": -2.0, "w_agreeing": 0.5}
    )
    f = _features(support=0.5, margin=0.25, agreeing=2.0, lexical=0.9)
    assert answer_logit(f, model) == pytest.approx(-1.0 + 2.0 - 0.5 + 1.0)
    assert answer_probability(f, model) == pytest.approx(1 / (1 + math.exp(-1.5)))
    assert answer_probability(f, zero) == 0.5
    # Far out on either side the logistic neither overflows nor leaves [0, 1].
    assert answer_probability(_features(support=1.0), RefusalModelSettings(w_support=1000)) == 1.0
    assert answer_probability(_features(support=1.0), RefusalModelSettings(w_support=-1000)) == 0.0


def test_features_of_the_candidates_and_the_sources() -> None:
    cands = [_Cand(2, 0.6, 0.5, 0.4), _Cand(1, 0.55, 0.2, 0.9), _Cand(3, 0.3, 0.1, 0.95)]
    f = refusal_features(cands, [0.8, 0.6, 0.5], 0.8, BY_COSINE)
    assert (f.support, f.lexical) == (0.6, 0.5)  # the best sentence's
    # The best passage's among the sentences an answer can use (within keep_ratio of the best):
    # source 3's passage holds more, but no sentence of it is near the best.
    assert f.context == 0.9
    assert f.retrieval == 0.8 and f.margin == pytest.approx(0.25)
    assert f.agreeing == 2.0  # sources 2 and 1 are within 0.8 of the best; 3 is not
    many = [_Cand(n, 0.5, 0.1, 0.1) for n in range(1, 9)]
    assert refusal_features(many, [1.0], 0.8, BY_COSINE).agreeing == MAX_AGREEING
    # one source: nothing close to it
    assert refusal_features(many, [1.0], 0.8, BY_COSINE).margin == 1.0
    empty = refusal_features([], [], 0.8, BY_COSINE)
    assert empty.values() == (0.0,) * len(FEATURES)


def test_the_support_feature_is_on_the_models_scale_whatever_the_candidates_order() -> None:
    # The answerer orders its candidates by its own weights (extractive.w_*, which choose the
    # cited sentences); the refusal model finds its best sentence by its own support weights,
    # so the decision to answer does not move when the choice of sentences is tuned.
    model = RefusalModelSettings()
    a = _Cand(1, cosine=0.9, lexical=0.1, context=0.2)  # support .35*.9+.15*.1+.3*.2+.2 = .59
    b = _Cand(2, cosine=0.5, lexical=0.9, context=0.9)  # .175+.135+.27+.1 = .68
    for order in ([a, b], [b, a]):
        f = refusal_features(order, [0.7, 0.6], 0.8, model)
        assert f.support == pytest.approx(0.68) and f.lexical == 0.9
        assert f.agreeing == 2.0  # .59 >= .8 * .68
    # On a tie the earlier source is the best one, then the earlier sentence.
    c = _Cand(1, cosine=0.5, lexical=0.7, context=0.9, start=40)
    d = _Cand(1, cosine=0.5, lexical=0.7, context=0.9, start=3)
    e = _Cand(1, cosine=0.5, lexical=0.1, context=0.1, start=0)
    assert refusal_features([c, d, e], [1.0], 0.99, BY_COSINE).lexical == 0.1  # e, at 0


def test_the_default_model_answers_a_strong_answer_and_refuses_a_weak_one() -> None:
    cfg = ExtractiveSettings()
    strong = _features(support=0.75, lexical=0.8, context=0.9, retrieval=1.0, margin=0.3)
    weak = _features(support=0.3, lexical=0.1, context=0.2, retrieval=0.3, margin=0.0)
    strong = RefusalFeatures(**{**strong.as_dict(), "agreeing": 2.0})
    assert answer_probability(strong, cfg.refusal) >= cfg.threshold
    assert answer_probability(weak, cfg.refusal) < cfg.threshold


def _item(set_name: str, answerable: bool, support: float, *, eligible: bool = True) -> Item:
    feats = (support, support / 2, support, 0.5, 0.2, 1.0)
    return Item(set_name, "q", answerable, eligible, feats, answerable)


def test_the_fit_separates_what_is_separable_and_the_cut_follows_the_objective() -> None:
    train = [_item("a", True, 0.6 + i / 100) for i in range(10)]
    train += [_item("a", False, 0.2 + i / 100) for i in range(5)]
    model = fit_refusal_model(train)
    assert set(model) == {"intercept", *(f"w_{n}" for n in FEATURES)}
    answered = [model_answers(i, model) for i in train]
    assert cost(train, answered) == 0
    assert model_answers(_item("b", True, 0.9), model)
    assert not model_answers(_item("b", False, 0.1), model)
    # An item the hard rules refused is never answered, whatever its features.
    assert not model_answers(_item("b", True, 0.9, eligible=False), model)


def test_an_unanswerable_question_answered_costs_two_false_refusals() -> None:
    items = [_item("a", True, 0.5), _item("a", False, 0.5), _item("a", True, 0.5)]
    assert cost(items, [True, True, True]) == 2.0
    assert cost(items, [False, False, False]) == 2.0
    assert cost(items, [True, False, False]) == 1.0


def test_left_out_numbers_come_from_a_model_that_never_saw_the_set() -> None:
    # Set "a" separates at 0.5; set "b"'s unanswerable questions score as high as a's answerable
    # ones. Left out, b is judged by a's model and its unanswerable questions are answered;
    # fitted on both, the model has seen them.
    items = [_item("a", True, 0.6 + i / 50) for i in range(10)]
    items += [_item("a", False, 0.2 + i / 50) for i in range(5)]
    items += [_item("b", True, 0.9 + i / 200) for i in range(6)]
    items += [_item("b", False, 0.62 + i / 200) for i in range(3)]
    report = refusal_across_sets(items, support_threshold=0.5)
    b = report["sets"]["b"]
    assert b["left_out"]["unanswerable_answered"] == 3
    assert b["fitted"]["unanswerable_answered"] < 3
    assert b["before"]["unanswerable_answered"] == 3 and b["before"]["false_refusals"] == 0
    assert "2 x unanswerable answered" in report["objective"]
