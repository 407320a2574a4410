"""The checks of issue 24's fourth round (session 32): a quote read with the sentence it was cut
from, a two-word name whose other word only the context has, an opposite the claim pairs with
the quote's word, a comparison where the quote compares nothing, a model name dropped from its
slot, and "not only" read as "only".

Each "caught" test failed on the checker before this round (it said ``supported``, or named no
such reason), and each "kept" test guards a faithful claim the new check must leave alone. The
sentences are made up for these tests (not from claims-dev.json).
"""

from __future__ import annotations

from tests.helpers.support_checks import needs_wordnet, reason_of
from truthbase.cite.support import check_support
from truthbase.cite.terms import quote_sentence

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
    found = reason_of(claim, FRAGMENT, "term_substituted", context=BENCH)
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
    found = reason_of(claim, SEASON, "term_outside_quote", context=PLANS)
    assert found is not None
    assert found["claim_says"] == "Repair Plans" and found["page_says"] == "Season Plan"


@needs_wordnet
def test_a_name_the_quote_leaves_to_its_context_is_kept() -> None:
    # "It" of the quote is the Season Plan: naming it is no sibling term
    quote = "It is revised every spring."
    claim = "The Season Plan is revised every spring."
    assert reason_of(claim, quote, "term_outside_quote", context=PLANS) is None
    assert reason_of("A Season Plan is revised every spring.", quote, "term_outside_quote") is None


# -- an opposite the claim pairs with the quote's word (entity swap) -------------------------------

AUDIENCE = "Night-shift nurses are the primary readers of the ward handbook."


@needs_wordnet
def test_an_opposite_the_page_never_says_is_caught() -> None:
    claim = (
        "Ward managers are the primary readers of the handbook, with night-shift nurses as "
        "secondary readers."
    )
    found = reason_of(claim, AUDIENCE, "opposite_added")
    assert found is not None
    assert found["claim_says"] == "secondary" and found["page_says"] == "primary"


