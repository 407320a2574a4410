"""The answerer interface: what the extractive answerer and the LLM answerer implement."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import TruthBaseError
from ..turns import Resolution
from .model import Source


@dataclass(slots=True, kw_only=True)
class Draft:
    """An answer in the making: its text as a stream of tokens, and facts about it.

    The text uses [n] markers for sources[n - 1] (and may use position tags), or says NO_ANSWER.
    ``info`` ends up in the final answer (the extractive answerer's support and threshold; an
    LLM answerer's model and provider).
    """

    tokens: Iterator[str]
    info: dict[str, Any] = field(default_factory=dict)
    #: Who answers, when it is not the answerer itself (an LLM answerer names the model that
    #: answered, or its fallback); None: the answerer's ``name``.
    answerer: str | None = None
    #: The draft that answers instead when ``tokens`` fails after its first token (a model's
    #: stream that stalls, breaks or is cut off), given the error and the text shown so far;
    #: None (or it returning None): the failure ends the answer as an ``error`` event.
    recover: Callable[[TruthBaseError, str], Draft | None] | None = None


class Answerer(Protocol):
    """Turns a question and its numbered sources into an answer text with [n] markers.

    ``draft`` may raise; the pipeline reports that as an ``error`` event. The LLM answerer
    (:mod:`.llm`) catches its chain's failure and lets the extractive answerer answer.
    ``follow_up``: a follow-up's resolution against its thread (None for a first question),
    which the extractive answerer reads beside the question (:mod:`.extractive`).
    """

    @property
    def name(self) -> str: ...

    def draft(
        self, question: str, sources: Sequence[Source], follow_up: Resolution | None = None
    ) -> Draft: ...
