"""Weighted reciprocal rank fusion: a hand-computed example and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.retrieve.fusion import weighted_rrf


def test_hand_computed_example() -> None:
    # fts: a b c ; dense: c a d ; k = 1, w_fts = 2, w_dense = 1
    # a: 2/(1+1) + 1/(1+2) = 1 + 1/3 = 4/3
    # b: 2/(1+2)           = 2/3
    # c: 2/(1+3) + 1/(1+1) = 1/2 + 1/2 = 1
    # d: 1/(1+3)           = 1/4
    fused = weighted_rrf(
        {"fts": ["a", "b", "c"], "dense": ["c", "a", "d"]}, {"fts": 2, "dense": 1}, 1
    )
    assert [item for item, _, _ in fused] == ["a", "c", "b", "d"]
    scores = {item: score for item, score, _ in fused}
    assert scores == pytest.approx({"a": 4 / 3, "c": 1.0, "b": 2 / 3, "d": 1 / 4})
    ranks = {item: r for item, _, r in fused}
    assert ranks == {
        "a": {"fts": 1, "dense": 2},
        "b": {"fts": 2},
        "c": {"fts": 3, "dense": 1},
        "d": {"dense": 3},
    }


def test_standard_rrf_k60() -> None:
    fused = weighted_rrf({"x": [10, 20], "y": [20]}, {"x": 1.0, "y": 1.0}, 60)
    assert fused[0][0] == 20
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert (fused[1][0], fused[1][2]) == (10, {"x": 1})
    assert fused[1][1] == pytest.approx(1 / 61)


def test_ties_broken_by_best_rank_then_first_appearance() -> None:
    # p: 1/(0+1) = 1 from "a" rank 1; q: 1/(0+2) + 1/(0+2) = 1 from ranks 2 and 2.
    fused = weighted_rrf({"a": ["p", "q"], "b": ["r", "q"]}, {"a": 1, "b": 1}, 0)
    # p, q and r all score 1.0; p and r have best rank 1, q only 2; p appears before r.
    assert [item for item, _, _ in fused] == ["p", "r", "q"]
    assert [score for _, score, _ in fused] == [1.0, 1.0, 1.0]


def test_zero_weight_arm_is_ignored() -> None:
    fused = weighted_rrf({"fts": ["a", "b"], "dense": ["b", "z"]}, {"fts": 1, "dense": 0}, 60)
    assert [(item, ranks) for item, _, ranks in fused] == [("a", {"fts": 1}), ("b", {"fts": 2})]
    assert [score for _, score, _ in fused] == pytest.approx([1 / 61, 1 / 62])


def test_missing_arm_and_extra_weights() -> None:
    # weights may name arms that did not run (a dense arm with no index, say).
    assert weighted_rrf({"fts": ["a"]}, {"fts": 1, "dense": 1}, 60)[0][0] == "a"
    assert weighted_rrf({}, {"fts": 1}, 60) == []
    with pytest.raises(ValueError, match="no fusion weight"):
        weighted_rrf({"fts": ["a"]}, {}, 60)


@pytest.mark.parametrize("k", [-1.0, float("nan"), float("inf")])
def test_bad_k_rejected(k: float) -> None:
    with pytest.raises(ValueError, match="rrf k"):
        weighted_rrf({"a": [1]}, {"a": 1}, k)


@pytest.mark.parametrize("w", [-0.5, float("nan"), float("inf")])
def test_bad_weight_rejected(w: float) -> None:
    with pytest.raises(ValueError, match="weight"):
        weighted_rrf({"a": [1]}, {"a": w}, 60)


def test_duplicate_in_one_arm_keeps_best_rank() -> None:
    fused = weighted_rrf({"a": ["x", "y", "x"]}, {"a": 1}, 0)
    assert fused == [("x", 1.0, {"a": 1}), ("y", 0.5, {"a": 2})]


def test_single_arm_preserves_order() -> None:
    items = [5, 3, 9, 1]
    assert [i for i, _, _ in weighted_rrf({"only": items}, {"only": 0.7}, 60)] == items


def test_generic_over_hashable_items() -> None:
    fused = weighted_rrf({"a": [(1, "x"), (2, "y")]}, {"a": 1}, 60)
    assert fused[0][0] == (1, "x")


arm_lists = st.lists(st.integers(0, 30), unique=True, max_size=15)


@given(
    st.dictionaries(st.sampled_from(["fts", "dense", "other"]), arm_lists, min_size=1),
    st.floats(0.01, 5),
    st.floats(0, 100),
)
def test_item_first_in_every_arm_is_first(
    rankings: dict[str, list[int]], weight: float, k: float
) -> None:
    top = 999
    rankings = {arm: [top, *items] for arm, items in rankings.items()}
    weights = {arm: weight * (i + 1) for i, arm in enumerate(rankings)}
    fused = weighted_rrf(rankings, weights, k)
    assert fused[0][0] == top
    assert fused[0][2] == dict.fromkeys(rankings, 1)


@given(
    st.dictionaries(st.sampled_from(["fts", "dense", "other"]), arm_lists, min_size=1),
    st.dictionaries(st.sampled_from(["fts", "dense", "other"]), st.floats(0, 3)),
    st.floats(0, 100),
)
def test_properties_of_any_fusion(
    rankings: dict[str, list[int]], partial: dict[str, float], k: float
) -> None:
    weights = {arm: partial.get(arm, 1.0) for arm in rankings}
    fused = weighted_rrf(rankings, weights, k)
    live = {arm for arm, w in weights.items() if w > 0}
    expected_items = {item for arm in live for item in rankings[arm]}
    assert {item for item, _, _ in fused} == expected_items
    scores = [score for _, score, _ in fused]
    assert scores == sorted(scores, reverse=True)
    for item, score, ranks in fused:
        assert set(ranks) <= live
        for arm, rank in ranks.items():
            assert rankings[arm][rank - 1] == item
        assert score == pytest.approx(sum(weights[a] / (k + r) for a, r in ranks.items()))
    # Zero-weight arms change nothing.
    without = weighted_rrf({a: r for a, r in rankings.items() if a in live}, weights, k)
    assert without == fused
