"""One answer: (rewrite || search) -> sub-query fusion -> rerank -> numbered sources ->
answerer -> the shell (:mod:`.finish`): resolved, verified citations, the refusal decided.

:func:`answer_question` yields the typed events (``sources``, ``token``..., ``citations``, then
``done``; ``error``, for a stage's :class:`~truthbase.errors.TruthBaseError`, ends the stream
early, any other exception is a bug and propagates); :func:`ask` runs it and returns the final
answer.
The optional LLM stages (:class:`~truthbase.answer.llm.Stages`: query rewrite, listwise rerank)
each have their own timeout and fail open; ``Answer.timings`` has one entry per stage and
``Answer.info`` says what each did. The LLM answerer falls back to the extractive one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from typing import Any

from ..access import DocScope, narrow
from ..cite.judge import Judge
from ..config import LLMSettings, RetrievalSettings
from ..embed import Embedder
from ..errors import TruthBaseError
from ..llm.client import ChatModel
from ..llm.rerank import WINDOW, rerank_outcome
from ..llm.rewrite import RewriteOutcome, fuse_subqueries, rewrite
from ..model import overlaps
from ..records import SearchHit
from ..retrieve.fusion import prefer
from ..retrieve.hybrid import search
from ..store import Searchable
from ..telemetry import bind, span, traced
from ..turns import CitedSpan, Resolution
from .base import Answerer
from .extractive import ExtractiveAnswerer
from .finish import finish, settle
from .llm import Stages
from .model import (
    Answer,
    DoneEvent,
    ErrorEvent,
    Event,
    Source,
    SourcesEvent,
    TokenEvent,
)


def sources_from_hits(hits: Sequence[SearchHit]) -> list[Source]:
    """Number the hits [1]..[n] in rank order."""
    return [
        Source(
            n=i,
            doc_id=h.chunk.doc_id,
            title=h.document_title,
            unit=h.chunk.unit,
            start=h.chunk.start,
            end=h.chunk.end,
            text=h.chunk.text,
            rects=h.chunk.rects,
            chunk_id=h.chunk.id,
            score=h.score,
            section=h.chunk.section,
            context=h.chunk.context,
        )
        for i, h in enumerate(hits, 1)
    ]


@dataclass(slots=True, kw_only=True)
class Retrieved:
    """The ranked hits of the retrieval stages and what each stage did."""

    hits: list[SearchHit]
    timings: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def _prefer(hits: list[SearchHit], documents: Sequence[str]) -> list[SearchHit]:
    """``hits`` with the passages of ``documents`` lifted a few places (a prior, not a filter)."""
    wanted = frozenset(documents)
    by_chunk = {h.chunk.id: h for h in hits}
    return [
        by_chunk[i] for i in prefer(list(by_chunk), lambda i: by_chunk[i].chunk.doc_id in wanted)
    ]


def retrieve(
    store: Searchable,
    embedder: Embedder,
    question: str,
    settings: RetrievalSettings,
    *,
    k: int | None = None,
    stages: Stages | None = None,
    doc_ids: DocScope = None,
    prior_documents: Sequence[str] = (),
    also_searched: Sequence[str] = (),
    kept: Sequence[CitedSpan] = (),
) -> Retrieved:
    """(rewrite, in a thread, in parallel with the search of the question) -> search of each
    sub-query and of each of ``also_searched`` (other phrasings of the question: a follow-up's
    resolution beside its rewrite), fused with the question's own ranking ->
    ``prior_documents`` preferred (:func:`truthbase.retrieve.fusion.prefer`) -> listwise
    rerank of the fused top 15 -> the first of ``kept`` (a span the previous answer cited,
    which a comparison shows again) found among the deeper hits takes the last of the ``k``
    places when none of the ``k`` holds one.

    ``k`` hits (None: ``settings.k``). Both LLM stages fail open (the question stands; the
    fused order stands); ``info`` says what happened, ``timings`` how long each stage took (the
    rewrite ran beside the search). Without ``stages`` none runs.
    """
    k = k if k is not None else settings.k
    stages = stages if stages is not None else Stages(model=None, settings=LLMSettings())
    model = stages.model
    do_rewrite = model is not None and stages.rewrite
    do_rerank = model is not None and stages.rerank
    deeper = do_rewrite or do_rerank or prior_documents or also_searched or kept
    depth = max(k, WINDOW) if deeper else k
    out = Retrieved(hits=[])
    pool: ThreadPoolExecutor | None = None
    pending: Future[RewriteOutcome] | None = None
    if do_rewrite and model is not None:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="truthbase-rewrite")
        pending = pool.submit(bind(_rewrite_span), model, question, stages.rewrite_timeout)
    try:
        started = time.perf_counter()
        result = search(store, embedder, question, settings, k=depth, doc_ids=doc_ids)
        out.timings["search"] = time.perf_counter() - started
        hits = list(result.hits)
        # Every other phrasing's ranking joins one fusion with the question's: the thread's
        # (a follow-up's resolution beside its rewrite), then the LLM rewrite's sub-queries.
        queries = list(also_searched)
        if also_searched:
            out.info["also_searched"] = list(also_searched)
        if pending is not None:
            queries += _awaited_rewrite(pending, question, stages.rewrite_timeout, out)
        if queries:
            started = time.perf_counter()
            with span("subqueries", queries=len(queries)):
                hits = _fuse_queries(store, embedder, question, queries, hits, settings, doc_ids)
            hits = hits[:depth]
            out.timings["subqueries"] = time.perf_counter() - started
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    if prior_documents:  # a follow-up's earlier citations: a prior, not a filter
        hits, out.info["prior_documents"] = _prefer(hits, prior_documents), sorted(prior_documents)
    if do_rerank and model is not None:
        hits = _reranked(model, question, hits, stages, k, out)
    if kept:
        hits = _keeping(hits, kept, k, out, _look_up(store, embedder, settings, doc_ids))
    out.hits = hits[:k]
    return out


def _reranked(
    model: ChatModel, question: str, hits: list[SearchHit], stages: Stages, k: int, out: Retrieved
) -> list[SearchHit]:
    """The listwise rerank of the fused top :data:`WINDOW` (it fails open to their order)."""
    with span("rerank", candidates=len(hits)):
        ranked = rerank_outcome(
            model,
            question,
            [(h.chunk.id, h.chunk.text) for h in hits],
            stages.rerank_timeout,
            window=WINDOW,
            keep=k,
            max_chars=stages.rerank_chars,
        )
    by_id = {h.chunk.id: h for h in hits}
    out.timings["rerank"] = ranked.seconds
    out.info["rerank"] = {
        "reranked": ranked.reranked,
        "model_order": list(ranked.model_order),
        "reason": ranked.reason,
    }
    return [by_id[i] for i in ranked.ids]


#: How many of a comparison's earlier spans are looked up when the search missed them.
LOOK_UPS = 3


def _look_up(
    store: Searchable, embedder: Embedder, settings: RetrievalSettings, doc_ids: DocScope
) -> Callable[[CitedSpan], SearchHit | None]:
    """Finds the hit that holds an earlier answer's span again: its quote searched in its
    document alone (a document out of scope stays out)."""

    def looked_up(cited: CitedSpan) -> SearchHit | None:
        scope = narrow(doc_ids, cited.doc_id)
        if not cited.quote.strip() or scope == frozenset():
            return None
        found = search(store, embedder, cited.quote, settings, k=3, doc_ids=scope).hits
        return next((h for h in found if overlaps(h.chunk, cited)), None)

    return looked_up


def _keeping(
    hits: list[SearchHit],
    kept: Sequence[CitedSpan],
    k: int,
    out: Retrieved,
    look_up: Callable[[CitedSpan], SearchHit | None],
) -> list[SearchHit]:
    """``hits`` with a hit that holds the first span of ``kept`` (best first) among the first
    ``k``: a deeper hit that holds it, or else the one ``look_up`` finds (for the first
    :data:`LOOK_UPS` spans only: a request's spans are the client's), takes the ``k``-th place
    (the rest move down one); the next span is tried when neither finds one. With ``k`` under
    2 nothing moves: the one source is the new side's. The hit keeps a score no higher than the
    one it displaces, since whether to answer reads the sources' scores and is decided on the
    new side alone."""
    if k < 2:
        return hits
    for i, cited in enumerate(kept):
        found = next((j for j, h in enumerate(hits) if overlaps(h.chunk, cited)), None)
        if found is not None and found < k:
            out.info["kept"] = hits[found].chunk.id
            return hits
        hit = hits[found] if found is not None else look_up(cited) if i < LOOK_UPS else None
        if hit is None:
            continue
        place = min(k - 1, len(hits))
        rest = [h for h in hits[place:] if h.chunk.id != hit.chunk.id]
        if hits:  # no higher than the hit it displaces, or than the last one
            hit = replace(hit, score=min(hit.score, hits[min(place, len(hits) - 1)].score))
        out.info["kept"] = hit.chunk.id
        return [*hits[:place], hit, *rest]
    out.info["kept"] = None
    return hits


def _awaited_rewrite(
    pending: Future[RewriteOutcome], question: str, timeout: float, out: Retrieved
) -> list[str]:
    """The rewrite's sub-queries to fuse (none when it failed open), its outcome and times
    recorded in ``out``."""
    waited = time.perf_counter()
    outcome = _rewrite_outcome(pending, question, timeout)
    out.timings["rewrite"] = outcome.seconds
    out.timings["rewrite_wait"] = time.perf_counter() - waited
    out.info["rewrite"] = {
        "queries": outcome.queries,
        "rewritten": outcome.rewritten,
        "reason": outcome.reason,
    }
    return list(outcome.queries) if outcome.rewritten else []


def _rewrite_span(model: Any, question: str, timeout: float) -> RewriteOutcome:
    with span("rewrite"):
        return rewrite(model, question, timeout)


def _rewrite_outcome(
    pending: Future[RewriteOutcome], question: str, timeout: float
) -> RewriteOutcome:
    """The rewrite's outcome; the question stands if the thread outlives its timeout."""
    try:
        # The client enforces the timeout per call; this bounds a stuck thread as well.
        return pending.result(timeout=timeout + 1.0)
    except Exception as exc:  # the stage is optional: fail open on anything
        kind = "timeout" if isinstance(exc, FutureTimeout) else "error"
        return RewriteOutcome([question], False, f"{kind}: {type(exc).__name__}", timeout)


