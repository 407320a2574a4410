"""Hybrid search: the full-text arm and the dense arm, fused with weighted RRF.

In hybrid mode two more lists join the fusion: late interaction (see :mod:`.late`, when
``settings.late_weight`` > 0, the embedder hands out token vectors and the index stores token
signs), which re-ranks the arms' candidates word piece by word piece, and pseudo-relevance
feedback (see :mod:`.feedback`, when ``settings.prf_weight`` > 0), a second full-text query
expanded with the words that weigh most in the first fused pass's top chunks. And when
``settings.document_prior_weight`` > 0, a document prior (see :mod:`.documents`): the chunks of
the documents the lists agree on rise together.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from ..access import DocScope
from ..config import RetrievalSettings
from ..embed import Embedder, TokenEmbedder, TokenVectors, check_compatible, embed_queries
from ..embed.token_code import TokenCode, token_code
from ..errors import InvalidInput
from ..model import Chunk
from ..records import ArmHit, SearchHit
from ..store import Searchable, TokenSigns
from ..telemetry import span
from ..text.navigation import is_navigation
from ..text.valid import require_text
from .documents import DOCUMENT_ARM, document_ranks, document_scores
from .feedback import expansion_terms, feedback_query
from .fts_query import build_fts_query, query_languages
from .fusion import add_prior, weighted_rrf
from .late import late_ranking, late_scores, query_rows
from .subqueries import split_question

Mode = Literal["hybrid", "fts", "dense"]
MODES: tuple[Mode, ...] = ("hybrid", "fts", "dense")


@dataclass(slots=True, kw_only=True)
class SearchTimings:
    """Seconds per stage of one search."""

    fts: float = 0.0
    embed: float = 0.0
    dense: float = 0.0
    late: float = 0.0
    feedback: float = 0.0
    fuse: float = 0.0

    @property
    def total(self) -> float:
        return self.fts + self.embed + self.dense + self.late + self.feedback + self.fuse


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
    languages: list[str | None] = field(default_factory=lambda: ["en"])  # of the terms
    feedback_terms: list[str] = field(default_factory=list)
    #: The document id of every chunk in the lists (hybrid mode): the document prior's groups.
    owners: dict[int, str] = field(default_factory=dict)
    timings: SearchTimings = field(default_factory=SearchTimings)


#: The pseudo-relevance feedback list's name; a full-text list, weighted by ``prf_weight``.
PRF_ARM = "prf"
#: The late-interaction list's name, weighted by ``late_weight``.
LATE_ARM = "late"


def arm_base(arm: str) -> str:
    """The arm kind of a ranked list: "fts#2" (the second sub-query's full-text list) -> "fts"."""
    return arm.split("#", 1)[0]


def rank_arms(
    store: Searchable,
    embedder: Embedder,
    query: str,
    settings: RetrievalSettings,
    mode: Mode,
    doc_ids: DocScope = None,
) -> ArmRankings:
    """Run the arms that ``mode`` asks for, each returning ``settings.candidates`` chunks of the
    documents ``doc_ids`` names (None: all; :func:`truthbase.access.visible_ids`): every arm
    filters inside its own query, and late interaction and feedback rank only those arms'
    candidates, so no list holds a chunk the caller may not see.

    The whole query's lists are "fts" and "dense". When ``settings.subqueries`` is on and the
    query joins several questions (see :mod:`.subqueries`), each sub-query adds its own lists,
    "fts#1", "dense#1", ..., which fusion weighs by ``settings.subquery_weight``.
    """
    languages = query_languages(query, store.languages())
    arms = ArmRankings(fts_query=build_fts_query(query, languages=languages), languages=languages)
    queries = [query]
    if settings.subqueries:
        queries += split_question(query)

    def record(arm: str, hits: list[ArmHit]) -> None:
        arms.ranked[arm] = [h.chunk_id for h in hits]
        arms.scores[arm] = {h.chunk_id: h.score for h in hits}

    if mode in ("hybrid", "fts"):
        for i, text in enumerate(queries):
            expression = arms.fts_query if i == 0 else build_fts_query(text, languages=languages)
            if expression is None:
                continue
            started = time.perf_counter()
            with span("fts", arm=i):
                hits = store.fts_search(
                    expression, settings.candidates, settings.fts_title_weight, doc_ids
                )
            record("fts" if i == 0 else f"fts#{i}", hits)
            arms.timings.fts += time.perf_counter() - started
    if mode in ("hybrid", "dense"):
        index = store.index_embedder()
        if index is not None:
            check_compatible(index.model_id, index.dim, embedder)
            late = mode == "hybrid" and settings.late_weight > 0
            started = time.perf_counter()
            question_tokens: TokenVectors | None = None
            with span("embed", queries=len(queries)):
                if late and isinstance(embedder, TokenEmbedder):
                    vectors, tokens = embedder.embed_with_tokens(queries)
                    question_tokens = tokens[0] if tokens else None
                else:
                    vectors = embed_queries(embedder, queries)
            arms.timings.embed = time.perf_counter() - started
            for i, vector in enumerate(vectors):
                started = time.perf_counter()
                with span("dense", arm=i):
                    found = store.dense_search(vector, settings.candidates, doc_ids)
                record("dense" if i == 0 else f"dense#{i}", found)
                arms.timings.dense += time.perf_counter() - started
            if question_tokens is not None:
                started = time.perf_counter()
                with span("late"):
                    add_late(store, question_tokens, token_code(index.token_code, index.dim), arms)
                arms.timings.late = time.perf_counter() - started
    if mode == "hybrid":
        add_owners(store, arms)
        if settings.prf_weight > 0:
            with span("feedback"):
                arms = add_feedback(store, query, arms, settings, doc_ids=doc_ids)
    return arms


def add_owners(store: Searchable, arms: ArmRankings) -> None:
    """Record in ``arms.owners`` the document of every chunk of its lists not recorded yet
    (one query; what the document prior groups the candidates by)."""
    pool = dict.fromkeys(chunk_id for ids in arms.ranked.values() for chunk_id in ids)
    missing = [chunk_id for chunk_id in pool if chunk_id not in arms.owners]
    if missing:
        arms.owners.update(store.chunk_documents(missing))


def add_late(store: TokenSigns, question: TokenVectors, code: TokenCode, arms: ArmRankings) -> None:
    """Add the late-interaction list (:data:`LATE_ARM`) to ``arms``: the chunks of every list so
    far, ranked by MaxSim against the question's token vectors. Chunks whose index has no token
    signs (documents ingested before they were stored, or with an embedder without token
    vectors) are left out of this list; without any, no list is added. ``code``: the index's
    token code (:mod:`truthbase.embed.token_code`), which the question's rows are put in."""
    pool = list(dict.fromkeys(chunk_id for ids in arms.ranked.values() for chunk_id in ids))
    scores = late_scores(code.query(query_rows(question)), store.token_signs(pool), code.bits)
    if scores:
        arms.ranked[LATE_ARM] = late_ranking(scores)
        arms.scores[LATE_ARM] = scores


def add_feedback(
    store: Searchable,
    query: str,
    arms: ArmRankings,
    settings: RetrievalSettings,
    texts: dict[int, str] | None = None,
    *,
    doc_ids: DocScope = None,
) -> ArmRankings:
    """``arms`` with the pseudo-relevance feedback list (:data:`PRF_ARM`) added or replaced.

    The feedback chunks are the top ``settings.prf_docs`` of the hybrid fusion of the other
    lists under ``settings``; document frequencies are counted over the candidate pool (the
    union of the whole query's "fts" and "dense" lists). ``texts`` caches chunk texts by id
    across calls (tuning calls this once per fusion configuration). Returns a new ArmRankings;
    ``arms`` is not changed. Without a full-text expression or an expansion word, no list is
    added.
    """
    started = time.perf_counter()
    ranked = {arm: ids for arm, ids in arms.ranked.items() if arm != PRF_ARM}
    scores = {arm: s for arm, s in arms.scores.items() if arm != PRF_ARM}
    out = ArmRankings(
        ranked=ranked,
        scores=scores,
        fts_query=arms.fts_query,
        languages=arms.languages,
        owners=dict(arms.owners),
        timings=arms.timings,
    )
    if arms.fts_query is None or settings.prf_docs == 0 or settings.prf_terms == 0:
        return out
    fused = fuse(out, settings, fusion_depth(settings, settings.prf_docs))
    fused_ids = [chunk_id for chunk_id, _, _ in fused]
    pool = list(dict.fromkeys([*ranked.get("fts", []), *ranked.get("dense", []), *fused_ids]))
    cache = texts if texts is not None else {}
    missing = [chunk_id for chunk_id in pool if chunk_id not in cache]
    cache.update(store.chunk_texts(missing))
    if settings.demote_navigation:  # the words come from passages, not from an index's names
        pointing = {i for i in fused_ids if is_navigation(cache.get(i, ""))}
        fused = navigation_last(fused, pointing, settings.prf_docs)
    first = [chunk_id for chunk_id, _, _ in fused[: settings.prf_docs]]
    words = expansion_terms(
        query,
        [cache[i] for i in first if i in cache],
        [cache[i] for i in pool if i in cache],
        terms=settings.prf_terms,
        max_pool_df=settings.prf_max_df,
    )
    out.feedback_terms = words
    if words:
        hits = store.fts_search(
            feedback_query(arms.fts_query, words, arms.languages),
            settings.candidates,
            settings.fts_title_weight,
            doc_ids,
        )
        out.ranked[PRF_ARM] = [h.chunk_id for h in hits]
        out.scores[PRF_ARM] = {h.chunk_id: h.score for h in hits}
        if out.owners:  # the lists' documents are known: the document prior may group these
            add_owners(store, out)
    out.timings.feedback = time.perf_counter() - started
    return out


def fuse(
    arms: ArmRankings, settings: RetrievalSettings, limit: int, mode: Mode = "hybrid"
) -> list[tuple[int, float, dict[str, int]]]:
    """Weighted RRF over the lists that ``mode`` uses: (chunk id, score, rank per list).

    The late-interaction and feedback lists (:data:`LATE_ARM`, :data:`PRF_ARM`) and the
    document prior (:data:`~.documents.DOCUMENT_ARM`, its rank is the chunk's document's) are
    used in hybrid mode only: a single-arm mode is that arm's own order."""
    used, weights = _weighted_lists(arms, settings, mode)
    fused = weighted_rrf(used, weights, settings.rrf_k)
    if mode == "hybrid" and settings.document_prior_weight > 0 and arms.owners:
        docs = document_ranks(document_scores(used, weights, arms.owners))
        prior = {
            chunk_id: docs[arms.owners[chunk_id]]
            for chunk_id, _, _ in fused
            if chunk_id in arms.owners
        }
        fused = add_prior(
            fused, prior, DOCUMENT_ARM, settings.document_prior_weight, settings.rrf_k
        )
    return fused[:limit]


def fusion_depth(settings: RetrievalSettings, limit: int) -> int:
    """How deep to fuse for ``limit`` results: twice as deep when tables of contents and index
    pages are ranked last (:func:`navigation_last`), so the places they leave are filled."""
    return 2 * limit if settings.demote_navigation else limit


def points_elsewhere(chunk: Chunk) -> bool:
    """A text chunk that is a table of contents or an index page (:func:`.is_navigation`)."""
    return chunk.kind == "text" and is_navigation(chunk.text)


def navigation_last(
    fused: list[tuple[int, float, dict[str, int]]], pointing: Collection[int], limit: int
) -> list[tuple[int, float, dict[str, int]]]:
    """``fused`` with the chunks of ``pointing`` after all the others (each part in its
    order), the first ``limit``: a contents or index page names everything a question can
    and answers none of it; the passage is on the page it points to."""
    ahead = [item for item in fused if item[0] not in pointing]
    return (ahead + [item for item in fused if item[0] in pointing])[:limit]


def _weighted_lists(
    arms: ArmRankings, settings: RetrievalSettings, mode: Mode
) -> tuple[dict[str, list[int]], dict[str, float]]:
    """The lists ``mode`` fuses and each one's fusion weight."""
    used = {arm: ranked for arm, ranked in arms.ranked.items() if mode in ("hybrid", arm_base(arm))}
    base = {
        "fts": settings.fts_weight,
        "dense": settings.dense_weight,
        LATE_ARM: settings.late_weight,
        PRF_ARM: settings.prf_weight,
    }
    if mode != "hybrid":
        base[mode] = 1.0  # one arm alone: its own order, whatever its fusion weight
    weights = {
        arm: base[arm_base(arm)] * (1.0 if arm == arm_base(arm) else settings.subquery_weight)
        for arm in used
    }
    return used, weights


def search(
    store: Searchable,
    embedder: Embedder,
    query: str,
    settings: RetrievalSettings,
    *,
    k: int | None = None,
    mode: Mode = "hybrid",
    doc_ids: DocScope = None,
) -> SearchResult:
    """Rank chunks for ``query``. ``mode`` picks one arm alone or the fusion of both;
    ``doc_ids`` (None: every document) the documents searched, inside each arm."""
    require_text(query, "query")
    limit = k if k is not None else settings.k
    if limit < 1:
        raise InvalidInput(f"k must be at least 1, got {limit}")
    with span("search", mode=mode, k=limit):
        return _search(store, embedder, query, settings, limit, mode, doc_ids)


def _search(
    store: Searchable,
    embedder: Embedder,
    query: str,
    settings: RetrievalSettings,
    limit: int,
    mode: Mode,
    doc_ids: DocScope,
) -> SearchResult:
    arms = rank_arms(store, embedder, query, settings, mode, doc_ids)
    timings = arms.timings
    started = time.perf_counter()
    with span("fuse"):
        fused = fuse(arms, settings, fusion_depth(settings, limit), mode)
    chunks = {c.id: c for c in store.chunks([chunk_id for chunk_id, _, _ in fused])}
    if settings.demote_navigation:
        pointing = {c.id for c in chunks.values() if points_elsewhere(c)}
        fused = navigation_last(fused, pointing, limit)
    # a hit's score under the document list is its document's score (the ranks' reason)
    documents = document_scores(*_weighted_lists(arms, settings, mode), arms.owners)
    scores = {
        **arms.scores,
        DOCUMENT_ARM: {c: documents[d] for c, d in arms.owners.items() if d in documents},
    }
    titles = store.document_titles({c.doc_id for c in chunks.values()})
    hits: list[SearchHit] = []
    for chunk_id, score, ranks in fused:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        hits.append(
            SearchHit(
                chunk=chunk,
                score=score,
                document_title=titles.get(chunk.doc_id, chunk.doc_id),
                arm_ranks=dict(ranks),
                arm_scores={arm: scores[arm][chunk_id] for arm in ranks},
            )
        )
    timings.fuse = time.perf_counter() - started
    return SearchResult(hits=hits, fts_query=arms.fts_query, timings=timings)
