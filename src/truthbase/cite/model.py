"""The records of the support policy: a reason a claim is not supported, and the verdict.

Shared by the checks (:mod:`.support`, :mod:`.vetoes`) and by every caller that turns a verdict
into output, so they sit below both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["THRESHOLD_REASONS", "Judgement", "Reason", "SupportCheck"]

#: The reasons a score below its threshold gives; every other reason is a veto.
THRESHOLD_REASONS = frozenset({"low_coverage", "low_similarity", "low_score"})


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a claim is not supported: a short code and a sentence for a person."""

    code: str
    message: str
    #: The words of the claim that conflict with the page, and the page's words they conflict
    #: with ("85%" / "87%"); empty when the check has no single place to point at.
    claim_says: str = field(default="", kw_only=True)
    page_says: str = field(default="", kw_only=True)

    def __str__(self) -> str:
        """One line for every output that shows reasons as text (ask --json, the API, MCP,
        verify-claim): the two sides of the conflict after the message, when the check has
        them ("the answer says 85% · the page says 87%")."""
        return f"{self.code}: {self.message}{self.conflict_text()}"

    def conflict_text(self) -> str:
        if not (self.claim_says or self.page_says):
            return ""
        sides = []
        if self.claim_says:
            sides.append(f"the answer says {self.claim_says}")
        if self.page_says:
            sides.append(f"the page says {self.page_says}")
        return " (" + " · ".join(sides) + ")"

    def to_json(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message}
        if self.claim_says or self.page_says:
            out |= {"claim_says": self.claim_says, "page_says": self.page_says}
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    """What the judge said: ``entailed`` (None when it failed, with ``failure`` saying why),
    the claim's words that depart from the quote, and the judge's name (its model).

    ``p_entailed``: the model's probability of ``true`` against ``false`` where it wrote the
    verdict (None: the server gave no log-probabilities); where known, ``entailed`` is that
    probability against the setting ``support.judge_min_p``, not the word the model wrote."""

    entailed: bool | None
    departing_words: tuple[str, ...] = ()
    judge: str = ""
    failure: str = ""
    cached: bool = False
    p_entailed: float | None = None

    @property
    def failed(self) -> bool:
        return self.entailed is None

    def to_json(self) -> dict[str, Any]:
        return {
            "entailed": self.entailed,
            "departing_words": list(self.departing_words),
            "judge": self.judge,
            "failure": self.failure or None,
            "cached": self.cached,
            "p_entailed": None if self.p_entailed is None else round(self.p_entailed, 4),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SupportCheck:
    """The verdict of :func:`check_support`: supported exactly when there is no reason."""

    supported: bool
    score: float
    reasons: tuple[Reason, ...] = ()
    verbatim: bool = False
    coverage: float = 0.0
    cosine: float | None = None
    #: The model judge's verdict (:mod:`.judge`), when one was asked.
    judgement: Judgement | None = None

    @property
    def vetoed(self) -> bool:
        """A check other than the score thresholds failed (a veto: no score overrides it)."""
        return any(r.code not in THRESHOLD_REASONS for r in self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "score": round(self.score, 4),
            "verbatim": self.verbatim,
            "coverage": round(self.coverage, 4),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "reasons": [r.to_json() for r in self.reasons],
            "judge": None if self.judgement is None else self.judgement.to_json(),
        }
