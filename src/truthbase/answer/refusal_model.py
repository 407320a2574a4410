"""The refusal model of the extractive answerer: a few features of what it found, one logistic.

One support score does not tell an answerable question from an unanswerable one well on
questions nobody tuned for: a close sentence in a passage retrieval barely preferred, or a
sentence that holds few of the question's rare words, looks as good as a real answer. So the
decision weighs several features of the candidates and the sources (:class:`RefusalFeatures`),
each in [0, 1] except ``agreeing`` (0 to 4):

- ``support``: the best sentence's support score, :func:`support_score` with the model's own
  weights (``support_*`` of :class:`truthbase.config.RefusalModelSettings`, the scale its
  coefficients were fitted on; the answerer's ``extractive.w_*`` only choose which sentences
  an answer cites, so tuning that choice leaves the decision to answer as it was),
- ``lexical``: the share of the question's idf mass (stemmed content words) in that sentence,
- ``context``: the highest such share in the passage of a sentence whose support is at least
  ``keep_ratio`` of the best (the same whether all the candidates were scored or only the
  contenders, :meth:`.extractive.ExtractiveAnswerer.contenders`),
- ``retrieval``: the fused retrieval score of the top source,
- ``margin``: how far the top source's score is above the next one's, as a share of it,
- ``agreeing``: how many sources hold a sentence whose support is at least ``keep_ratio`` of
  the best (at most :data:`MAX_AGREEING`).

:func:`answer_logit` is ``intercept + sum(w_f * f)`` with the coefficients of
:class:`truthbase.config.RefusalModelSettings`; :func:`answer_probability` is its logistic. The
decision against ``extractive.threshold`` is :func:`truthbase.answer.policy.extractive_outcome`'s;
the coefficients are fitted by :func:`truthbase.eval.refusal.fit_refusal_model` (``truthbase eval
refusal``). Pure: plain numbers in, plain numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from ..config import RefusalModelSettings

__all__ = [
    "FEATURES",
    "MAX_AGREEING",
    "RefusalFeatures",
    "Scored",
    "Weights",
    "answer_logit",
    "answer_probability",
    "refusal_features",
    "support_score",
    "support_weights",
    "weighted_score",
]

#: The features, in the order of the model's coefficients (``w_<name>``).
FEATURES = ("support", "lexical", "context", "retrieval", "margin", "agreeing")
#: ``agreeing`` counts at most this many sources.
MAX_AGREEING = 4


class Scored(Protocol):
    """What the features read of a candidate sentence (:class:`.extractive.Candidate`)."""

    @property
    def n(self) -> int: ...  # the source's number: its retrieval rank
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def cosine(self) -> float: ...
    @property
    def lexical(self) -> float: ...
    @property
    def context(self) -> float: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalFeatures:
    """The features of one answer (see the module docstring)."""

    support: float
    lexical: float
    context: float
    retrieval: float
    margin: float
    agreeing: float

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 6) for k, v in asdict(self).items()}

    def values(self) -> tuple[float, ...]:
        """The features in :data:`FEATURES` order."""
        return tuple(float(getattr(self, name)) for name in FEATURES)


#: The four weights of a sentence's score: cosine, lexical, context, rank.
Weights = tuple[float, float, float, float]


def weighted_score(
    weights: Weights, cosine: float, lexical: float, context: float, rank: int
) -> float:
    """``w_cosine * cosine + w_lexical * lexical + w_context * context + w_rank / rank``, added
    in that order: the answerer's score, its bounds (cosine 1.0) and the support feature are
    this one sum, so they are the same floats where their weights agree."""
    w_cosine, w_lexical, w_context, w_rank = weights
    return w_cosine * cosine + w_lexical * lexical + w_context * context + w_rank / rank


def support_weights(model: RefusalModelSettings) -> Weights:
    """The model's own weights of the support feature (the scale it was fitted on)."""
    return (model.support_cosine, model.support_lexical, model.support_context, model.support_rank)


def support_score(candidate: Scored, model: RefusalModelSettings) -> float:
    """A sentence's support on the model's scale."""
    return weighted_score(
        support_weights(model), candidate.cosine, candidate.lexical, candidate.context, candidate.n
    )


def refusal_features(
    candidates: Sequence[Scored],
    source_scores: Sequence[float],
    keep_ratio: float,
    model: RefusalModelSettings,
) -> RefusalFeatures:
    """The features of ``candidates`` (in any order) and the retrieval scores of the sources
    (in rank order); all zero without candidates. The best sentence is the one of highest
    :func:`support_score`, the earlier source and span on a tie."""
    top = source_scores[0] if source_scores else 0.0
    if len(source_scores) >= 2 and top > 0:
        margin = max(0.0, min(1.0, (top - source_scores[1]) / top))
    else:
        margin = 1.0 if top > 0 else 0.0
    if not candidates:
        return RefusalFeatures(
            support=0.0, lexical=0.0, context=0.0, retrieval=top, margin=margin, agreeing=0.0
        )
    supports = [support_score(c, model) for c in candidates]
    at = min(
        range(len(candidates)),
        key=lambda i: (-supports[i], candidates[i].n, candidates[i].start, candidates[i].end),
    )
    best, best_support = candidates[at], supports[at]
    near = [c for c, s in zip(candidates, supports, strict=True) if s >= keep_ratio * best_support]
    return RefusalFeatures(
        support=best_support,
        lexical=best.lexical,
        context=max(c.context for c in near),
        retrieval=top,
        margin=margin,
        agreeing=float(min(len({c.n for c in near}), MAX_AGREEING)),
    )


def answer_logit(features: RefusalFeatures, model: RefusalModelSettings) -> float:
    """``intercept + sum(w_f * f)``: above 0, the model would rather answer."""
    return model.intercept + sum(
        float(getattr(model, f"w_{name}")) * value
        for name, value in zip(FEATURES, features.values(), strict=True)
    )


def answer_probability(features: RefusalFeatures, model: RefusalModelSettings) -> float:
    """The logistic of :func:`answer_logit`: how likely the answer stands, by the model."""
    z = answer_logit(features, model)
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)