def _fuse_queries(
    store: Searchable,
    embedder: Embedder,
    question: str,
    queries: Sequence[str],
    question_hits: Sequence[SearchHit],
    settings: RetrievalSettings,
    doc_ids: DocScope = None,
) -> list[SearchHit]:
    """The question's ranking fused with each sub-query's (the question's is always in)."""
    depth = max(len(question_hits), WINDOW)
    by_id = {h.chunk.id: h for h in question_hits}
    rankings = [[h.chunk.id for h in question_hits]]
    asked = {" ".join(question.lower().split())}
    for query in queries:
        key = " ".join(query.lower().split())
        if key in asked:
            continue
        asked.add(key)
        sub = search(store, embedder, query, settings, k=depth, doc_ids=doc_ids).hits
        for h in sub:
            by_id.setdefault(h.chunk.id, h)
        rankings.append([h.chunk.id for h in sub])
    return [by_id[i] for i in fuse_subqueries(rankings, settings.rrf_k)]


def answer_question(
    store: Searchable,
    embedder: Embedder,
    question: str,
    retrieval: RetrievalSettings | None = None,
    *,
    answerer: Answerer | None = None,
    k: int | None = None,
    stages: Stages | None = None,
    doc_ids: DocScope = None,
    judge: Judge | None = None,
    follow_up: Resolution | None = None,
) -> Iterator[Event]:
    """The events of one answer; the answerer defaults to the extractive one, ``k`` (the number
    of sources) to ``retrieval.k``. ``stages`` adds the optional LLM stages (rewrite, rerank)
    to retrieval, ``judge`` the model judge of each citation's support; each fails open. A
    follow-up's resolution (``follow_up``) gives what is searched instead of the question
    (``searched_for``, with ``also_searched`` fused; the answerer reads the question), the
    documents preferred, not required (``prior_documents``), and what the answerer reads
    beside the question."""
    settings = retrieval if retrieval is not None else RetrievalSettings()
    chosen = answerer if answerer is not None else ExtractiveAnswerer(embedder)
    began = time.perf_counter()
    try:
        with span("retrieve"):
            retrieved = retrieve(
                store,
                embedder,
                follow_up.searched_for if follow_up is not None else question,
                settings,
                k=k,
                stages=stages,
                doc_ids=doc_ids,
                prior_documents=follow_up.prior_documents if follow_up is not None else (),
                also_searched=follow_up.also_searched if follow_up is not None else (),
                kept=follow_up.compared if follow_up is not None else (),
            )
    except TruthBaseError as exc:  # ends the stream as an error event; anything else is a bug
        yield ErrorEvent(message=f"{type(exc).__name__}: {exc}", stage="search")
        return
    timings = dict(retrieved.timings)
    sources = sources_from_hits(retrieved.hits)
    yield SourcesEvent(tuple(sources))

    started = time.perf_counter()
    pieces: list[str] = []
    try:
        generate = traced(
            "generate", _drafted(chosen, question, sources, follow_up), answerer=chosen.name
        )
        draft = next(generate)
        try:
            for token in generate:
                assert isinstance(token, str)
                pieces.append(token)
                yield TokenEvent(token)
        except TruthBaseError as exc:
            # Text was shown, so the chain cannot fall over to its next model; the draft's
            # fallback answers instead, and the final answer (``done``) replaces the shown text.
            recovered = draft.recover(exc, "".join(pieces)) if draft.recover else None
            if recovered is None:
                raise
            draft, pieces = recovered, []
            for token in draft.tokens:
                pieces.append(token)
                yield TokenEvent(token)
    except TruthBaseError as exc:
        yield ErrorEvent(message=f"{type(exc).__name__}: {exc}", stage="answer")
        return
    timings["answer"] = time.perf_counter() - started

    started = time.perf_counter()
    settled = settle("".join(pieces), sources, store, embedder, judge=judge)
    timings["cite"] = time.perf_counter() - started
    answered_by, info = draft.answerer or chosen.name, {**retrieved.info, **draft.info}
    yield from finish(
        question, settled, sources, answerer=answered_by, timings=timings, info=info, began=began
    )


