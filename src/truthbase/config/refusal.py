"""The extractive answerer's refusal model: the coefficients of one logistic model.

The model and its features are :mod:`truthbase.answer.refusal_model`; the decision is
:func:`truthbase.answer.policy.extractive_outcome`; the defaults are the values fitted by
``truthbase eval refusal`` on the pooled dev sets (docs/evals/refusal-model.md).
"""

from __future__ import annotations

from pydantic import Field

from .base import Section

__all__ = ["RefusalModelSettings"]

_LIMIT = 1000.0


def _weight(default: float, feature: str) -> float:
    return Field(
        default=default,
        ge=-_LIMIT,
        le=_LIMIT,
        description=f"Refusal model: the coefficient of {feature}.",
    )


class RefusalModelSettings(Section):
    """The answer logit of an extractive answer is ``intercept + sum(w_f * f)`` over the
    features f of :class:`truthbase.answer.refusal_model.RefusalFeatures`; the answer
    probability is its logistic, compared with ``extractive.threshold``."""

    # The defaults: fitted by `truthbase eval refusal` on dev.json and capabilities-dev.json
    # with the document prior on (L2 10, chosen by the pooled left-out objective; refitted
    # after the prior changed the fused scores the retrieval features read;
    # docs/evals/refusal-model.md).
    intercept: float = Field(
        default=-3.8317,
        ge=-_LIMIT,
        le=_LIMIT,
        description="Refusal model: the answer logit when every feature is 0.",
    )
    w_support: float = _weight(3.4797, "the best sentence's support score")
    w_lexical: float = _weight(1.6734, "the share of the question's idf mass in the best sentence")
    w_context: float = _weight(
        0.9362, "the highest share of the question's idf mass in the passage of a close sentence"
    )
    w_retrieval: float = _weight(1.6625, "the fused retrieval score of the top source")
    w_margin: float = _weight(
        -2.5149, "the top source's retrieval margin to the next, as a share of its score"
    )
    w_agreeing: float = _weight(
        -0.1531, "the number of sources (at most 4) holding a sentence close to the best one"
    )
