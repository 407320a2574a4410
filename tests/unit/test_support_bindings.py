"""Bindings (issue 24, second round): which number and which direction goes with which term.

A relation slip keeps every word of the page and moves them: the number of one named term given
to another, or "raises" and "lowers" traded between two things. Each test failed on the checker
before these vetoes (every word was on the page, so nothing was said). The sentences are made up
for these tests (not from claims-dev.json).
"""

from __future__ import annotations

from tests.helpers.support_checks import needs_wordnet
from truthbase.cite.lexicon import load_lexicon
from truthbase.cite.support import check_support
from truthbase.cite.vetoes import direction_binding_reasons, number_binding_reasons

LEVELS = "The grades are Bronze (Level 1), Silver (Level 2), and Gold (Level 3)."


def test_a_number_given_to_another_named_term_is_a_role_swap() -> None:
    check = check_support("Level 3 is called Silver and Level 2 is called Gold.", LEVELS)
    swapped = [r for r in check.reasons if r.code == "roles_swapped"]
    assert swapped and not check.supported
    assert swapped[0].claim_says.endswith("3") and swapped[0].page_says.endswith("2")


def test_the_numbers_of_the_page_kept_with_their_terms_pass() -> None:
    assert check_support("Silver is Level 2 and Gold is Level 3.", LEVELS).supported
    # punctuation ends a binding: "Bronze (Level 1), Silver" does not give 1 to Silver
    assert not number_binding_reasons("Level 1 Bronze, Level 2 Silver.", LEVELS, ["Silver"])


def test_two_numbers_equally_near_bind_neither() -> None:
    assert not number_binding_reasons("Level 2 is Silver and Level 3", LEVELS, ["Silver"])


QUOTE = (
    "A longer warm-up improves the accuracy of the model. On the other hand, a longer warm-up "
    "leads to lower throughput."
)


@needs_wordnet
def test_directions_traded_between_two_things_are_caught() -> None:
    claim = "A longer warm-up raises throughput but lowers the accuracy of the model."
    check = check_support(claim, QUOTE)
    assert not check.supported
    found = [r for r in check.reasons if r.code == "antonym"]
    assert found and "throughput" in found[0].claim_says and found[0].page_says == "lower"


@needs_wordnet
def test_the_directions_of_the_page_pass() -> None:
    lexicon = load_lexicon()
    claim = "A longer warm-up lowers throughput but improves the accuracy of the model."
    assert not direction_binding_reasons(claim, QUOTE, lexicon)


def test_idioms_with_all_and_a_purpose_are_no_slips() -> None:
    quote = "Long inputs are slow to process, especially when the key facts sit in the middle."
    claim = "Long inputs are slow to process, above all when the key facts sit in the middle."
    assert "scope_widened" not in [r.code for r in check_support(claim, quote).reasons]
    purpose = "The reports are published so that the teams can share their goals."
    said = "The reports are published to help the teams share their goals."
    assert "cause_added" not in [r.code for r in check_support(purpose, said).reasons]
    assert "scope_widened" in [r.code for r in check_support("All inputs are slow.", quote).reasons]