def _drafted(
    answerer: Answerer, question: str, sources: Sequence[Source], follow_up: Resolution | None
) -> Iterator[Any]:
    """The answerer's draft, then its tokens: one iterator, so that the ``generate`` span is
    current while the draft is made and each token is produced (a model's stream)."""
    draft = answerer.draft(question, sources, follow_up)
    yield draft
    yield from draft.tokens


class AnswerError(TruthBaseError):
    """A stage failed; ``stage`` says which."""

    def __init__(self, message: str, stage: str) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage


def ask(
    store: Searchable,
    embedder: Embedder,
    question: str,
    retrieval: RetrievalSettings | None = None,
    *,
    answerer: Answerer | None = None,
    k: int | None = None,
    stages: Stages | None = None,
    follow_up: Resolution | None = None,
) -> Answer:
    """Run :func:`answer_question` to the end; raises :class:`AnswerError` on an error event."""
    events = answer_question(
        store,
        embedder,
        question,
        retrieval,
        answerer=answerer,
        k=k,
        stages=stages,
        follow_up=follow_up,
    )
    for event in events:
        if isinstance(event, ErrorEvent):
            raise AnswerError(event.message, event.stage)
        if isinstance(event, DoneEvent):
            return event.answer
    raise AnswerError("the answer stream ended without a result", "answer")
