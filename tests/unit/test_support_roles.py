"""The vetoes of issue 24's third round: a cause traded for its effect, a term in another term's
slot, an example or a ranking added, a possibility denied, a percentage given to the wrong
thing, a requirement read as its avoidance, and "not all" restated as "some".

Each slip keeps almost every word of the page, so the coverage let it through: each "caught"
test failed on the checker before these vetoes (it said ``supported``), and each "kept" test
guards a faithful rewording the new veto must not touch. The sentences are made up for these
tests (not from claims-dev.json).
"""

from __future__ import annotations

from tests.helpers.support_checks import needs_wordnet, reason_of
from truthbase.cite.support import check_support

# -- cause_swapped (relation) -------------------------------------------------------------------

DAM = "The river flooded the lower town because the old dam gave way after a week of heavy rain."


@needs_wordnet
def test_a_cause_traded_for_its_effect_is_caught() -> None:
    claim = "The old dam gave way after a week of heavy rain because the river flooded the town."
    found = reason_of(claim, DAM, "cause_swapped")
    assert found is not None
    assert "river" in found["claim_says"] and "dam" in found["page_says"]


@needs_wordnet
def test_a_cause_restated_the_right_way_round_is_kept() -> None:
    for claim in (
        "The lower town was flooded by the river because the old dam gave way.",
        "The old dam gave way after heavy rain, which led to the river flooding the lower town.",
    ):
        assert reason_of(claim, DAM, "cause_swapped") is None, claim


# -- term_substituted in a slot (entity swap) ----------------------------------------------------

PUMP = "Of the three pumps, only the steam-driven unit keeps the tank full during a storm."


@needs_wordnet
def test_a_compound_term_in_the_slot_of_the_quotes_is_caught() -> None:
    claim = "Of the three pumps, only the diesel-driven unit keeps the tank full during a storm."
    found = reason_of(claim, PUMP, "term_substituted")
    assert found is not None
    assert found["claim_says"] == "diesel-driven" and found["page_says"] == "steam-driven"


@needs_wordnet
def test_a_reworded_slot_is_kept() -> None:
    for claim in (
        "During a storm only the unit driven by steam keeps the tank full, of the three pumps.",
        "Of the three pumps, only the steam-powered unit keeps the tank full during a storm.",
    ):
        assert reason_of(claim, PUMP, "term_substituted") is None, claim
    # a compound the context has is the page's own, not a swap
    context = "The diesel-driven unit is the backup. " + PUMP
    claim = "Of the three pumps, only the diesel-driven unit keeps the tank full during a storm."
    assert reason_of(claim, PUMP, "term_substituted", context=context) is None


# -- example_added, superlative_added (added facts) ---------------------------------------------

PUMPS = "The new pumps lower the energy use of the plant and can serve other purposes as well."


@needs_wordnet
def test_an_example_the_page_does_not_give_is_caught() -> None:
    claim = (
        "The new pumps lower the plant's energy use and can serve other purposes, such as "
        "heating the staff canteen."
    )
    found = reason_of(claim, PUMPS, "example_added")
    assert found is not None and "canteen" in found["claim_says"]


@needs_wordnet
def test_an_example_the_page_gives_is_kept() -> None:
    quote = "Several solvents, for example acetone and ethanol, dissolve the resin."
    claim = "The resin dissolves in several solvents, such as acetone and ethanol."
    assert reason_of(claim, quote, "example_added") is None


@needs_wordnet
def test_a_ranking_the_page_does_not_make_is_caught() -> None:
    quote = "The survey names three risks for the harbour: storms, silting and fire."
    claim = "The survey names three risks for the harbour and treats storms as the most costly."
    assert reason_of(claim, quote, "superlative_added") is not None


@needs_wordnet
def test_a_superlative_restating_the_page_is_kept() -> None:
    quote = "Storms are the costliest of the three risks the survey names for the harbour."
    claim = "Of the three harbour risks in the survey, storms are the most costly."
    assert reason_of(claim, quote, "superlative_added") is None


# -- modality: a possibility denied ---------------------------------------------------------------

LEDGER = "Although the ledger is mostly used for audits, it may also support planning the budget."


