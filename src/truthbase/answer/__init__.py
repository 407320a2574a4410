"""Answers: numbered sources, an answerer (extractive, or an LLM chain), verified citations."""

from __future__ import annotations

from .base import Answerer, Draft
from .extractive import Candidate, ExtractiveAnswerer, ExtractiveSettings, Selection
from .llm import (
    MODES,
    AnswerMode,
    LLMAnswerer,
    LLMNotConfigured,
    Stages,
    answerer_for,
    resolve_mode,
    stages_for,
)
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
from .stored import record_answer

__all__ = [
    "MODES",
    "NO_ANSWER",
    "Answer",
    "AnswerError",
    "AnswerMode",
    "Answerer",
    "Candidate",
    "Citation",
    "CitationsEvent",
    "DoneEvent",
    "Draft",
    "ErrorEvent",
    "Event",
    "ExtractiveAnswerer",
    "ExtractiveSettings",
    "LLMAnswerer",
    "LLMNotConfigured",
    "Retrieved",
    "Selection",
    "Source",
    "SourcesEvent",
    "Stages",
    "TokenEvent",
    "answer_question",
    "answerer_for",
    "ask",
    "record_answer",
    "resolve_mode",
    "retrieve",
    "sources_from_hits",
    "stages_for",
]
