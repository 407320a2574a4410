"""Several golden sets at once: the pool weighs every question once, and leaving one set out
measures each set with values chosen without it."""

from __future__ import annotations

import pytest

from truthbase.config import RetrievalSettings
from truthbase.errors import InvalidInput
from truthbase.eval.across_sets import ScoredSet, leave_one_set_out, pool_means, set_names
from truthbase.eval.golden import GoldenQuestion
from truthbase.eval.metrics import QuestionResult
from truthbase.eval.retrieval import GridScores

BASE = RetrievalSettings()
# the defaults first: ties go to the configuration nearest them
CONFIGS = [BASE, BASE.model_copy(update={"rrf_k": 5.0})]


def _set(name: str, ranks_per_config: list[list[int | None]]) -> ScoredSet:
    ids = [f"q{i}" for i in range(1, len(ranks_per_config[0]) + 1)]  # the same ids in every set
    return ScoredSet(
        name,
        GridScores(
            questions=[GoldenQuestion.model_construct(id=qid) for qid in ids],
            skipped=[],
            configs=CONFIGS,
            results=[
                {
                    qid: QuestionResult(id=qid, tags=(), rank=rank, ndcg=1.0 if rank else 0.0)
                    for qid, rank in zip(ids, ranks, strict=True)
                }
                for ranks in ranks_per_config
            ],
        ),
    )


def test_each_set_is_measured_with_the_values_chosen_on_the_others() -> None:
    # A is found only by the defaults, B and C only by rrf_k=5
    sets = [
        _set("a", [[1, 1], [None, None]]),
        _set("b", [[None, None], [1, 1]]),
        _set("c", [[None, None], [1, 1]]),
    ]
    report = leave_one_set_out(sets, BASE)

    assert report["chosen"]["rrf_k"] == 5.0  # 4 of 6 questions against 2 of 6
    # without b, a and c tie (2 of 4 each way) and the defaults win the tie: b is missed
    assert report["sets"]["b"]["chosen_without_it"]["rrf_k"] == BASE.rrf_k
    assert report["sets"]["b"]["left_out"]["recall@8"] == 0.0
    assert report["sets"]["b"]["fitted"]["recall@8"] == 1.0
    assert report["sets"]["a"]["left_out"]["recall@8"] == 0.0
    assert report["pool"]["questions"] == 6
    assert report["pool"]["left_out"]["recall@8"] == 0.0
    assert report["pool"]["fitted"]["recall@8"] == pytest.approx(4 / 6)


def test_question_ids_shared_by_two_sets_stay_apart() -> None:
    sets = [_set("a", [[1], [1]]), _set("b", [[None], [None]])]
    report = leave_one_set_out(sets, BASE)
    assert report["pool"]["questions"] == 2
    assert report["sets"]["a"]["fitted"]["recall@8"] == 1.0
    assert report["sets"]["b"]["fitted"]["recall@8"] == 0.0


def test_one_set_cannot_be_left_out() -> None:
    with pytest.raises(InvalidInput, match="at least two"):
        leave_one_set_out([_set("a", [[1], [1]])], BASE)


def test_the_pool_weighs_every_question_once() -> None:
    rows = {"small": {"mrr": 1.0}, "large": {"mrr": 0.0}}
    assert pool_means(rows, {"small": 1, "large": 3}) == {"mrr": 0.25}


def test_two_sets_of_one_name_are_refused() -> None:
    assert set_names(["dev", "library-dev"]) == ["dev", "library-dev"]
    with pytest.raises(InvalidInput, match="two golden sets are named 'dev'"):
        set_names(["dev", "dev"])