@needs_wordnet
def test_a_possibility_denied_is_caught() -> None:
    claim = "The ledger is mostly used for audits and cannot help with planning the budget."
    found = reason_of(claim, LEDGER, "modality")
    assert found is not None and found["page_says"] == "may"


def test_a_denial_the_page_makes_is_no_possibility_denied() -> None:
    quote = "The ledger cannot be edited after the audit has closed."
    claim = "Once the audit has closed, the ledger cannot be edited."
    assert reason_of(claim, quote, "modality") is None


# -- number_missing: a percentage about another thing ---------------------------------------------


def test_a_fraction_of_the_page_given_as_the_percentage_of_another_thing_is_caught() -> None:
    quote = "The filter keeps 0.35 of the input, which gives a 65% reduction rate."
    claim = "The filter keeps 0.35 of the input, which gives a 35% reduction rate."
    found = reason_of(claim, quote, "number_missing")
    assert found is not None and found["claim_says"] == "35%" and found["page_says"] == "65%"


def test_a_fraction_restated_as_a_percentage_is_kept() -> None:
    quote = "The filter keeps 0.35 of the input, which gives a 65% reduction rate."
    assert reason_of("The filter keeps 35% of the input.", quote, "number_missing") is None


# -- antonym: required against avoided, "not all" against "some" -----------------------------------


@needs_wordnet
def test_a_requirement_read_as_its_avoidance_is_caught() -> None:
    quote = "The legacy importer requires a full rescan of the archive after each upload."
    claim = "The legacy importer avoids a full rescan of the archive after each upload."
    found = reason_of(claim, quote, "antonym")
    assert found is not None and found["page_says"] == "requires"
    need = "The cache eliminates the need to rebuild the index on every start."
    found = reason_of("The cache must rebuild the index on every start.", need, "antonym")
    assert found is not None and found["page_says"] == "eliminates"


@needs_wordnet
def test_not_all_restated_as_some_is_kept() -> None:
    quote = "Not all of the samples could be dated, because the labels had faded."
    claim = "Because the labels had faded, some of the samples could not be dated."
    check = check_support(claim, quote)
    assert not {r.code for r in check.reasons} & {"negation_dropped", "antonym"}, check.reasons


# -- light inferences kept: a fraction of two numbers, a negated opposite, an ability ------------


def test_a_fraction_that_is_the_ratio_of_two_numbers_of_the_quote_is_kept() -> None:
    quote = "The new quota allows 40 uploads a day, against the former 120 uploads a day."
    claim = "The new quota allows a third as many uploads a day as the former one."
    assert reason_of(claim, quote, "number_missing") is None
    wrong = "The new quota allows a fourth as many uploads a day as the former one."
    assert reason_of(wrong, quote, "number_missing") is not None


@needs_wordnet
def test_a_negated_opposite_restates_the_quote() -> None:
    quote = "Visitors are registered before entering the clean room."
    claim = "Visitors should not wait until after entering the clean room to be registered."
    codes = {r.code for r in check_support(claim, quote).reasons}
    assert not codes & {"antonym", "negation_missing"}, codes
    assert reason_of("Visitors are registered after entering the clean room.", quote, "antonym")


def test_a_german_ability_is_no_hedge_a_claim_must_keep() -> None:
    quote = "Der Beweis kann im Lehrbuch von Meyer auf Seite 12 nachgelesen werden."
    claim = "Den Beweis findet man im Lehrbuch von Meyer auf Seite 12."
    assert reason_of(claim, quote, "hedge_dropped") is None
    assert reason_of("Meistens ist das Lager voll.", "Das Lager ist oft voll.", "hedge_dropped")


def test_a_number_five_words_from_its_name_is_bound_to_it() -> None:
    quote = "Rather than the 300 tokens of the Orion setup, we cap the output at 100 tokens."
    claim = "The Orion paper capped output at 100 tokens, while we allowed 300 tokens."
    found = reason_of(claim, quote, "roles_swapped")
    assert found is not None and found["claim_says"] == "orion 100"


# -- roles_swapped: items traded between two lists ------------------------------------------------

