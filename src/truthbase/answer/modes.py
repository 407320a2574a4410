"""Who answers a question: the mode names that ``truthbase ask``, the Python API and the chat
endpoint share, and the one entry point that runs the chosen mode's events.

Modes: ``extractive`` and ``llm`` run the answer pipeline (:func:`~.pipeline.answer_question`);
``agent`` runs the tool loop over the book tools (:mod:`.agent`), with the configured LLM chain
when there is one, else the extractive agent; ``auto`` (or None) is ``llm`` when an LLM is
configured, else ``extractive``, as before agent mode existed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from ..config import LLMSettings, Settings
from ..embed import Embedder
from ..errors import InvalidInput
from ..llm.client import load_chat_model
from ..store import Store
from .agent import Agent, agent_events
from .agent_extractive import hybrid_ranker
from .agent_loop import LoopLimits
from .extractive import ExtractiveAnswerer
from .llm import answerer_for, resolve_mode, stages_for
from .model import Event
from .pipeline import DEFAULT_SOURCES, answer_question

__all__ = [
    "CHAT_MODES",
    "ChatMode",
    "ResolvedMode",
    "agent_for",
    "answer_events",
    "resolve_chat_mode",
]

ChatMode = Literal["auto", "extractive", "llm", "agent"]
CHAT_MODES: tuple[ChatMode, ...] = ("auto", "extractive", "llm", "agent")
ResolvedMode = Literal["extractive", "llm", "agent"]


def resolve_chat_mode(mode: str | None, llm: LLMSettings) -> ResolvedMode:
    """``mode`` checked against the settings. ``agent`` needs no LLM (the extractive agent
    answers without one); ``llm`` without one raises :class:`~.llm.LLMNotConfigured`."""
    if mode is None or mode == "auto":
        return resolve_mode(None, llm)
    if mode == "agent":
        return "agent"
    if mode in ("extractive", "llm"):
        return resolve_mode(mode, llm)
    raise InvalidInput(f"unknown answer mode {mode!r}: use one of {', '.join(CHAT_MODES)}")


def agent_for(
    settings: Settings, store: Store, embedder: Embedder, *, doc_id: str | None = None
) -> Agent:
    """The agent of ``settings``: the book tools over ``store`` (one document's when ``doc_id``
    is given), the configured LLM chain (None without one) and the loop's limits."""
    from ..segments.tools import BookTools

    model = load_chat_model(settings.llm)
    scope = [doc_id] if doc_id is not None else None
    toolbox = BookTools(store, embedder, settings, llm=model, doc_ids=scope)
    cfg = settings.agent
    return Agent(
        toolbox=toolbox,
        model=model,
        extractive=ExtractiveAnswerer(embedder),
        limits=LoopLimits(
            max_steps=cfg.max_steps,
            timeout_s=cfg.timeout_s,
            total_timeout_s=cfg.total_timeout_s,
            max_tool_calls=cfg.max_tool_calls,
        ),
        overview_sentences=cfg.overview_sentences,
        rank=hybrid_ranker(store, settings.retrieval),
    )


def answer_events(
    store: Store,
    embedder: Embedder,
    question: str,
    settings: Settings,
    *,
    mode: str | None = None,
    k: int = DEFAULT_SOURCES,
    doc_id: str | None = None,
) -> Iterator[Event]:
    """The events of one answer in ``mode`` (see :func:`resolve_chat_mode`); ``k`` is the
    pipeline's number of sources, ``doc_id`` scopes the agent's book tools to one document."""
    chosen = resolve_chat_mode(mode, settings.llm)
    if chosen == "agent":
        yield from agent_events(
            store, embedder, question, agent_for(settings, store, embedder, doc_id=doc_id)
        )
        return
    yield from answer_question(
        store,
        embedder,
        question,
        settings.retrieval,
        answerer=answerer_for(settings.llm, embedder, chosen),
        k=k,
        stages=stages_for(settings.llm, chosen),
    )
