"""The document prior (retrieve/documents.py): document scores over the candidate lists, the
prior list in fusion (fusion.add_prior), and its place in hybrid fusion."""

from __future__ import annotations

import pytest

from truthbase.config import RetrievalSettings
from truthbase.errors import InvalidInput
from truthbase.retrieve.documents import DOCUMENT_ARM, document_ranks, document_scores
from truthbase.retrieve.fusion import add_prior, weighted_rrf
from truthbase.retrieve.hybrid import ArmRankings, fuse


def test_hand_computed_document_scores() -> None:
    rankings = {"fts": [1, 2, 3, 4], "dense": [3, 1]}
    owners = {1: "a", 2: "b", 3: "b", 4: "b"}
    got = document_scores(rankings, {"fts": 1.0, "dense": 0.5}, owners, depth=2, k=10)
    assert got == pytest.approx(
        {
            "a": 1 / 11 + 0.5 / 12,
            # chunk 4 (rank 4) is b's third in fts: past the depth of 2
            "b": 1 / 12 + 1 / 13 + 0.5 / 11,
        }
    )


def test_unweighted_lists_and_unknown_chunks_count_for_nothing() -> None:
    rankings = {"fts": [1, 9], "late": [2]}
    got = document_scores(rankings, {"fts": 1.0, "late": 0.0}, {1: "a", 2: "b"}, k=0)
    assert got == {"a": 1.0}  # 9 has no document; late weighs 0; "prf" has no weight at all
    assert document_scores({"prf": [1]}, {}, {1: "a"}) == {}


def test_document_ranks_by_score_then_id() -> None:
    assert document_ranks({"b": 1.0, "a": 1.0, "c": 2.0}) == {"c": 1, "a": 2, "b": 3}
    assert document_ranks({}) == {}


def test_add_prior_hand_computed() -> None:
    fused = weighted_rrf({"fts": ["x", "y", "z"]}, {"fts": 1.0}, k=1)  # 1/2, 1/3, 1/4
    got = add_prior(fused, {"y": 1, "z": 1, "x": 2}, "doc", weight=2.0, k=1)
    assert [item for item, _, _ in got] == ["y", "z", "x"]
    scores = {item: score for item, score, _ in got}
    assert scores == pytest.approx({"y": 1 / 3 + 1, "z": 1 / 4 + 1, "x": 1 / 2 + 2 / 3})
    assert got[0][2] == {"fts": 2, "doc": 1}
    # the input is not changed, and a weight of 0 gives it back as it was
    assert fused[1][2] == {"fts": 2}
    assert add_prior(fused, {"z": 1}, "doc", weight=0.0, k=1) == fused


def test_add_prior_adds_no_item_and_keeps_ties_in_order() -> None:
    fused = [("a", 1.0, {"fts": 1}), ("b", 1.0, {"dense": 1})]
    got = add_prior(fused, {"zzz": 1}, "doc", weight=1.0, k=1)
    assert got == fused


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf")])
def test_add_prior_rejects_bad_weights(weight: float) -> None:
    with pytest.raises(InvalidInput):
        add_prior([("a", 1.0, {"fts": 1})], {"a": 1}, "doc", weight=weight, k=1)


def _library_arms() -> ArmRankings:
    """A stray chunk (100, of document "stray") is first in the full-text list only; the
    document "asked" holds the next places of both lists."""
    owners = {100: "stray", 101: "stray", 1: "asked", 2: "asked", 3: "asked"}
    return ArmRankings(
        ranked={"fts": [100, 1, 2, 3], "dense": [1, 2, 101, 3]},
        scores={"fts": {100: 9.0, 1: 8.0, 2: 7.0, 3: 6.0}, "dense": {1: 0.9, 2: 0.8, 101: 0.7}},
        owners=owners,
    )


def test_prior_lifts_the_document_the_lists_agree_on() -> None:
    arms = _library_arms()
    off = RetrievalSettings(
        rrf_k=1, dense_weight=0.1, late_weight=0, prf_weight=0, document_prior_weight=0
    )
    on = off.model_copy(update={"document_prior_weight": 2.0})
    assert [chunk for chunk, _, _ in fuse(arms, off, 4)] == [100, 1, 2, 3]
    fused = fuse(arms, on, 4)
    assert [chunk for chunk, _, _ in fused] == [1, 2, 3, 100]
    assert [ranks[DOCUMENT_ARM] for _, _, ranks in fused] == [1, 1, 1, 2]


def test_prior_is_hybrid_only_and_needs_the_owners() -> None:
    arms = _library_arms()
    on = RetrievalSettings(
        rrf_k=1, dense_weight=0.1, late_weight=0, prf_weight=0, document_prior_weight=2.0
    )
    assert [chunk for chunk, _, _ in fuse(arms, on, 4, "fts")] == [100, 1, 2, 3]
    arms.owners = {}
    assert [chunk for chunk, _, _ in fuse(arms, on, 1)] == [100]


def test_setting_rejects_negative_weight() -> None:
    with pytest.raises(ValueError):
        RetrievalSettings(document_prior_weight=-0.1)