REPLIES = (
    "The survey counted praise, thanks, or support as positive replies and complaints, threats, "
    "or insults as negative replies."
)


@needs_wordnet
def test_items_traded_between_two_lists_are_caught() -> None:
    claim = "The survey counted complaints and threats as positive replies and praise as negative."
    found = reason_of(claim, REPLIES, "roles_swapped")
    assert found is not None
    assert found["claim_says"] == "complaints … positive"
    assert found["page_says"] == "complaints … negative"


@needs_wordnet
def test_items_kept_in_their_lists_pass() -> None:
    claim = "Praise and thanks counted as positive replies in the survey, and insults as negative."
    assert reason_of(claim, REPLIES, "roles_swapped") is None


@needs_wordnet
def test_a_thing_put_outside_what_the_quote_includes_is_caught() -> None:
    quote = "Shipping costs, including customs fees and insurance, are refunded to the buyer."
    claim = "Shipping costs are refunded to the buyer, but customs fees stay outside the refund."
    found = reason_of(claim, quote, "antonym")
    assert found is not None and found["claim_says"] == "outside"


# -- roles_swapped: a ratio turned upside down -----------------------------------------------------

YIELD = "The ratio of the dried mass to the fresh mass of the harvested leaves is 0.2 on average."


@needs_wordnet
def test_a_ratio_turned_upside_down_is_caught() -> None:
    claim = "On average, the fresh mass of the harvested leaves is 0.2 times their dried mass."
    found = reason_of(claim, YIELD, "roles_swapped")
    assert found is not None and "fresh mass" in found["claim_says"]


@needs_wordnet
def test_a_ratio_restated_the_right_way_up_passes() -> None:
    claim = "On average, the dried leaves weigh 0.2 times as much as the fresh ones."
    assert reason_of(claim, YIELD, "roles_swapped") is None
    claim = "Dried, the harvested leaves keep on average 0.2 of their fresh mass."
    assert reason_of(claim, YIELD, "roles_swapped") is None


# -- time_dropped: what held before a point in time moved onto it ---------------------------------

RENAMED = "Until release 3.1, the command-line tool was named Quarry."


def test_a_name_that_held_until_a_release_given_to_that_release_is_caught() -> None:
    claim = "Release 3.1 of the command-line tool keeps the name Quarry."
    found = reason_of(claim, RENAMED, "time_dropped")
    assert found is not None and found["page_says"] == "until release 3.1"


def test_a_time_bound_kept_in_other_words_passes() -> None:
    for claim in (
        "Before release 3.1 the command-line tool went by the name Quarry.",
        "The command-line tool was formerly called Quarry, up to its 3.1 release.",
    ):
        assert reason_of(claim, RENAMED, "time_dropped") is None, claim


# -- negation: a compound negated on the page is one term ------------------------------------------


def test_another_compound_of_the_same_word_is_no_dropped_negation() -> None:
    quote = "The drones are flown in day-time trials without night-time landings."
    kept = (
        "The drones are flown with night-vision cameras in day-time trials, but none of them "
        "touch down after dark."
    )
    assert reason_of(kept, quote, "negation_dropped") is None
    dropped = "The drones are flown in day-time trials and night-time landings."
    assert reason_of(dropped, quote, "negation_dropped") is not None


# -- term_substituted: a list's last item replaced ----------------------------------------------

GEAR = "The kit holds ropes, carabiners, and a first-aid pouch for each climber."


@needs_wordnet
def test_a_lists_last_item_replaced_by_words_nowhere_on_the_page_is_caught() -> None:
    claim = "The kit holds ropes, carabiners and an avalanche beacon for each climber."
    found = reason_of(claim, GEAR, "term_substituted")
    assert found is not None and found["claim_says"] == "avalanche beacon"


@needs_wordnet
def test_a_lists_last_item_reworded_is_kept() -> None:
    for claim in (
        "Each climber's kit holds ropes, carabiners and a first-aid bag.",
        "For every climber the kit holds ropes, carabiners, and a first aid pouch.",
    ):
        assert reason_of(claim, GEAR, "term_substituted") is None, claim
