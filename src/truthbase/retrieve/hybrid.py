"""Hybrid search: the full-text arm and the dense arm, fused with weighted RRF."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from ..config import RetrievalSettings
from ..embed import Embedder, check_compatible
from ..model import SearchHit
from ..store import ArmHit, Store
from .fts_query import build_fts_query
from .fusion import weighted_rrf

Mode = Literal["hybrid", "fts", "dense"]
MODES: tuple[Mode, ...] = ("hybrid", "fts", "dense")


@dataclass(slots=True, kw_only=True)
class SearchTimings:
    """Seconds per stage of one search."""

    fts: float = 0.0
    embed: float = 0.0
    dense: float = 0.0
    fuse: float = 0.0

    @property
    def total(self) -> float:
        return self.fts + self.embed + self.dense + self.fuse


@dataclass(slots=True, kw_only=True)
class SearchResult:
    hits: list[SearchHit]
    fts_query: str | None
    timings: SearchTimings = field(default_factory=SearchTimings)


@dataclass(slots=True, kw_only=True)
class ArmRankings:
    """Each arm's ranked chunk ids and scores for one query, before fusion."""

    ranked: dict[str, list[int]] = field(default_factory=dict)
    scores: dict[str, dict[int, float]] = field(default_factory=dict)
    fts_query: str | None = None
    timings: SearchTimings = field(default_factory=SearchTimings)


def rank_arms(
    store: Store, embedder: Embedder, query: str, settings: RetrievalSettings, mode: Mode
) -> ArmRankings:
    """Run the arms that ``mode`` asks for, each returning ``settings.candidates`` chunks."""
    arms = ArmRankings(fts_query=build_fts_query(query))

    def record(arm: str, hits: list[ArmHit]) -> None:
        arms.ranked[arm] = [h.chunk_id for h in hits]
        arms.scores[arm] = {h.chunk_id: h.score for h in hits}

    if mode in ("hybrid", "fts") and arms.fts_query is not None:
        started = time.perf_counter()
        record("fts", store.fts_search(arms.fts_query, settings.candidates))
        arms.timings.fts = time.perf_counter() - started
    if mode in ("hybrid", "dense"):
        index = store.index_embedder()
        if index is not None:
            check_compatible(index.model_id, index.dim, embedder)
            started = time.perf_counter()
            vector = embedder.embed([query])[0]
            arms.timings.embed = time.perf_counter() - started
            started = time.perf_counter()
            record("dense", store.dense_search(vector, settings.candidates))
            arms.timings.dense = time.perf_counter() - started
    return arms


def fuse(
    arms: ArmRankings, settings: RetrievalSettings, limit: int, mode: Mode = "hybrid"
) -> list[tuple[int, float, dict[str, int]]]:
    """Weighted RRF over the arms that ``mode`` uses: (chunk id, score, rank per arm)."""
    used = {arm: ranked for arm, ranked in arms.ranked.items() if mode in ("hybrid", arm)}
    weights = {"fts": settings.fts_weight, "dense": settings.dense_weight}
    if mode != "hybrid":
        weights[mode] = 1.0  # one arm alone: its own order, whatever its fusion weight
    return weighted_rrf(used, weights, settings.rrf_k)[:limit]


def search(
    store: Store,
    embedder: Embedder,
    query: str,
    settings: RetrievalSettings,
    *,
    k: int | None = None,
    mode: Mode = "hybrid",
) -> SearchResult:
    """Rank chunks for ``query``. ``mode`` picks one arm alone or the fusion of both."""
    limit = k if k is not None else settings.k
    arms = rank_arms(store, embedder, query, settings, mode)
    timings = arms.timings
    started = time.perf_counter()
    fused = fuse(arms, settings, limit, mode)
    chunks = {c.id: c for c in store.chunks([chunk_id for chunk_id, _, _ in fused])}
    titles: dict[str, str] = {}
    hits: list[SearchHit] = []
    for chunk_id, score, ranks in fused:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        if chunk.doc_id not in titles:
            info = store.document(chunk.doc_id)
            titles[chunk.doc_id] = info.title if info else chunk.doc_id
        hits.append(
            SearchHit(
                chunk=chunk,
                score=score,
                document_title=titles[chunk.doc_id],
                arm_ranks=dict(ranks),
                arm_scores={arm: arms.scores[arm][chunk_id] for arm in ranks},
            )
        )
    timings.fuse = time.perf_counter() - started
    return SearchResult(hits=hits, fts_query=arms.fts_query, timings=timings)
