"""The answer policy: *why was this refused* is answered in this file, and which mode answers.

Answerers only produce sources and text (:mod:`.extractive`, :mod:`.llm`, :mod:`.agent_loop`,
:mod:`.agent_extractive`); the shell (:mod:`.finish`) asks this module every answer-level
decision instead of re-deciding it.

Refusal. An answer is refused when

1. its text refuses (:func:`is_refusal`: ``NO_ANSWER`` as a word in any case, or the whole
   text is "no answer"; the rule and why are in :mod:`truthbase.cite.refusal`, where the parser
   below this stage can use it, and it is re-exported here), or
2. nothing is left of the text once the dropped markers and tags are removed
   (:func:`answer_refused`), or
3. the extractive answerer has too little to say (:func:`extractive_refuses`): no candidate
   sentence, a named term of the question that no source mentions, a kind of value the
   question asks for (a price, a version, a date: :mod:`.slots`) that no sentence close to the
   best holds ("How much does certification cost?" over passages about certification that
   name no price), or an answer probability
   of the refusal model (:mod:`.refusal_model`: one logistic over a few features of the best
   sentence and the sources, coefficients ``extractive.refusal``, fitted across the dev sets
   by leave-one-set-out, docs/evals/refusal-model.md) below ``extractive.threshold``; it then
   writes ``NO_ANSWER`` and rule 1 applies.

4. a follow-up asks beyond what the cited passages say (:func:`follow_up_refuses`): the share
   of the words it adds to the earlier turns (:attr:`truthbase.turns.Resolution.new_words`)
   that occur in the passages its answer sentences come from is below
   ``extractive.follow_up_new_support``. "How many example problems does that catalog
   contain?" after a turn about the catalog must not be answered by a passage about the
   catalog that says nothing of what it contains: the inherited topic supports the passage,
   not the question.

Weak. A refusal of the refusal model or of the asked-slot rule (rule 3) whose best support is
still at least ``extractive.weak_threshold`` (and with no named term missing) is *weak*
(:func:`extractive_outcome`): the documents may not answer the question, so no claim is made
and nothing is verified, but the closest passages are worth showing. It counts as refused
everywhere (``refused`` stays true; ``outcome`` says weak).

Agent fallback. In agent mode the model's answer stands only when it refuses or at least one of
its citations is ``supported`` (:func:`model_answer_stands`); otherwise the extractive agent
answers, so an answer the book does not back is never shown as the book's content.

Support thresholds. A citation's claim is supported by its quote when
:func:`truthbase.cite.resolve.claim_support` says so: the checks of :mod:`truthbase.cite.support`
with their thresholds :data:`MIN_COVERAGE` and :data:`MIN_SCORE`, here re-exported; *why a
citation is verified or supported* is decided in
:mod:`truthbase.cite.resolve`, the one place, for every mode. The extractive refusal model is the
setting ``extractive.refusal``, its threshold ``extractive.threshold``.

Modes. :func:`resolve_mode` (``ask``'s pipeline modes) and :func:`resolve_chat_mode` (the chat
endpoint and ``ask --mode``, with ``auto`` and ``agent``) check a requested mode against the
settings; :mod:`truthbase.modes` runs the chosen one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from ..cite.refusal import NO_ANSWER, is_refusal
from ..cite.support import MIN_COVERAGE, MIN_SCORE
from ..config import ExtractiveSettings, LLMSettings
from ..errors import InvalidInput
from ..records import (
    ANSWER_MODES,
    CHAT_MODES,
    AnswerMode,
    Citation,
    ResolvedMode,
)
from .refusal_model import RefusalFeatures, answer_probability
from .slots import Slot

__all__ = [
    "MIN_COVERAGE",
    "MIN_SCORE",
    "NO_ANSWER",
    "LLMNotConfigured",
    "Outcome",
    "answer_outcome",
    "answer_probability",
    "answer_refused",
    "extractive_outcome",
    "extractive_refuses",
    "follow_up_refuses",
    "is_refusal",
    "model_answer_stands",
    "resolve_chat_mode",
    "resolve_mode",
]

#: What an answer amounts to: answered, refused, or weak (a refusal with close passages).
Outcome = Literal["answered", "weak", "refused"]


class LLMNotConfigured(InvalidInput):
    """``--mode llm`` (or an LLM stage) asked for without ``llm.base_url``."""


def answer_refused(text_refuses: bool, rendered: str) -> bool:
    """Rules 1 and 2: the text refuses, or nothing is left once dropped markers are removed."""
    return text_refuses or not rendered.strip()


def extractive_refuses(
    has_candidates: bool,
    missing_terms: Sequence[str],
    probability: float,
    threshold: float,
    unfilled_slot: Slot | None = None,
) -> bool:
    """Rule 3: whether the extractive answerer writes NO_ANSWER (see the module docstring);
    ``probability``: the refusal model's (:func:`answer_probability`); ``unfilled_slot``: the
    kind of value the question asks for that no sentence close to the best holds."""
    return (
        not has_candidates
        or bool(missing_terms)
        or unfilled_slot is not None
        or probability < threshold
    )


def follow_up_refuses(new_words_held: float | None, minimum: float) -> bool:
    """Rule 4: whether a follow-up is refused because the cited passages hold less than
    ``minimum`` of the words it adds (None: it adds none, nothing to check)."""
    return new_words_held is not None and new_words_held < minimum


def extractive_outcome(
    has_candidates: bool,
    missing_terms: Sequence[str],
    features: RefusalFeatures,
    settings: ExtractiveSettings,
    unfilled_slot: Slot | None = None,
) -> Outcome:
    """Rule 3 with the weak band: answered, weak (refused by the model or for an unfilled slot,
    but the best support is at least ``weak_threshold`` and no named term is missing) or
    refused."""
    probability = answer_probability(features, settings.refusal)
    if not extractive_refuses(
        has_candidates, missing_terms, probability, settings.threshold, unfilled_slot
    ):
        return "answered"
    if has_candidates and not missing_terms and features.support >= settings.weak_threshold:
        return "weak"
    return "refused"


def answer_outcome(refused: bool, info: dict[str, object]) -> Outcome:
    """The outcome of a settled answer: the answerer's weak refusal stays weak."""
    if not refused:
        return "answered"
    return "weak" if info.get("outcome") == "weak" else "refused"


