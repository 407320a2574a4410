"""Weighted reciprocal rank fusion of several ranked lists ("arms").

score(item) = sum over arms that rank the item of w_arm / (k + rank_arm), ranks 1-based.

Ranks only, never the arms' raw scores: BM25 and cosine live on different scales, and RRF needs no
calibration between them. ``k`` damps the head of each list (larger k, flatter weights); the
weights let one arm count more. Both are tuned on the golden set.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

from ..errors import InvalidInput

__all__ = ["PRIOR_LIFT", "add_prior", "prefer", "weighted_rrf"]

K = TypeVar("K", bound=Hashable)


def weighted_rrf(
    rankings: Mapping[str, Sequence[K]],
    weights: Mapping[str, float],
    k: float,
) -> list[tuple[K, float, dict[str, int]]]:
    """Fuse ranked lists by weighted reciprocal rank fusion.

    ``rankings`` maps an arm's name to its items, best first. Every arm in ``rankings`` needs a
    weight (``weights`` may name more arms than are present). An arm with weight 0 is ignored
    entirely: it adds no score, no items and no ranks. An item listed twice by one arm keeps its
    best rank there.

    Returns ``(item, score, ranks)`` sorted by score, highest first; ties are broken by the best
    rank the item has in any arm, then by first appearance (arms in ``rankings`` order, each top
    to bottom), so the order is deterministic. ``ranks`` holds the item's rank in each arm that
    ranked it.
    """
    if not (math.isfinite(k) and k >= 0):
        raise InvalidInput(f"rrf k must be a finite number >= 0, got {k!r}")
    ranks: dict[K, dict[str, int]] = {}
    scores: dict[K, float] = {}
    first_seen: dict[K, int] = {}
    for arm, items in rankings.items():
        if arm not in weights:
            raise ValueError(f"no fusion weight for arm {arm!r}")
        weight = weights[arm]
        if not (math.isfinite(weight) and weight >= 0):
            raise InvalidInput(f"weight of arm {arm!r} must be finite and >= 0, got {weight!r}")
        if weight == 0:
            continue
        for rank, item in enumerate(items, start=1):
            item_ranks = ranks.setdefault(item, {})
            if arm in item_ranks:
                continue  # a duplicate within this arm: its best rank already counted
            item_ranks[arm] = rank
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            first_seen.setdefault(item, len(first_seen))
    order = sorted(
        scores,
        key=lambda item: (-scores[item], min(ranks[item].values()), first_seen[item]),
    )
    return [(item, scores[item], ranks[item]) for item in order]


def add_prior(
    fused: Sequence[tuple[K, float, dict[str, int]]],
    prior_ranks: Mapping[K, int],
    name: str,
    weight: float,
    k: float,
) -> list[tuple[K, float, dict[str, int]]]:
    """``fused`` (as :func:`weighted_rrf` returns it) with one more list, ``name``, in which
    several items may share a rank: each item of ``prior_ranks`` gains ``weight / (k + rank)``
    and its rank under ``name``; the others keep their score. Re-sorted by score, ties kept in
    their order in ``fused``. No item is added: a prior moves the fused items, it finds none.
    With ``weight`` 0, ``fused`` as it was."""
    if not (math.isfinite(weight) and weight >= 0):
        raise InvalidInput(f"weight of list {name!r} must be finite and >= 0, got {weight!r}")
    if weight == 0:
        return list(fused)
    moved: list[tuple[float, int, tuple[K, float, dict[str, int]]]] = []
    for position, (item, score, ranks) in enumerate(fused):
        rank = prior_ranks.get(item)
        if rank is not None:
            score += weight / (k + rank)
            ranks = {**ranks, name: rank}
        moved.append((-score, position, (item, score, ranks)))
    moved.sort(key=lambda entry: (entry[0], entry[1]))
    return [entry for _, _, entry in moved]


#: How many places a preferred item may rise: enough to lift it among near ties, too little to
#: bury a better passage elsewhere (a fused list's top scores are close: under RRF with k = 60 a
#: second list of any real weight would put every preferred item first).
PRIOR_LIFT = 3


def prefer(ranked: Sequence[K], preferred: Callable[[K], bool], lift: int = PRIOR_LIFT) -> list[K]:
    """``ranked`` with each preferred item moved up by ``lift`` places (ahead of the items it
    passes; ties keep the original order): a prior, not a filter (every item stays, and one
    that is not preferred falls by at most the number of preferred items that pass it)."""
    if lift <= 0:
        return list(ranked)
    keyed = [
        (i - lift if preferred(item) else i, 0 if preferred(item) else 1, i)
        for i, item in enumerate(ranked)
    ]
    return [ranked[i] for _, _, i in sorted(keyed)]
