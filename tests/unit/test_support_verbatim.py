"""A claim cut verbatim out of its quote (session 35): supported only where the cut keeps what
qualifies it. "Users start with the MAP function." is a verbatim part of "Most users start
with the MAP function." and of "If a user has admin rights, the job starts."; the old checker
supported both with a score of 1.0, as it supported a claim of only "...".

Each "caught" test failed on the checker before this change (it gave no reason); each "kept"
test guards a cut that keeps the meaning. The sentences are made up for these tests.
"""

from __future__ import annotations

from tests.helpers.support_checks import codes, reason_of
from truthbase.cite.support import check_support

MAP = "Users start with the MAP function."


def test_a_claim_of_no_words_is_empty() -> None:
    assert codes("...", "Most users start with the MAP function.") == ["empty_claim"]
    assert codes(" – ", "Most users start with the MAP function.") == ["empty_claim"]


def test_a_restricting_word_before_the_part_is_dropped() -> None:
    for word in ("Most", "Some", "Few", "Many", "Usually,"):
        quote = f"{word} users start with the MAP function."
        reason = reason_of(MAP, quote, "hedge_dropped")
        assert reason is not None, quote
        assert reason["page_says"] == word.lower().rstrip(",")


def test_a_hedging_opening_phrase_of_the_sentence_is_dropped() -> None:
    assert codes(MAP, "In most cases, users start with the MAP function.") == ["hedge_dropped"]


def test_a_superlative_or_a_phrase_without_a_hedge_is_kept() -> None:
    assert codes("cited paper is RAPTOR", "The most cited paper is RAPTOR.") == []
    assert codes(MAP, "In practice, users start with the MAP function.") == []
    assert codes(MAP, "Users can start with the MAP function.") == []


def test_a_consequence_cut_from_its_condition_is_not_supported() -> None:
    quote = "If a user has admin rights, the job starts."
    reason = reason_of("The job starts.", quote, "condition_dropped")
    assert reason is not None and reason["page_says"] == "if a user has admin rights"
    unless = "The job starts unless the disk is full."
    after = reason_of("The job starts.", unless, "condition_dropped")
    assert after is not None and after["page_says"] == "unless the disk is full"


def test_the_condition_stated_as_a_fact_is_not_supported() -> None:
    quote = "If the index is full, the job stops."
    assert codes("The index is full.", quote) == ["condition_dropped"]
    reason = reason_of(
        "The index is full.", "The job stops if the index is full.", "condition_dropped"
    )
    assert reason is not None and reason["page_says"] == "if"


def test_a_whole_sentence_or_a_temporal_clause_is_kept() -> None:
    quote = "If a user has admin rights, the job starts. Most users start with the MAP function."
    assert check_support("If a user has admin rights, the job starts.", quote).verbatim
    assert check_support("Most users start with the MAP function.", quote).verbatim
    assert codes("The job starts.", "The job starts when the user logs in.") == []


def test_a_part_the_quote_also_states_unqualified_is_kept() -> None:
    quote = "Most users start with the MAP function. Users start with the MAP function in 2.0."
    assert check_support(MAP, quote).supported


def test_ordinary_sentences_around_a_verbatim_part_qualify_nothing() -> None:
    # A month, a clause of its own before a conjunction, "certain" as "sure", a participle, an
    # English "falls", "if any": none restricts the part cut out of them (a review's cases).
    kept = [
        ("The company released version 2.", "In May 2020, the company released version 2."),
        ("The system encrypts all data.", "Most importantly, the system encrypts all data."),
        ("TruthBase stores the full text.", "Unlike most engines, TruthBase stores the full text."),
        ("The model ignores it.", "The dataset contains some noise and the model ignores it."),
        (
            "The upgrade removes the old index.",
            "It is certain that the upgrade removes the old index.",
        ),
        ("The server returns the data", "The server returns the data provided by the client."),
        (
            "Prevention programs reduce them.",
            "Falls are common, and prevention programs reduce them.",
        ),
        ("Remove duplicates.", "Remove duplicates, if any."),
        ("The data is deleted.", "Users may ask for it, and the data is deleted."),
    ]
    for claim, quote in kept:
        assert codes(claim, quote) == [], (claim, quote)
