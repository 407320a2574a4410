"""The document prior: in a library of many similar documents, which document a question asks
about matters before which passage answers it.

It is computed at query time from what the arms already found, with no index of its own (no
re-ingest, no schema of its own): the document title and each chunk's section path are in the
full-text index's title column, and each arm's candidate list (``retrieval.candidates`` chunks,
wider than the results) says which documents the question keeps reaching. A document scores, in
every list, the reciprocal ranks ``1 / (DOCUMENT_RRF_K + rank)`` of its best
:data:`DOCUMENT_DEPTH` chunks there, times the list's fusion weight; summed over the lists, that
ranks the documents. Fusion (:func:`truthbase.retrieve.hybrid.fuse`) then adds one more list,
:data:`DOCUMENT_ARM`, in which every candidate chunk holds its document's rank, weighed by
``retrieval.document_prior_weight`` (:func:`truthbase.retrieve.fusion.add_prior`): the chunks of
the first document gain ``w / (k + 1)``, the second's ``w / (k + 2)``, and so on.

A question about "the memoir class" reaches memman.pdf's chunks in both arms (its title and
sections name the class, its passages are about it), while the one stray chunk of another
manual that happens to match the question's words best reaches no other list: the prior lifts
the document the lists agree on over that chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "DOCUMENT_ARM",
    "DOCUMENT_DEPTH",
    "DOCUMENT_RRF_K",
    "document_ranks",
    "document_scores",
]

#: The document list's name among the fused lists (a hit's ``arm_ranks`` shows its document's
#: rank under it).
DOCUMENT_ARM = "doc"
#: A document's chunks counted per list: a few, so that a long manual with many loosely
#: matching chunks does not outscore a short one whose few chunks rank first.
DOCUMENT_DEPTH = 3
#: The k of the document score's reciprocal ranks: RRF's customary 60, flat over a list of 50
#: candidates, so that a document's third chunk at rank 30 still counts (the passage fusion's
#: own k is sharp, 1: there the first chunk of each list should dominate).
DOCUMENT_RRF_K = 60.0


def document_scores(
    rankings: Mapping[str, Sequence[int]],
    weights: Mapping[str, float],
    owners: Mapping[int, str],
    *,
    depth: int = DOCUMENT_DEPTH,
    k: float = DOCUMENT_RRF_K,
) -> dict[str, float]:
    """Each document's score over the candidate lists ``rankings`` (arm -> chunk ids, best
    first): per list, ``weights[arm] / (k + rank)`` of each of its ``depth`` best chunks there.
    ``owners`` maps a chunk id to its document id; a chunk without one, and a list without a
    positive weight, count for nothing."""
    scores: dict[str, float] = {}
    for arm, items in rankings.items():
        weight = weights.get(arm, 0.0)
        if weight <= 0:
            continue
        counted: dict[str, int] = {}
        for rank, item in enumerate(items, start=1):
            doc = owners.get(item)
            if doc is None or counted.get(doc, 0) >= depth:
                continue
            counted[doc] = counted.get(doc, 0) + 1
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    return scores


def document_ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """The documents' 1-based ranks by score, highest first (ties by id, so the order is
    deterministic)."""
    order = sorted(scores, key=lambda doc: (-scores[doc], doc))
    return {doc: rank for rank, doc in enumerate(order, start=1)}
