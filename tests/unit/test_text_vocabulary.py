"""The shared text vocabulary (truthbase.text.vocabulary): one word rule, one stop-word list and
its two purpose lists, one stemmer, named idf variants."""

from __future__ import annotations

import math

import pytest

from truthbase.text.vocabulary import (
    QUERY_STOP_WORDS,
    STOP_WORDS,
    SUPPORT_STOP_WORDS,
    idf_bm25,
    idf_log1p,
    idf_smoothed,
    idf_table,
    jaccard,
    stem,
    terms,
    weighted_coverage,
    words,
)


def test_purpose_lists_extend_the_one_stop_word_list() -> None:
    assert STOP_WORDS < QUERY_STOP_WORDS
    assert STOP_WORDS < SUPPORT_STOP_WORDS
    # question phrasing is no search term; reporting verbs are no evidence of support
    assert {"describe", "explain", "please"} <= QUERY_STOP_WORDS - SUPPORT_STOP_WORDS
    assert {"says", "using", "two"} <= SUPPORT_STOP_WORDS - QUERY_STOP_WORDS
    assert "risk" not in QUERY_STOP_WORDS | SUPPORT_STOP_WORDS


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("risks", "risk"),
        ("policies", "policy"),
        ("classes", "class"),
        ("processing", "process"),
        ("focus", "focus"),
        ("analysis", "analysis"),
        ("use", "use"),
        ("2048", "2048"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_words_and_terms() -> None:
    assert words("GV.OC-01 risk_level") == ["GV", "OC", "01", "risk", "level"]
    # normalized by the matching rule (case folded), support stop words dropped, stemmed
    assert terms("The Risks it says") == ["risk"]


def test_idf_variants_by_name() -> None:
    assert idf_bm25(10, 0) == pytest.approx(math.log(1 + 10.5 / 0.5))
    assert idf_log1p(10, 2) == pytest.approx(math.log(6.0))
    assert idf_smoothed(9, 10) == pytest.approx(0.0)
    table, unseen = idf_table([["a", "b"], ["a"], ["c"]])
    assert table["a"] < table["b"] == table["c"] < unseen


def test_overlap_scores() -> None:
    idf = {"risk": 2.0, "tier": 1.0}
    assert weighted_coverage(["risk", "tier"], ["risk"], idf, 3.0) == pytest.approx(2 / 3)
    assert weighted_coverage([], ["risk"], idf, 3.0) == 0.0
    assert jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert jaccard([], ["a"]) == 0.0


def test_cjk_runs_give_character_bigrams() -> None:
    """Chinese has no spaces between words: a run gives its bigrams (as the full-text index
    does), so a question and a passage share terms; Latin words and numbers stay whole."""
    assert terms("营业收入是多少") == ["营业", "业收", "收入", "入是", "是多", "多少"]
    assert terms("2018年") == ["2018", "年"]
    assert set(terms("东北电气的营业收入")) & set(terms("营业收入是多少？"))
    assert terms("The risks of AI") == ["risk", "ai"]
