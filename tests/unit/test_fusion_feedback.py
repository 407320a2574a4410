"""Pseudo-relevance feedback: expansion words, the expanded FTS5 query, and its place in fusion."""

from __future__ import annotations

import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truthbase.config import RetrievalSettings
from truthbase.retrieve.feedback import expansion_terms, feedback_query, feedback_words
from truthbase.retrieve.fts_query import build_fts_query
from truthbase.retrieve.hybrid import PRF_ARM, ArmRankings, fuse


def test_feedback_words_drop_stop_words_numbers_and_short_words() -> None:
    assert feedback_words("The 150 nodes had 4% of an LLM hallucination, e.g. in it") == [
        "nodes",
        "llm",
        "hallucination",
    ]


def test_hand_computed_weights() -> None:
    feedback = ["alpha beta beta", "beta gamma"]
    pool = [*feedback, "delta", "epsilon"]
    # pool df: alpha 1, beta 2, gamma 1; P = 4
    alpha = 1 / 3 * 1 * math.log(5 / 1)
    beta = 2 / 3 * 1 * math.log(5 / 2) + 1 / 2 * 0.5 * math.log(5 / 2)
    gamma = 1 / 2 * 0.5 * math.log(5 / 1)
    expected = sorted({"alpha": alpha, "beta": beta, "gamma": gamma}.items(), key=lambda i: -i[1])
    got = expansion_terms("question", feedback, pool, terms=3, max_pool_df=1.0)
    assert got == [word for word, _ in expected]


def test_question_words_and_common_pool_words_are_left_out() -> None:
    feedback = ["risk hallucination summaries", "risk hallucination nodes"]
    pool = [*feedback, "risk management", "risk tolerance", "other text"]
    got = expansion_terms("How often did summaries fail?", feedback, pool, terms=5, max_pool_df=0.5)
    assert "summaries" not in got  # the question's own word
    assert "risk" not in got  # in 4 of 5 pool texts: the topic, not a bridge
    assert got[0] == "hallucination"


def test_cap_ties_and_empty_inputs() -> None:
    assert expansion_terms("q", ["zeta alpha"], ["zeta alpha"], terms=1, max_pool_df=1.0) == [
        "alpha"
    ]
    assert expansion_terms("q", ["alpha"], ["alpha"], terms=0, max_pool_df=1.0) == []
    assert expansion_terms("q", [], ["alpha"], terms=3, max_pool_df=1.0) == []
    assert expansion_terms("q", ["the of and"], ["x"], terms=3, max_pool_df=1.0) == []


@pytest.mark.parametrize(("terms", "df"), [(-1, 0.5), (3, 0.0), (3, 1.5)])
def test_bad_arguments(terms: int, df: float) -> None:
    with pytest.raises(ValueError):
        expansion_terms("q", ["a"], ["a"], terms=terms, max_pool_df=df)


def test_feedback_query() -> None:
    assert feedback_query('"risk"', []) == '"risk"'
    # each word as its terms; one that repeats a term of the question counts again in BM25, as
    # when FTS5 stemmed "risks" itself
    assert feedback_query('"risk"', ["hallucination", "nodes", "risks"]) == (
        '"risk" OR "hallucin" OR "node" OR "risk"'
    )
    # each word in each language, each distinct term once
    assert feedback_query('"risk"', ["Teilmengen", "risk"], ["de", "en"]) == (
        '"risk" OR "teilmeng" OR "teilmengen" OR "risk"'
    )
    assert feedback_query('"risk"', ["营业收入"], ["zh"]) == '"risk"'


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=200))
def test_expanded_query_never_raises_in_fts5(question: str, feedback: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='ascii')")
    db.execute("INSERT INTO t(text) VALUES ('some text about risk')")
    base = build_fts_query(question)
    if base is None:
        return
    words = expansion_terms(question, [feedback], [feedback], terms=10, max_pool_df=1.0)
    db.execute("SELECT rowid FROM t WHERE t MATCH ?", (feedback_query(base, words),)).fetchall()


def _arms() -> ArmRankings:
    return ArmRankings(
        ranked={"fts": [1, 2, 3], "dense": [2, 4], PRF_ARM: [5, 1]},
        scores={},
    )


def test_feedback_list_joins_hybrid_fusion_only() -> None:
    config = RetrievalSettings(rrf_k=1, fts_weight=1, dense_weight=0.5, prf_weight=0.5)
    hybrid = fuse(_arms(), config, 10, "hybrid")
    assert {item for item, _, _ in hybrid} == {1, 2, 3, 4, 5}
    scores = {item: score for item, score, _ in hybrid}
    assert scores[5] == pytest.approx(0.5 / 2)
    assert scores[1] == pytest.approx(1 / 2 + 0.5 / 3)
    assert [item for item, _, _ in fuse(_arms(), config, 10, "fts")] == [1, 2, 3]
    assert [item for item, _, _ in fuse(_arms(), config, 10, "dense")] == [2, 4]


def test_zero_feedback_weight_is_off() -> None:
    config = RetrievalSettings(rrf_k=1, fts_weight=1, dense_weight=0.5, prf_weight=0)
    assert 5 not in {item for item, _, _ in fuse(_arms(), config, 10, "hybrid")}
