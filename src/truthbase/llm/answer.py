"""The LLM answer: numbered sources in, a stream of text with [n] markers (or NO_ANSWER) out.

:func:`draft_answer` is what an LLM answerer of the answer pipeline calls: it picks the first
model of the chain that answers (its first token already received), so the pipeline can emit the
``sources`` event, then the tokens, and report which model answered. When every model fails it
raises :class:`~truthbase.llm.chain.AllModelsFailed`; the pipeline then lets the extractive
answerer answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .budget import fit_sources, message_tokens, room_chars, window_of
from .chain import Failure, FallbackChatModel, with_fallbacks
from .client import ChatModel
from .prompts import PromptSource, build_answer_messages

__all__ = ["LLMDraft", "draft_answer"]


@dataclass(slots=True)
class LLMDraft:
    """An answer in the making: ``tokens`` streams its text; ``model`` is the one answering."""

    tokens: Iterator[str]
    model: str
    failures: list[Failure] = field(default_factory=list)
    #: The context budget: the window, and the source numbers cut and dropped to fit it.
    budget: dict[str, Any] = field(default_factory=dict)

    @property
    def info(self) -> dict[str, Any]:
        """Facts for the final answer: which model answered and which failed before it."""
        return {
            "answerer": "llm",
            "model": self.model,
            "budget": dict(self.budget),
            "failed": [
                {"model": f.model, "error": f.error, "timed_out": f.timed_out}
                for f in self.failures
            ],
        }


def draft_answer(
    model: ChatModel,
    question: str,
    sources: Sequence[PromptSource],
    *,
    timeout: float,
    stream: bool = True,
) -> LLMDraft:
    """Ask ``model`` (a chain, or one model) to answer ``question`` from ``sources``.

    With ``stream`` the tokens come as the model writes them; without, as one piece. Raises
    :class:`~truthbase.llm.chain.AllModelsFailed` (an ``LLMError``) when no model answers; a
    failure after the first token raises ``LLMError`` from the iteration.
    """
    chain = model if isinstance(model, FallbackChatModel) else with_fallbacks([model])
    sources, budget = fit_answer_sources(chain, question, sources)
    messages = build_answer_messages(question, sources)
    if stream:
        reply = chain.stream_reply(messages, timeout)
        return LLMDraft(reply.tokens, reply.model, reply.failures, budget)
    done = chain.complete_reply(messages, timeout)
    return LLMDraft(iter([done.text]), done.model, done.failures, budget)


def fit_answer_sources(
    model: object, question: str, sources: Sequence[PromptSource]
) -> tuple[Sequence[PromptSource], dict[str, Any]]:
    """``sources`` fitted to ``model``'s window (unchanged for a model that cannot say its
    window), and the budget facts: ``context_tokens``, ``cut`` and ``dropped`` source numbers."""
    window = window_of(model)
    if window is None:
        return sources, {}
    context, reply = window
    room = room_chars(context, reply, message_tokens(build_answer_messages(question, [])))
    fitted = fit_sources(sources, room)
    return fitted.sources, {"context_tokens": context, **fitted.to_json()}
