"""Agent mode: a model with the book tools reads the book first, then answers with position tags.

The loop itself is pure (:mod:`.agent_loop`); the extractive agent answers without a model
(:mod:`.agent_extractive`). This module runs one of them and hands the final text to the answer
shell (:mod:`.finish`), as every other mode does: its [n] markers and position tags resolve
against *all* sources of this turn's tool results, a tag only when it names a span a tool
produced (a tag that stood in a document's own text never does), and the same typed events come
out as from :func:`truthbase.answer.answer_question`: ``sources``, ``token``, ``citations``,
``done`` (or ``error``), so the CLI and the server show agent answers unchanged.

Who answers (``Answer.answerer``): ``agent:MODEL`` when the model's final text stands, else
``agent-extractive``: without an LLM, when the loop fails (model error, too many steps, out of
time), or when the model's answer is not a refusal yet cites no passage that supports it
(:func:`.policy.model_answer_stands`); an answer that the book does not back is never shown as
the book's content. ``Answer.info`` says why
(``fallback_reason``), which models failed (``failed``) and every tool call (``tools``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..cite.judge import Judge
from ..cite.resolve import UnitReader
from ..config import AgentSettings
from ..embed import Embedder
from ..errors import TruthBaseError
from ..llm.chain import Failure
from ..llm.client import ToolCallingModel
from ..records import Toolbox
from .agent_extractive import AGENT_EXTRACTIVE, PassageRanker, extractive_agent
from .agent_loop import AgentFailed, ToolRun, run_agent, shown_tags
from .agent_sections import cite_sections
from .extractive import ExtractiveAnswerer
from .finish import Settled, finish, settle
from .model import (
    Answer,
    DoneEvent,
    ErrorEvent,
    Event,
    Source,
    SourcesEvent,
    TokenEvent,
)
from .pipeline import AnswerError
from .policy import model_answer_stands

__all__ = ["AGENT_EXTRACTIVE", "Agent", "agent_events", "ask_agent"]


@dataclass(slots=True, kw_only=True)
class Agent:
    """What one agent answer needs: the tools, the model (None: the extractive agent answers),
    the extractive answerer (the detail fallback) and the ``agent`` settings section (the
    limits of the loop, the extractive agent's passage counts)."""

    toolbox: Toolbox
    model: ToolCallingModel | None
    extractive: ExtractiveAnswerer
    settings: AgentSettings = field(default_factory=AgentSettings)
    rank: PassageRanker | None = None  # orders detail passages (None: cosine + term overlap)
    judge: Judge | None = None  # the support judge of every citation (support.judge)


@dataclass(slots=True, kw_only=True)
class _Outcome:
    text: str
    runs: list[ToolRun]
    answerer: str
    info: dict[str, Any]

    @property
    def sources(self) -> list[Source]:
        return [s for r in self.runs for s in r.sources]


def _failures_json(failures: list[Failure]) -> list[dict[str, Any]]:
    return [{"model": f.model, "error": f.error, "timed_out": f.timed_out} for f in failures]


def _resolve(
    outcome: _Outcome, store: UnitReader, embedder: Embedder, judge: Judge | None
) -> Settled:
    text = outcome.text
    if outcome.answerer != AGENT_EXTRACTIVE:
        # "S38: claim" -> "[tag] claim": the tag of section S38's passage that best supports
        # the claim; checked by the shell below like any tag the model wrote.
        sections = [r.sections for r in outcome.runs if r.error is None]
        text, cited = cite_sections(text, sections, outcome.sources, embedder)
        if cited:
            outcome.info["section_citations"] = [c.note() for c in cited]
            outcome.info["model_text"] = outcome.text
    shown = shown_tags(outcome.runs)
    return settle(text, outcome.sources, store, embedder, shown=shown, judge=judge)


def _extractive(agent: Agent, question: str, embedder: Embedder, info: dict[str, Any]) -> _Outcome:
    result = extractive_agent(
        agent.toolbox,
        question,
        embedder,
        agent.extractive,
        overview_sentences=agent.settings.overview_sentences,
        detail_sources=agent.settings.detail_sources,
        rank=agent.rank,
    )
    return _Outcome(
        text=result.text,
        runs=result.runs,
        answerer=AGENT_EXTRACTIVE,
        info={**info, **result.info},
    )


def _model_outcome(agent: Agent, question: str, embedder: Embedder) -> _Outcome:
    """The model's loop, or the extractive agent when there is no model or the loop fails."""
    if agent.model is None:
        return _extractive(agent, question, embedder, {"fallback_reason": "no LLM configured"})
    try:
        run = run_agent(agent.model, agent.toolbox, question, agent.settings)
    except AgentFailed as exc:
        info = {
            "model": None,
            "steps": exc.steps,
            "fallback_reason": exc.reason,
            "failed": _failures_json(exc.failures),
            "model_tools": [r.to_json() for r in exc.runs],
        }
        return _extractive(agent, question, embedder, info)
    return _Outcome(
        text=run.text,
        runs=run.runs,
        answerer=f"agent:{run.model}",
        info={
            "model": run.model,
            "steps": run.steps,
            "forced_tool": run.forced,
            "failed": _failures_json(run.failures),
        },
    )


def agent_events(
    store: UnitReader, embedder: Embedder, question: str, agent: Agent
) -> Iterator[Event]:
    """The events of one agent answer; see the module docstring."""
    began = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        outcome = _model_outcome(agent, question, embedder)
        timings["agent"] = time.perf_counter() - began
        started = time.perf_counter()
        resolved = _resolve(outcome, store, embedder, agent.judge)
        timings["cite"] = time.perf_counter() - started
        if outcome.answerer != AGENT_EXTRACTIVE and not model_answer_stands(
            resolved.refused, resolved.citations
        ):
            # The model answered, but nothing it wrote is supported by a passage of the book:
            # that may be its own knowledge, so the book's own words answer instead.
            started = time.perf_counter()
            info = {
                **outcome.info,
                "fallback_reason": "the model's answer cites no verified passage of the book that "
                "supports its claims",
                "model_text": outcome.text,
                "model_tools": [r.to_json() for r in outcome.runs],
            }
            outcome = _extractive(agent, question, embedder, info)
            dropped = [f"model answer: {p}" for p in resolved.problems]
            resolved = _resolve(outcome, store, embedder, agent.judge)
            resolved.problems[:0] = dropped
            timings["extractive"] = time.perf_counter() - started
    except TruthBaseError as exc:  # ends the stream as an error event; anything else is a bug
        yield ErrorEvent(message=f"{type(exc).__name__}: {exc}", stage="agent")
        return
    sources = outcome.sources
    timings["tools"] = sum(r.seconds for r in outcome.runs)
    yield SourcesEvent(tuple(sources))
    # The whole text is known before the first event: the token is the rendered answer
    # ([n] markers, dropped tags gone), as the `done` event's text.
    yield TokenEvent(resolved.final)
    facts: dict[str, Any] = {"mode": "agent", **outcome.info}
    facts["tools"] = [r.to_json() for r in outcome.runs]
    if outcome.answerer == AGENT_EXTRACTIVE:
        facts["fell_back_to"] = AGENT_EXTRACTIVE
    yield from finish(
        question,
        resolved,
        sources,
        answerer=outcome.answerer,
        timings=timings,
        info=facts,
        began=began,
    )


def ask_agent(store: UnitReader, embedder: Embedder, question: str, agent: Agent) -> Answer:
    """Run :func:`agent_events` to the end; raises :class:`AnswerError` on an error event."""
    for event in agent_events(store, embedder, question, agent):
        if isinstance(event, ErrorEvent):
            raise AnswerError(event.message, event.stage)
        if isinstance(event, DoneEvent):
            return event.answer
    raise AnswerError("the agent's stream ended without a result", "agent")
