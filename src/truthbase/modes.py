"""Who answers a question: the mode names that ``truthbase ask``, the Python API and the chat
endpoint share, and the one entry point that runs the chosen mode's events.

Modes: ``extractive`` and ``llm`` run the answer pipeline
(:func:`~truthbase.answer.pipeline.answer_question`); ``agent`` runs the tool loop
(:mod:`truthbase.answer.agent`) over the book tools (:class:`~truthbase.segments.tools.BookTools`),
with the configured LLM chain when there is one, else the extractive agent; ``auto`` (or None)
is ``llm`` when an LLM is configured, else ``extractive``, as before agent mode existed. The
rules of that choice are :func:`truthbase.answer.policy.resolve_chat_mode` (re-exported here).

This module assembles the answerers from the settings tree, so it sits above both the answer
stage (which knows the loop only through the :class:`~truthbase.records.Toolbox` Protocol) and
the segments stage (which implements the tools); the application service
(:class:`truthbase.app.Service`, every door's) and the benchmarks call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .access import DocScope, narrow
from .answer.agent import Agent, agent_events
from .answer.agent_extractive import hybrid_ranker
from .answer.extractive import ExtractiveAnswerer
from .answer.llm import answerer_for, stages_for
from .answer.model import Event
from .answer.pipeline import answer_question
from .answer.policy import resolve_chat_mode
from .cite.judge import Judge
from .config import Settings
from .embed import Embedder
from .llm.chain import load_chat_model
from .llm.client import ChatModel
from .records import CHAT_MODES, ChatMode, ResolvedMode
from .segments.tools import BookTools
from .store import SegmentStore
from .telemetry import traced
from .turns import Resolution

__all__ = [
    "CHAT_MODES",
    "ChatMode",
    "ResolvedMode",
    "agent_for",
    "answer_events",
    "book_tools",
    "resolve_chat_mode",
]


def book_tools(
    settings: Settings,
    store: SegmentStore,
    embedder: Embedder,
    *,
    model: ChatModel | None = None,
    doc_ids: Sequence[str] | None = None,
    summarizer: str | None = None,
) -> BookTools:
    """The book tools over ``store`` with the sections of ``settings`` they read."""
    return BookTools(
        store,
        embedder,
        settings.segments,
        settings.retrieval,
        settings.llm,
        model=model,
        doc_ids=doc_ids,
        summarizer=summarizer,
    )


def agent_for(
    settings: Settings,
    store: SegmentStore,
    embedder: Embedder,
    *,
    doc_id: str | None = None,
    doc_ids: DocScope = None,
    cancelled: Callable[[], bool] | None = None,
    judge: Judge | None = None,
) -> Agent:
    """The agent of ``settings``: the book tools over ``store`` (the documents of ``doc_ids``,
    None: all; one document's when ``doc_id`` is given, if it is in that scope), the configured
    LLM chain (None without one) and the ``agent`` section. ``cancelled`` is asked before every
    model call (the loop's and the tools'): True stops the answer (``Cancelled``)."""
    model = load_chat_model(settings.llm)
    if model is not None:
        model.cancelled = cancelled
    scope = narrow(doc_ids, doc_id)
    return Agent(
        toolbox=book_tools(
            settings,
            store,
            embedder,
            model=model,
            doc_ids=sorted(scope) if scope is not None else None,
        ),
        model=model,
        extractive=ExtractiveAnswerer(embedder, settings.extractive),
        settings=settings.agent,
        rank=hybrid_ranker(
            store, settings.retrieval, enough=settings.agent.detail_sources, doc_ids=scope
        ),
        judge=judge,
    )


def answer_events(
    store: SegmentStore,
    embedder: Embedder,
    question: str,
    settings: Settings,
    *,
    mode: ResolvedMode,
    k: int | None = None,
    doc_ids: DocScope = None,
    cancelled: Callable[[], bool] | None = None,
    judge: Judge | None = None,
    follow_up: Resolution | None = None,
) -> Iterator[Event]:
    """The events of one answer in ``mode`` (already resolved, once, by the caller:
    :func:`resolve_chat_mode`); ``k`` is the pipeline's number of sources (None:
    ``retrieval.k``); sources (and the agent's book tools) come only from ``doc_ids`` (None:
    every document), the scope the application layer decided (:mod:`truthbase.app`).
    ``cancelled`` stops agent mode before its next model call (the other modes stream, and
    stop when their consumer does). ``judge``: the model judge of every citation's support
    (:func:`truthbase.llm.judge.judge_for`, the setting ``support.judge``), in every mode.
    A follow-up's resolution (``follow_up``) gives what the pipeline's retrieval searches
    (``searched_for``; agent mode is asked it as its question), the earlier citations'
    documents (preferred, not required) and what the extractive answerer reads beside the
    question (:meth:`truthbase.answer.Answerer.draft`)."""
    # One span for the whole answer; its stages' spans (retrieve, generate, resolve, model
    # calls) nest under it.
    yield from traced(
        "answer",
        _mode_events(
            store,
            embedder,
            question,
            settings,
            _Choice(mode, k, doc_ids, cancelled, follow_up, judge),
        ),
        mode=mode,
    )


@dataclass(frozen=True, slots=True)
class _Choice:
    """How one answer runs: its mode, sources, scope, cancellation, follow-up resolution and
    support judge."""

    mode: ResolvedMode
    k: int | None
    scope: DocScope
    cancelled: Callable[[], bool] | None
    follow_up: Resolution | None
    judge: Judge | None


def _mode_events(
    store: SegmentStore, embedder: Embedder, question: str, settings: Settings, choice: _Choice
) -> Iterator[Event]:
    if choice.mode == "agent":
        agent = agent_for(
            settings,
            store,
            embedder,
            doc_ids=choice.scope,
            cancelled=choice.cancelled,
            judge=choice.judge,
        )
        asked = choice.follow_up.searched_for if choice.follow_up is not None else question
        yield from agent_events(store, embedder, asked, agent)
        return
    yield from answer_question(
        store,
        embedder,
        question,
        settings.retrieval,
        answerer=answerer_for(settings.llm, settings.extractive, embedder, choice.mode),
        k=choice.k,
        stages=stages_for(settings.llm, choice.mode),
        doc_ids=choice.scope,
        judge=choice.judge,
        follow_up=choice.follow_up,
    )
