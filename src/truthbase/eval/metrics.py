"""Retrieval metrics under the hit rule of golden/README.md.

A retrieved chunk *contains* an evidence record when it is from the same document and the same
unit (PDF: 0-based unit index == page - 1; EPUB: the spine href == section) and the chunk's text
contains the record under :mod:`truthbase.eval.evidence`: the quote under
:mod:`truthbase.text.matching` (elisions included), fuzzily for an OCR record, with every cell for a
table record. A question is *found* at k when every one of its evidence records is contained by
some chunk among the top k.

Definitions (all over answerable questions; unanswerable ones have no evidence and no rank):

- ``first_hit_rank``: the smallest k <= max_k at which the question is found, else None. For a
  multi-evidence question this is the rank of the *last* record to be covered: an answer needs
  all of them.
- ``recall@k``: the share of questions whose first_hit_rank is <= k.
- ``mrr``: the mean of 1 / first_hit_rank, 0 for None. It is the reciprocal rank of the
  all-evidence-found rank, consistent with recall@k (a multi-page question that retrieves one page
  at rank 1 and the other at rank 7 scores 1/7). Ranks are cut at max_k (15 by default), so this
  is MRR@15.
- ``ndcg@5``: binary gains with novelty. The chunk at rank i (1-based, i <= 5) has gain 1 when it
  contains an evidence record that no higher-ranked chunk contains, else 0; DCG = sum gain_i /
  log2(i + 1). The ideal DCG puts min(#evidence records, 5) relevant chunks at ranks 1.. . Chunks
  overlap (about 15%), so one quote can lie in two neighbouring chunks; counting both would let
  nDCG exceed 1 and reward redundancy, so a repeat of an already covered record gains nothing, and
  nDCG stays in [0, 1]. (A question whose records all fit in one chunk cannot reach 1; the golden
  sets place multiple records on different pages, where this does not arise.)

Normalizing chunk text is the costly part: pass ``normalized`` (``textmatch.normalize(text)``)
when you have it; otherwise it is computed through an LRU cache keyed by the text, so the same
chunk text met by many questions is normalized once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from ..text.matching import normalize
from .evidence import evidence_in
from .golden import GoldenEvidence, GoldenQuestion

__all__ = [
    "MAX_K",
    "METRIC_NAMES",
    "NDCG_K",
    "RECALL_KS",
    "QuestionResult",
    "RetrievedChunk",
    "chunk_contains",
    "evidence_ranks",
    "first_hit_rank",
    "mean_reciprocal_rank",
    "ndcg_at",
    "recall_at",
    "score_question",
    "summarize",
    "summarize_by_tag",
    "summarize_results",
]

RECALL_KS = (1, 5, 8, 15)
NDCG_K = 5
MAX_K = 15
METRIC_NAMES = (*(f"recall@{k}" for k in RECALL_KS), "mrr", f"ndcg@{NDCG_K}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievedChunk:
    """A retrieved chunk as the hit rule sees it.

    ``doc`` is the golden set's document name (the caller maps stored document ids to names),
    ``unit`` the 0-based unit index, ``href`` the EPUB spine href (None for PDFs), ``text`` the
    chunk text, and ``normalized`` optionally ``textmatch.normalize(text)`` precomputed.
    """

    doc: str
    unit: int
    text: str
    href: str | None = None
    normalized: str | None = None


_normalize_cached = lru_cache(maxsize=32768)(normalize)


def _normalized_text(chunk: RetrievedChunk) -> str:
    return chunk.normalized if chunk.normalized is not None else _normalize_cached(chunk.text)


def _section_key(href: str) -> str:
    """An href without its fragment and percent-encoding."""
    return unquote(href.split("#", 1)[0])


def same_section(chunk_href: str, section: str) -> bool:
    """Same spine item; tolerates a folder prefix on either side ("OEBPS/ch1.xhtml")."""
    a, b = _section_key(chunk_href), _section_key(section)
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def chunk_contains(evidence: GoldenEvidence, chunk: RetrievedChunk) -> bool:
    """True when ``chunk`` is on the evidence's document and unit and contains the record."""
    if chunk.doc != evidence.doc:
        return False
    if evidence.page is not None:
        same_unit = chunk.unit == evidence.page - 1
    else:
        same_unit = (
            evidence.section is not None
            and chunk.href is not None
            and same_section(chunk.href, evidence.section)
        )
    if not same_unit:
        return False
    return evidence_in(evidence, _normalized_text(chunk))


