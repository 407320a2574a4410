"""The parts of a question that asks several things at once.

"What does RAPTOR stand for, and how does it build its tree?" asks two things; the sentence that
answers one rarely answers the other, so the extractive answerer quotes a sentence per part
(:meth:`truthbase.answer.extractive.ExtractiveAnswerer.choose`). A question splits where a new
question begins: after a question mark or a semicolon, and at "and" (or "as well as", "also")
followed by a question word or an auxiliary verb ("... and how does it ...", "... and is
it ..."). A part must name at least :data:`MIN_PART_TERMS` content terms of its own, or the
question is one part ("Who are Bingley and Darcy?" is one question about two people).
"""

from __future__ import annotations

import re

from ..text.vocabulary import terms

__all__ = ["MIN_PART_TERMS", "question_parts"]

#: Content terms (stemmed, stop words out) a part needs to stand as a question of its own.
MIN_PART_TERMS = 2

_OPENERS = (
    "what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|can|could|"
    "should|would|will|has|have|had"
)
_BOUNDARY = re.compile(
    r"\?\s+|;\s*|,?\s+(?:and|as well as|also)\s+(?=(?:" + _OPENERS + r")\b)",
    re.IGNORECASE,
)


def question_parts(question: str) -> list[str]:
    """The parts of ``question``, in order; ``[question]`` when it asks one thing."""
    pieces = [p.strip(" ,?") for p in _BOUNDARY.split(question.strip())]
    pieces = [p for p in pieces if p]
    if len(pieces) < 2 or any(len(set(terms(p))) < MIN_PART_TERMS for p in pieces):
        return [question]
    return pieces
