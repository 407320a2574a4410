"""The optional model judge of the support policy: its Protocol, its verdict, and the one rule
that combines it with the deterministic checks.

A :class:`Judge` is asked whether a quote (with its context) entails a claim; it is injected
into :func:`truthbase.cite.support.check_support` by whoever holds a chat model
(:mod:`truthbase.llm.judge` implements it over the configured one), so that this package stays
pure. :func:`apply_judgement` is the rule (issue 24, item 4):

- the deterministic vetoes always override the judge: a vetoed check is never judged;
- a verbatim claim (the quote's own words, no veto) is supported without asking;
- otherwise the judge decides: ``entailed`` supports the claim (a coverage or similarity below
  its threshold does not stand against it: those scores are what the judge improves on),
  ``not entailed`` is the reason ``judge_not_entailed`` with the claim's departing words;
- a judge failure (a timeout, an error, a reply that is not the strict verdict) leaves the
  deterministic verdict as it is, the failure recorded on the check.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from ..errors import TruthBaseError
from .model import Judgement, Reason, SupportCheck

__all__ = ["JUDGE_NOT_ENTAILED", "Judge", "Judgement", "apply_judgement", "ask_judge"]

#: The reason a claim the judge finds not entailed gets.
JUDGE_NOT_ENTAILED = "judge_not_entailed"


class Judge(Protocol):
    """Whether ``quote`` (with ``context``, the source text around it) entails ``claim``.

    Returns a failed :class:`Judgement` (``entailed`` None) rather than raising; a
    :class:`~truthbase.errors.TruthBaseError` it raises anyway counts as a failure too."""

    @property
    def name(self) -> str: ...

    def __call__(self, claim: str, quote: str, context: str) -> Judgement: ...


def ask_judge(judge: Judge, claim: str, quote: str, context: str) -> Judgement:
    """The judge's verdict; a TruthBaseError it raises (a provider failure) is a failed one."""
    try:
        return judge(claim, quote, context)
    except TruthBaseError as exc:
        return Judgement(entailed=None, judge=judge.name, failure=f"{type(exc).__name__}: {exc}")


def apply_judgement(check: SupportCheck, judgement: Judgement) -> SupportCheck:
    """``check`` (not vetoed) as the judge's verdict leaves it: see the module doc."""
    if judgement.entailed is None:
        return replace(check, judgement=judgement)
    if judgement.entailed:
        return replace(check, supported=True, reasons=(), judgement=judgement)
    words = ", ".join(judgement.departing_words)
    reason = Reason(
        JUDGE_NOT_ENTAILED,
        f"the model judge ({judgement.judge or 'judge'}) finds that the quote does not "
        "entail the claim",
        claim_says=words,
    )
    kept = tuple(r for r in check.reasons if r.code != JUDGE_NOT_ENTAILED)
    return replace(check, supported=False, reasons=(*kept, reason), judgement=judgement)
