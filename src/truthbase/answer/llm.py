"""The LLM answerer: the configured chain of chat models, the extractive answerer last.

:class:`LLMAnswerer` implements :class:`~truthbase.answer.base.Answerer` over
:func:`truthbase.llm.draft_answer`. The first model of the chain that produces a first token
answers, and its tokens stream through. When every model fails (provider error, timeout, empty
reply) the fallback answerer (the extractive one) answers instead. The draft names whoever
answered (:attr:`Draft.answerer`: the model's name, or "extractive") and lists the failures in
``info["failed"]``.

:func:`answerer_for` builds the answerer of the mode that :func:`~.policy.resolve_mode` picks
(``llm`` when ``llm.base_url`` is set, else ``extractive``; re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import ExtractiveSettings, LLMSettings
from ..embed import Embedder
from ..errors import TruthBaseError
from ..llm import (
    AllModelsFailed,
    ChatModel,
    Failure,
    FallbackChatModel,
    LLMTimeout,
    draft_answer,
)
from ..llm.chain import load_chat_model, load_stage_model, with_fallbacks
from ..records import AnswerMode
from ..turns import Resolution
from .base import Answerer, Draft
from .extractive import ExtractiveAnswerer
from .model import Source
from .policy import LLMNotConfigured, resolve_mode

__all__ = [
    "LLMAnswerer",
    "LLMNotConfigured",
    "Stages",
    "answerer_for",
    "resolve_mode",
    "stages_for",
]


def _failures_json(failures: Sequence[Failure]) -> list[dict[str, Any]]:
    return [{"model": f.model, "error": f.error, "timed_out": f.timed_out} for f in failures]


class LLMAnswerer:
    """Answers with the first chat model of ``chain`` that answers, else with ``fallback``."""

    def __init__(
        self,
        chain: ChatModel,
        fallback: Answerer,
        *,
        timeout: float,
        stream: bool = True,
    ) -> None:
        self.chain: FallbackChatModel = (
            chain if isinstance(chain, FallbackChatModel) else with_fallbacks([chain])
        )
        self.fallback = fallback
        self.timeout = timeout
        self.stream = stream

    @property
    def name(self) -> str:
        return "llm"

    def draft(
        self, question: str, sources: Sequence[Source], follow_up: Resolution | None = None
    ) -> Draft:
        """The first model's stream, or the fallback's draft when every model failed.

        A failure after the first token (text already shown) is raised from the iteration.
        """
        try:
            reply = draft_answer(
                self.chain, question, sources, timeout=self.timeout, stream=self.stream
            )
        except AllModelsFailed as exc:
            draft = self.fallback.draft(question, sources, follow_up)
            info = {
                **draft.info,
                "mode": "llm",
                "model": None,
                "failed": _failures_json(exc.failures),
                "fell_back_to": self.fallback.name,
            }
            return Draft(tokens=draft.tokens, info=info, answerer=self.fallback.name)
        info = {
            "mode": "llm",
            "model": reply.model,
            "failed": _failures_json(reply.failures),
            "budget": reply.budget,
        }

        def recover(exc: TruthBaseError, shown: str) -> Draft:
            """The model's stream failed after its first token (stalled, broke, cut off: an
            answer that ends mid-sentence or mid-marker is no answer): the fallback answers."""
            failed = Failure(reply.model, str(exc), timed_out=isinstance(exc, LLMTimeout))
            draft = self.fallback.draft(question, sources, follow_up)
            return Draft(
                tokens=draft.tokens,
                info={
                    **draft.info,
                    "mode": "llm",
                    "model": None,
                    "failed": [
                        *info["failed"],
                        {**_failures_json([failed])[0], "shown": len(shown)},
                    ],
                    "fell_back_to": self.fallback.name,
                },
                answerer=self.fallback.name,
            )

        return Draft(tokens=reply.tokens, info=info, answerer=reply.model, recover=recover)


def answerer_for(
    llm: LLMSettings,
    extractive_settings: ExtractiveSettings,
    embedder: Embedder,
    mode: str | None = None,
) -> Answerer:
    """The answerer of ``mode`` (see :func:`resolve_mode`): the configured chain with the
    extractive answerer last, or the extractive answerer alone."""
    extractive = ExtractiveAnswerer(embedder, extractive_settings)
    if resolve_mode(mode, llm) == "extractive":
        return extractive
    chain = load_chat_model(llm)
    assert chain is not None  # resolve_mode checked base_url
    return LLMAnswerer(chain, extractive, timeout=llm.timeout_s, stream=llm.stream)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stages:
    """The optional LLM stages of one answer, each with its own timeout; both fail open.

    ``model`` runs them (None: no stage runs); which run and their limits are the ``llm``
    settings section (``rewrite_*``, ``rerank_*``)."""

    model: ChatModel | None
    settings: LLMSettings

    @property
    def rewrite(self) -> bool:
        return self.settings.rewrite_enabled

    @property
    def rewrite_timeout(self) -> float:
        return self.settings.rewrite_timeout_s

    @property
    def rerank(self) -> bool:
        return self.settings.rerank_enabled

    @property
    def rerank_timeout(self) -> float:
        return self.settings.rerank_timeout_s

    @property
    def rerank_chars(self) -> int:
        return self.settings.rerank_chars

    @property
    def active(self) -> bool:
        return self.model is not None and (self.rewrite or self.rerank)


def stages_for(llm: LLMSettings, mode: AnswerMode) -> Stages:
    """The stages the settings enable; none in extractive mode or without an LLM."""
    model = load_stage_model(llm) if mode == "llm" else None
    return Stages(model=model, settings=llm)
