"""Answers: numbered sources, an answerer (extractive, or an LLM chain), verified citations.

Which mode answers, and the agent with the book tools, are assembled above this stage and the
segments stage, in :mod:`truthbase.modes`.
"""

from __future__ import annotations

from .agent import AGENT_EXTRACTIVE, Agent, agent_events, ask_agent
from .base import Answerer, Draft
from .extractive import ExtractiveAnswerer, Selection
from .llm import LLMAnswerer, Stages, answerer_for, stages_for
from .model import (
    NO_ANSWER,
    Answer,
    Citation,
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    Source,
    SourcesEvent,
    TokenEvent,
)
from .pipeline import AnswerError, Retrieved, answer_question, ask, retrieve, sources_from_hits
from .policy import LLMNotConfigured, resolve_mode
from .scoring import Candidate
from .stored import record_answer

__all__ = [
    "AGENT_EXTRACTIVE",
    "NO_ANSWER",
    "Agent",
    "Answer",
    "AnswerError",
    "Answerer",
    "Candidate",
    "Citation",
    "CitationsEvent",
    "DoneEvent",
    "Draft",
    "ErrorEvent",
    "Event",
    "ExtractiveAnswerer",
    "LLMAnswerer",
    "LLMNotConfigured",
    "Retrieved",
    "Selection",
    "Source",
    "SourcesEvent",
    "Stages",
    "TokenEvent",
    "agent_events",
    "answer_question",
    "answerer_for",
    "ask",
    "ask_agent",
    "record_answer",
    "resolve_mode",
    "retrieve",
    "sources_from_hits",
    "stages_for",
]