def evidence_ranks(
    evidence: Sequence[GoldenEvidence],
    ranked_chunks: Sequence[RetrievedChunk],
    max_k: int = MAX_K,
) -> list[int | None]:
    """For each evidence record, the 1-based rank of the first top-``max_k`` chunk holding it."""
    ranks: list[int | None] = [None] * len(evidence)
    for rank, chunk in enumerate(ranked_chunks[:max_k], start=1):
        for i, record in enumerate(evidence):
            if ranks[i] is None and chunk_contains(record, chunk):
                ranks[i] = rank
        if all(r is not None for r in ranks):
            break
    return ranks


def first_hit_rank(
    evidence: Sequence[GoldenEvidence],
    ranked_chunks: Sequence[RetrievedChunk],
    max_k: int = MAX_K,
) -> int | None:
    """The smallest k <= ``max_k`` with every evidence record contained in the top k, or None.

    Raises ValueError for no evidence: an unanswerable question has no retrieval rank.
    """
    if not evidence:
        raise ValueError("no evidence records: unanswerable questions have no retrieval rank")
    ranks = evidence_ranks(evidence, ranked_chunks, max_k)
    found = [r for r in ranks if r is not None]
    return max(found) if len(found) == len(ranks) else None


def ndcg_at(
    evidence: Sequence[GoldenEvidence],
    ranked_chunks: Sequence[RetrievedChunk],
    k: int = NDCG_K,
) -> float:
    """nDCG@k with binary novelty gains (see the module docstring); in [0, 1]."""
    if not evidence:
        raise ValueError("no evidence records: unanswerable questions have no nDCG")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    covered = [False] * len(evidence)
    dcg = 0.0
    for rank, chunk in enumerate(ranked_chunks[:k], start=1):
        new = [
            i
            for i, record in enumerate(evidence)
            if not covered[i] and chunk_contains(record, chunk)
        ]
        if new:
            for i in new:
                covered[i] = True
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(evidence), k) + 1))
    return dcg / ideal


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionResult:
    """One answerable question's retrieval outcome."""

    id: str
    tags: tuple[str, ...]
    rank: int | None
    ndcg: float  # nDCG@5


def score_question(
    question: GoldenQuestion,
    ranked_chunks: Sequence[RetrievedChunk],
    max_k: int = MAX_K,
) -> QuestionResult:
    """first_hit_rank and nDCG@5 of one answerable question."""
    return QuestionResult(
        id=question.id,
        tags=question.tags,
        rank=first_hit_rank(question.evidence, ranked_chunks, max_k),
        ndcg=ndcg_at(question.evidence, ranked_chunks, NDCG_K),
    )


def _check_ranks(ranks: Sequence[int | None]) -> None:
    if not ranks:
        raise ValueError("no questions to summarize")
    for rank in ranks:
        if rank is not None and rank < 1:
            raise ValueError(f"ranks are 1-based, got {rank}")


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """The share of questions found within the top ``k``."""
    _check_ranks(ranks)
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """Mean of 1/rank, 0 for a question not found."""
    _check_ranks(ranks)
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


def summarize(ranks: Sequence[int | None], ndcgs: Sequence[float]) -> dict[str, float]:
    """recall@1/5/8/15, mrr and ndcg@5 over questions' first-hit ranks and nDCG@5 values.

    Ranks must come from ``first_hit_rank`` with max_k >= 15 for recall@15 to be complete.
    """
    _check_ranks(ranks)
    if len(ndcgs) != len(ranks):
        raise ValueError(f"{len(ranks)} ranks but {len(ndcgs)} nDCG values")
    summary = {f"recall@{k}": recall_at(ranks, k) for k in RECALL_KS}
    summary["mrr"] = mean_reciprocal_rank(ranks)
    summary[f"ndcg@{NDCG_K}"] = sum(ndcgs) / len(ndcgs)
    return summary


def summarize_results(results: Sequence[QuestionResult]) -> dict[str, float]:
    """:func:`summarize` over per-question results."""
    return summarize([r.rank for r in results], [r.ndcg for r in results])


def summarize_by_tag(
    results: Iterable[QuestionResult], tags: Iterable[str] | None = None
) -> dict[str, dict[str, float]]:
    """Per tag, the :func:`summarize` dict of the questions carrying it, plus ``"n"`` (count).

    A question counts under each of its tags. ``tags`` restricts (and orders) the tags reported;
    by default every tag present, sorted.
    """
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        for tag in result.tags:
            groups.setdefault(tag, []).append(result)
    names = sorted(groups) if tags is None else [t for t in tags if t in groups]
    return {tag: {"n": float(len(groups[tag])), **summarize_results(groups[tag])} for tag in names}
