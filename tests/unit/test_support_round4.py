"""The checks of issue 24's fourth round (session 32): a quote read with the sentence it was cut
from, a two-word name whose other word only the context has, an opposite the claim pairs with
the quote's word, a comparison where the quote compares nothing, a model name dropped from its
slot, and "not only" read as "only".

Each "caught" test failed on the checker before this round (it said ``supported``, or named no
such reason), and each "kept" test guards a faithful claim the new check must leave alone. The
sentences are made up for these tests (not from claims-dev.json).
"""

from __future__ import annotations

import pytest

from truthbase.cite.lexicon import DEFAULT_WORDNET
from truthbase.cite.support import check_support
from truthbase.cite.terms import quote_sentence

needs_wordnet = pytest.mark.skipif(
    not (DEFAULT_WORDNET / "index.noun").is_file(),
    reason="WordNet (Debian wordnet-base) is not installed: scripts/install.sh installs it",
)


def _reason(claim: str, quote: str, code: str, **kwargs: str) -> dict[str, str] | None:
    check = check_support(claim, quote, **kwargs)
    found = [r for r in check.reasons if r.code == code]
    if found:
        assert not check.supported
        return found[0].to_json()
    return None


# -- a quote cut out of its sentence (entity swap) ------------------------------------------------

BENCH = (
    "The lab tested two benches, HarborBench and CliffBench, on the same machines. "
    "For HarborBench, we use the night subset, consisting of 2,310 noisy recordings whose "
    "speakers whisper. CliffBench has no such subset."
)
FRAGMENT = "consisting of 2,310 noisy recordings whose speakers whisper"


def test_the_sentence_a_fragment_was_cut_from_is_found() -> None:
    assert quote_sentence(FRAGMENT, BENCH).startswith("For HarborBench, we use the night subset")
    assert quote_sentence(FRAGMENT, "") == FRAGMENT
    assert quote_sentence("nothing like it", BENCH) == "nothing like it"


@needs_wordnet
def test_a_fragment_given_to_the_other_name_of_its_page_is_caught() -> None:
    claim = "For CliffBench, the lab uses a night subset of 2,310 noisy recordings of whispering."
    found = _reason(claim, FRAGMENT, "term_substituted", context=BENCH)
    assert found is not None
    assert found["claim_says"] == "CliffBench" and found["page_says"] == "HarborBench"


@needs_wordnet
def test_a_fragment_given_to_its_own_name_is_kept() -> None:
    claim = "HarborBench's night subset has 2,310 noisy recordings of whispering speakers."
    check = check_support(claim, FRAGMENT, context=BENCH)
    assert not [r for r in check.reasons if r.code.startswith("term_")], check.reasons


# -- a two-word name whose other word only the context has (relation) ------------------------------

PLANS = (
    "A Repair Plan lists the faults a crew must fix first. "
    "A Season Plan is a schedule of inspections shared by the crews of one district. "
    "It is revised every spring."
)
SEASON = "A Season Plan is a schedule of inspections shared by the crews of one district."


@needs_wordnet
def test_a_sibling_name_from_outside_the_quote_is_caught() -> None:
    claim = "A Season Plan is made by merging the Repair Plans of the crews of one district."
    found = _reason(claim, SEASON, "term_outside_quote", context=PLANS)
    assert found is not None
    assert found["claim_says"] == "Repair Plans" and found["page_says"] == "Season Plan"


@needs_wordnet
def test_a_name_the_quote_leaves_to_its_context_is_kept() -> None:
    # "It" of the quote is the Season Plan: naming it is no sibling term
    quote = "It is revised every spring."
    claim = "The Season Plan is revised every spring."
    assert _reason(claim, quote, "term_outside_quote", context=PLANS) is None
    assert _reason("A Season Plan is revised every spring.", quote, "term_outside_quote") is None


# -- an opposite the claim pairs with the quote's word (entity swap) -------------------------------

AUDIENCE = "Night-shift nurses are the primary readers of the ward handbook."


@needs_wordnet
def test_an_opposite_the_page_never_says_is_caught() -> None:
    claim = (
        "Ward managers are the primary readers of the handbook, with night-shift nurses as "
        "secondary readers."
    )
    found = _reason(claim, AUDIENCE, "opposite_added")
    assert found is not None
    assert found["claim_says"] == "secondary" and found["page_says"] == "primary"


@needs_wordnet
def test_an_opposite_the_page_says_is_kept() -> None:
    claim = (
        "Night-shift nurses are the primary readers of the ward handbook, and ward managers "
        "secondary ones."
    )
    context = AUDIENCE + " Ward managers are its secondary readers."
    assert _reason(claim, AUDIENCE, "opposite_added", context=context) is None
    assert (
        _reason(
            "The handbook is written primarily for night-shift nurses.", AUDIENCE, "opposite_added"
        )
        is None
    )


# -- a comparison where the quote compares nothing (relation) --------------------------------------

LOAD = (
    "Load refers to the combined measure of a bridge's traffic weight and the wind pressure on it."
)


@needs_wordnet
def test_a_comparison_the_quote_does_not_make_is_caught() -> None:
    claim = (
        "Load is the traffic weight at which the wind pressure on a bridge will exceed a set level."
    )
    found = _reason(claim, LOAD, "comparison_added")
    assert found is not None
    assert found["claim_says"] == "exceed"


@needs_wordnet
def test_a_comparison_of_a_quote_that_compares_is_left_to_the_other_checks() -> None:
    quote = "The new valve shows improvements of 4% over the old one and 7% over the copper one."
    claim = "The new valve beats the copper one by 7% and the old one by 4%."
    assert _reason(claim, quote, "comparison_added") is None


# -- a name with digits dropped from its slot (entity swap) ----------------------------------------

JUDGE = "The checker reaches an agreement above 80% with RX-7-based ratings"


@needs_wordnet
def test_a_model_name_dropped_for_words_the_page_lacks_is_caught() -> None:
    claim = "The checker reaches more than 80% agreement with the ratings of expert surveyors."
    found = _reason(claim, JUDGE, "term_substituted")
    assert found is not None
    assert "rx-7-based" in found["page_says"]


@needs_wordnet
def test_a_bare_acronym_spelled_out_is_kept() -> None:
    quote = "Later work trains an LM to write calendar entries for booked rooms."
    claim = "Later work trains a model to produce calendar entries for booked rooms."
    assert _reason(claim, quote, "term_substituted") is None
    claim = "The checker agrees with RX-7's ratings more than 80% of the time."
    assert _reason(claim, JUDGE, "term_substituted") is None


# -- "not only" read as "only" (scope) -------------------------------------------------------------

LINES = "Lines that cut a side of the square (so not only a corner) also cut a second side."
LINIEN = (
    "Geraden, die eine Seite des Quadrats (also nicht nur eine Ecke) schneiden, schneiden auch "
    "eine zweite Seite."
)


def test_only_for_not_only_is_caught() -> None:
    found = _reason(
        "A line cuts a second side even if it touches only a corner.", LINES, "not_only_dropped"
    )
    assert found is not None
    assert found["claim_says"] == "only" and found["page_says"] == "not only"
    claim = "Eine Gerade schneidet eine zweite Seite, auch wenn sie nur eine Ecke berührt."
    assert _reason(claim, LINIEN, "not_only_dropped") is not None


def test_not_only_restated_is_kept() -> None:
    claim = "A line that cuts a side, not only a corner, also cuts a second side."
    assert _reason(claim, LINES, "not_only_dropped") is None
    # "only" about something else
    claim = "Only lines that cut a side of the square also cut a second one."
    assert _reason(claim, LINES, "not_only_dropped") is None