def model_answer_stands(refused: bool, citations: Iterable[Citation]) -> bool:
    """Agent mode: the model's answer stands when it refuses or cites a supported passage."""
    return refused or any(c.supported for c in citations)


def resolve_mode(mode: str | None, llm: LLMSettings) -> AnswerMode:
    """``mode`` checked against the settings; None picks llm when an LLM is configured."""
    if mode is None:
        return "llm" if llm.base_url is not None else "extractive"
    if mode == "extractive":
        return "extractive"
    if mode == "llm":
        if llm.base_url is None:
            raise LLMNotConfigured(
                "--mode llm needs an LLM: set TRUTHBASE_LLM__BASE_URL and TRUTHBASE_LLM__MODEL "
                "(or [llm] base_url and model in truthbase.toml)"
            )
        return "llm"
    raise InvalidInput(f"unknown answer mode {mode!r}: use one of {', '.join(ANSWER_MODES)}")


def resolve_chat_mode(mode: str | None, llm: LLMSettings) -> ResolvedMode:
    """``mode`` checked against the settings. ``auto`` (or None) is :func:`resolve_mode`'s
    choice; ``agent`` needs no LLM (the extractive agent answers without one); ``llm`` without
    one raises :class:`LLMNotConfigured`."""
    if mode is None or mode == "auto":
        return resolve_mode(None, llm)
    if mode == "agent":
        return "agent"
    if mode in ("extractive", "llm"):
        return resolve_mode(mode, llm)
    raise InvalidInput(f"unknown answer mode {mode!r}: use one of {', '.join(CHAT_MODES)}")
