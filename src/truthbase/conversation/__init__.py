"""Conversations: a follow-up question resolved against the earlier turns of its thread.

:func:`resolve_question` is the one way: with a model (the configured primary, when
``llm.followup_rewrite`` is on), its standalone rewrite (:mod:`.rewrite`, failing open); without
one, or when it fails, the deterministic resolution (:mod:`.resolve`). Either way the result is
a :class:`~truthbase.turns.Resolution`: what was searched ("searched for: ..."), the documents
the search prefers, and why. The application service (:mod:`truthbase.app`) asks it for every
door; the conversation evaluation (:mod:`truthbase.eval.conversations`) measures it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..llm.client import ChatModel
from ..turns import Resolution, Turn
from .resolve import ResolveSettings, is_standalone, resolve_follow_up
from .rewrite import StandaloneRewrite, rewrite

__all__ = [
    "ResolveSettings",
    "StandaloneRewrite",
    "is_standalone",
    "resolve_follow_up",
    "resolve_question",
    "rewrite",
]


def resolve_question(
    question: str,
    history: Sequence[Turn],
    *,
    model: ChatModel | None = None,
    timeout: float = 8.0,
    settings: ResolveSettings | None = None,
    titles: Mapping[str, str] | None = None,
) -> Resolution:
    """What to search for ``question`` after ``history`` (oldest first): the model's standalone
    rewrite when ``model`` is given and it answers usefully (with the resolution without a
    model searched beside it, ``also_searched``), else the resolution without a model. The
    earlier citations' documents are a prior unless the question is a new topic or names
    another document of ``titles`` (document id -> title)."""
    fallback = resolve_follow_up(question, history, settings, titles)
    if model is None or not history:
        return fallback
    outcome = rewrite(model, question, history, timeout)
    if outcome.question is None:
        # Everything the resolution without a model found stands, the ordinal's item in the
        # question the answerer reads among it.
        return replace(
            fallback, reason=f"{fallback.reason} (the model's rewrite failed: {outcome.reason})"
        )
    if " ".join(outcome.question.split()).rstrip("?. ").casefold() == (
        " ".join(question.split()).rstrip("?. ").casefold()
    ):
        if fallback.kind != "standalone":
            # The model kept a question that leans on the thread (a pronoun, an ordinal, too
            # few words of its own): it did not rewrite it, so the resolution without a model
            # stands. Qwen 1.5B kept 16 of 42 follow-ups, "Which door did it open?" among
            # them, and searched as written they lost their evidence (docs/evals/conversations.md).
            return replace(
                fallback,
                reason=f"{fallback.reason} (the model kept the question as it was written)",
            )
        return Resolution(
            question=question,
            searched_for=question,
            kind="standalone",
            reason="the model kept the question: it stands on its own",
        )
    return Resolution(
        question=question,
        searched_for=outcome.question,
        kind="rewritten",
        reason=f"rewritten by the model in {outcome.seconds:.1f} s",
        prior_documents=fallback.prior_documents,
        new_words=fallback.new_words,
        compared=fallback.compared,
        # What the resolution without a model read the question as: the extractive answerer
        # reads it (its words), an LLM answerer the rewrite (:meth:`Resolution.answer_question`).
        context_words=fallback.context_words,
        referents=fallback.referents,
        referent_others=fallback.referent_others,
        resolved_question=fallback.resolved_question,
        # The resolution without a model is searched too and fused: a small model's rewrite
        # can word the thread's subject away ("the second one" as "the second function", not
        # "MAP"), and the resolution still finds it (docs/evals/conversations.md).
        also_searched=(fallback.searched_for,) if fallback.kind == "resolved" else (),
    )