@needs_wordnet
def test_an_opposite_the_page_says_is_kept() -> None:
    claim = (
        "Night-shift nurses are the primary readers of the ward handbook, and ward managers "
        "secondary ones."
    )
    context = AUDIENCE + " Ward managers are its secondary readers."
    assert reason_of(claim, AUDIENCE, "opposite_added", context=context) is None
    assert (
        reason_of(
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
    found = reason_of(claim, LOAD, "comparison_added")
    assert found is not None
    assert found["claim_says"] == "exceed"


@needs_wordnet
def test_a_comparison_of_a_quote_that_compares_is_left_to_the_other_checks() -> None:
    quote = "The new valve shows improvements of 4% over the old one and 7% over the copper one."
    claim = "The new valve beats the copper one by 7% and the old one by 4%."
    assert reason_of(claim, quote, "comparison_added") is None


# -- a name with digits dropped from its slot (entity swap) ----------------------------------------

JUDGE = "The checker reaches an agreement above 80% with RX-7-based ratings"


@needs_wordnet
def test_a_model_name_dropped_for_words_the_page_lacks_is_caught() -> None:
    claim = "The checker reaches more than 80% agreement with the ratings of expert surveyors."
    found = reason_of(claim, JUDGE, "term_substituted")
    assert found is not None
    assert "rx-7-based" in found["page_says"]


@needs_wordnet
def test_a_bare_acronym_spelled_out_is_kept() -> None:
    quote = "Later work trains an LM to write calendar entries for booked rooms."
    claim = "Later work trains a model to produce calendar entries for booked rooms."
    assert reason_of(claim, quote, "term_substituted") is None
    claim = "The checker agrees with RX-7's ratings more than 80% of the time."
    assert reason_of(claim, JUDGE, "term_substituted") is None


# -- "not only" read as "only" (scope) -------------------------------------------------------------

LINES = "Lines that cut a side of the square (so not only a corner) also cut a second side."
LINIEN = (
    "Geraden, die eine Seite des Quadrats (also nicht nur eine Ecke) schneiden, schneiden auch "
    "eine zweite Seite."
)


def test_only_for_not_only_is_caught() -> None:
    found = reason_of(
        "A line cuts a second side even if it touches only a corner.", LINES, "not_only_dropped"
    )
    assert found is not None
    assert found["claim_says"] == "only" and found["page_says"] == "not only"
    claim = "Eine Gerade schneidet eine zweite Seite, auch wenn sie nur eine Ecke berührt."
    assert reason_of(claim, LINIEN, "not_only_dropped") is not None


def test_not_only_restated_is_kept() -> None:
    claim = "A line that cuts a side, not only a corner, also cuts a second side."
    assert reason_of(claim, LINES, "not_only_dropped") is None
    # "only" about something else
    claim = "Only lines that cut a side of the square also cut a second one."
    assert reason_of(claim, LINES, "not_only_dropped") is None


# -- faithful rewordings the checks took for slips (round 4, second part) --------------------------
# Most of these were vetoed by round 3's checker (a blind claim set showed the kind); the "caught"
# ones guard the slip each loosened check must still see.


@needs_wordnet
def test_a_converse_comparison_is_kept_and_swapped_roles_are_caught() -> None:
    quote = "The online notes can be revised more often than the printed manual."
    converse = "The printed manual is revised less often than the online notes."
    assert check_support(converse, quote).supported
    swapped = "The printed manual can be revised more often than the online notes."
    assert reason_of(swapped, quote, "roles_swapped") is not None


@needs_wordnet
def test_roles_swapped_between_plain_words_are_caught() -> None:
    quote = "We believe pooled ranking is better than staged ranking because it is simpler."
    claim = (
        "The authors believe staged ranking is better than pooled ranking because it is simpler."
    )
    assert reason_of(claim, quote, "roles_swapped") is not None
    quote = "In einem Dreieck ist jeder Innenwinkel kleiner als jeder nicht anliegende Außenwinkel."
    claim = "In einem Dreieck ist jeder Außenwinkel kleiner als jeder nicht anliegende Innenwinkel."
    assert reason_of(claim, quote, "roles_swapped") is not None


@needs_wordnet
def test_each_throughout_and_the_rest_say_what_every_says() -> None:
    for quote, claim in (
        (
            "We gather 3k-9k labelled samples for each kind of fault.",
            "For every kind of fault they gather between 3k and 9k labelled samples.",
        ),
        (
            "Testers are involved throughout the build process.",
            "Testers are involved across the whole build process.",
        ),
        (
            "The old scorer gave a weight of 1 to the longest span and 0 to the rest.",
            "The old scorer gave full weight to the longest span and none to every other span.",
        ),
    ):
        assert reason_of(claim, quote, "scope_widened") is None, claim
    quote = "Testers are involved in the build process."
    assert reason_of("Testers are involved in every build.", quote, "scope_widened") is not None


def test_a_label_number_the_context_gives_is_no_missing_number() -> None:
    context = "Table 3: Results on five tasks. Bold marks the best open model."
    quote = "Bold marks the best open model."
    assert (
        reason_of(
            "In Table 3, bold marks the best open model.", quote, "number_missing", context=context
        )
        is None
    )
    assert (
        reason_of(
            "In Table 4, bold marks the best open model.", quote, "number_missing", context=context
        )
        is not None
    )


def test_a_count_of_the_quotes_list_is_no_missing_number() -> None:
    quote = "Losses may be financial, legal, physical, or reputational in nature."
    assert reason_of("The text names four kinds of loss.", quote, "number_missing") is None
    assert reason_of("The text names five kinds of loss.", quote, "number_missing") is not None


@needs_wordnet
def test_a_plural_acronym_is_its_spelled_out_words() -> None:
    quote = "Staff receive reports (e.g., key safety indicators) they need to judge the plant."
    claim = "Staff receive KSIs so that they can judge the plant."
    assert reason_of(claim, quote, "term_missing") is None


@needs_wordnet
def test_a_negation_said_of_the_quote_negations_subject_is_kept() -> None:
    quote = "After checking every node, we found that errors did not spread to higher levels."
    claim = "The authors saw no errors spreading to the higher levels."
    assert reason_of(claim, quote, "negation_missing") is None
    quote = (
        "At that time the Zeta API does not expose token scores, preventing us from running "
        "the filter."
    )
    claim = "The authors could not run the filter on the Zeta API at that time."
    assert reason_of(claim, quote, "negation_missing") is None
    # a dropped negation is still one, in any inflection
    quote = "We found that errors did not propagate to higher levels."
    claim = "The authors found that errors propagated to higher levels."
    assert reason_of(claim, quote, "negation_dropped") is not None


def test_therefore_concludes_and_gives_no_cause() -> None:
    quote = "A reading taken early may differ from one taken later in the season."
    claim = "A reading taken early might therefore not match one taken later."
    assert reason_of(claim, quote, "cause_added") is None
    assert (
        reason_of("A reading taken early differs because the soil is colder.", quote, "cause_added")
        is not None
    )


@needs_wordnet
def test_an_order_in_time_the_quote_does_not_give_is_caught() -> None:
    quote = "As valves are fitted, the crew records the pressure in the log."
    claim = "The crew records the pressure in the log before any valves are fitted."
    found = reason_of(claim, quote, "order_added")
    assert found is not None and found["claim_says"] == "before"
    quote = "The crew records the pressure before the valves are fitted."
    assert (
        reason_of("Before fitting the valves, the crew logs the pressure.", quote, "order_added")
        is None
    )


@needs_wordnet
def test_a_hedge_for_a_hedge_and_an_acronym_in_a_slot_are_kept() -> None:
    quote = "Values such as anonymity and consent should generally guide the design."
    claim = "Values like anonymity and consent should usually guide the design."
    assert reason_of(claim, quote, "term_substituted") is None
    quote = "The board gathered input through a formal request for information and two workshops."
    claim = "The board gathered input through a formal RFI and two workshops."
    assert reason_of(claim, quote, "term_substituted") is None


@needs_wordnet
def test_a_hedge_on_another_sentence_is_not_dropped() -> None:
    quote = "Errors did not reach the upper levels. Generally, the errors were small and harmless."
    claim = "Errors did not reach the upper levels of the tree."
    assert reason_of(claim, quote, "hedge_dropped") is None
    claim = "The errors of the tree were tiny and harmless."
    assert reason_of(claim, quote, "hedge_dropped") is not None
