"""The support check of every citation: the optional model judge after the deterministic checks
(:mod:`truthbase.cite.support`, :mod:`truthbase.llm.judge`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Section as _Section

__all__ = ["JUDGE_CHOICES", "JudgeChoice", "SupportSettings"]

#: Whether the configured chat model judges entailment after the deterministic support checks
#: (``support.judge``): never, when a chat model is configured, or always (an error without one).
JudgeChoice = Literal["off", "auto", "llm"]
JUDGE_CHOICES: tuple[JudgeChoice, ...] = ("off", "auto", "llm")


class SupportSettings(_Section):
    """The support check of every citation (truthbase.cite.support): the deterministic checks,
    and the optional model judge after them (truthbase.llm.judge)."""

    judge: JudgeChoice = Field(
        default="off",
        description="Ask the chat model, once per citation that passed the deterministic "
        "vetoes, whether the quote entails the claim: 'off', 'auto' (when llm.base_url is "
        "set) or 'llm' (required: an error without a chat model). The vetoes always override "
        "it; a judge failure or timeout leaves the deterministic verdict.",
    )
    judge_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Timeout of one judge call; past it the deterministic verdict stands.",
    )
    # Chosen by cross-validation (5 folds of quotes, 5 seeds) on claims-dev.json with the local
    # Qwen2.5-Coder-1.5B: docs/evals/claims-judge.md.
    judge_min_p: float = Field(
        default=0.316,
        ge=0.0,
        le=1.0,
        description="Where the chat server gives log-probabilities, a claim is entailed when "
        "the model's probability of 'true' (against 'false') at its verdict is at least this; "
        "without them the verdict it writes decides.",
    )
    judge_logprobs: bool = Field(
        default=True,
        description="Ask the judge's server for log-probabilities (for judge_min_p). They cost "
        "little on OpenAI or vLLM; llama-cpp-python's server took 8.6 s a verdict with them "
        "against 2.6 s without (Qwen 1.5B, 2 cores): off, the written verdict decides.",
    )
    judge_cache_size: int = Field(
        default=4096,
        ge=0,
        le=1_000_000,
        description="Verdicts kept in memory, keyed by the hash of quote, context, claim and "
        "model name (0: no cache).",
    )
