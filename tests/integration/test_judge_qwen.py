"""The support judge (llm/judge.py) with a real small model: Qwen2.5-Coder-1.5B-Instruct behind
llama.cpp's server (``slow``: a judge call takes seconds to minutes on a shared 2-core host).

The prompt must get a strict verdict out of a 1.5B model (a reply that is not exactly the JSON
object is a judge failure, and a judge that always fails is no judge), and the model must tell
a claim the quote states in other words from one it does not state at all. Its accuracy on the
hand-written claims is measured, not tested: docs/evals/claims-judge.md.
"""

from __future__ import annotations

import pytest

from tests.helpers.llm_server import LlamaServer, llama_cpp_missing
from truthbase.cite.support import check_support
from truthbase.config import SupportSettings
from truthbase.llm import OpenAIChatModel
from truthbase.llm.judge import JUDGE_MAX_TOKENS, ModelJudge

MISSING = llama_cpp_missing()
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""), pytest.mark.slow]

QUOTE = (
    "RAPTOR recursively embeds, clusters, and summarizes chunks of text, constructing a tree "
    "with differing levels of summarization from the bottom up."
)


def test_qwen15_gives_strict_verdicts_that_tell_a_paraphrase_from_an_unrelated_claim(
    qwen15: LlamaServer,
) -> None:
    model = OpenAIChatModel(
        qwen15.model, base_url=qwen15.base_url, api_key="k", max_tokens=JUDGE_MAX_TOKENS
    )
    judge = ModelJudge(model, timeout=600, min_p=SupportSettings().judge_min_p)
    kept = judge("RAPTOR builds a tree of summaries from the bottom up.", QUOTE, "")
    other = judge("RAPTOR was trained on ten thousand medical records in 2019.", QUOTE, "")
    print(f"\nparaphrase: {kept}\nunrelated: {other}")
    assert not kept.failed, kept.failure
    assert not other.failed, other.failure
    assert kept.entailed is True
    assert other.entailed is False
    # The server gives log-probabilities: the verdict is the model's probability of "true".
    assert kept.p_entailed is not None and other.p_entailed is not None
    assert kept.p_entailed > SupportSettings().judge_min_p > other.p_entailed
    # Through the policy: the judge is asked (no veto), and the cache answers the second time.
    check = check_support(
        "RAPTOR builds a tree of summaries from the bottom up.", QUOTE, judge=judge
    )
    assert check.judgement is not None and check.judgement.cached and check.supported
