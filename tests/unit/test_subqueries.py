"""Splitting compound questions into sub-queries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from truthbase.retrieve.subqueries import MAX_SUBQUERIES, split_question


def test_two_questions_joined_by_and_are_split_with_names_carried() -> None:
    assert split_question("Which RAPTOR method won on QASPER, and what is its main drawback?") == [
        "Which RAPTOR method won on QASPER",
        "RAPTOR QASPER what is its main drawback",
    ]


def test_semicolon_splits_too() -> None:
    assert split_question("What does GV.OC-01 require; how is Tier 4 defined?") == [
        "What does GV.OC-01 require",
        "GV.OC-01 how is Tier 4 defined",
    ]


def test_a_name_already_in_the_clause_is_not_repeated() -> None:
    subs = split_question("What does Self-RAG predict, and how does Self-RAG train its critic?")
    assert subs[1] == "how does Self-RAG train its critic"


def test_and_between_nouns_does_not_split() -> None:
    assert split_question("What are the costs and benefits of the collapsed tree?") == []
    assert split_question("How do MAP and MEASURE relate?") == []


def test_a_simple_question_gives_none() -> None:
    assert split_question("What is a CSF Community Profile?") == []
    assert split_question("") == []


def test_short_fragments_are_not_sub_queries() -> None:
    assert split_question("What is it and why?") == []


@given(st.text(max_size=200))
def test_never_raises_and_is_bounded(question: str) -> None:
    subs = split_question(question)
    assert len(subs) <= MAX_SUBQUERIES
    assert len(subs) != 1
