"""The checks of issue 24's fifth round (session 33), from the claim sets written blind: a
contrapositive, numbers a claim computes, the version in the document's name, the weight of a
passage's topic words, German stems and names, a conditional stated the other way round, names
moved between lists, a claim surer than its quote, "solely of" and "required to", and "rather
than".

Each "caught" test failed on the checker before this round (it said ``supported``, or named no
such reason), and each "kept" test guards a faithful claim the check had refused or must leave
alone. The sentences are made up for these tests (not from any claim set).
"""

from __future__ import annotations

from tests.helpers.support_checks import codes, needs_wordnet, reason_of
from truthbase.cite.align import align, normal
from truthbase.cite.lexicon import load_lexicon
from truthbase.cite.numbers import number_reasons
from truthbase.cite.terms import named_terms, term_present

# -- a contrapositive (inference) -------------------------------------------------------------

GATE = "A bridge is safe to open when its deck is dry and its cables are tight."


def test_a_contrapositive_is_no_added_negation() -> None:
    claim = "A bridge whose cables are not tight is not safe to open."
    assert "negation_missing" not in codes(claim, GATE)
    german = "Eine Brücke, deren Seile nicht gespannt sind, darf nicht geöffnet werden."
    quote = "Eine Brücke darf geöffnet werden, wenn ihre Seile gespannt sind."
    assert "negation_missing" not in codes(german, quote)


def test_a_single_negation_is_still_missing() -> None:
    assert "negation_missing" in codes("A bridge is not safe to open when its deck is dry.", GATE)


def test_two_negations_of_a_plain_statement_deny_it() -> None:
    """Only a quote that states a condition or a need has a contrapositive; "that" after a
    verb of saying opens what is said, no relative clause."""
    quote = "The authors show that the method scales to large graphs and is robust to noise."
    claim = "The authors show that the method does not scale and is not robust to noise."
    assert "negation_missing" in codes(claim, quote)
    gpu = "The model runs on a GPU and uses CUDA kernels."
    assert "negation_missing" in codes("The model runs without a GPU and does not use CUDA.", gpu)


# -- numbers the claim computes, and the document's own version --------------------------------

AGREEMENT = (
    "Annotators agreed with the model on 93 of the relevance labels and 78 of the usefulness "
    "labels."
)


def test_a_difference_of_whole_numbers_needs_the_claim_to_say_so() -> None:
    said = "Agreement on usefulness was 15 points lower than on relevance."
    assert number_reasons(said, AGREEMENT) == []
    unsaid = "Fifteen annotators labelled the relevance and usefulness of the outputs."
    assert [r.code for r in number_reasons(unsaid, AGREEMENT)] == ["number_missing"]


def test_sums_products_ratios_and_complements_are_inferences() -> None:
    gpus = "Training used four GPUs with 80GB of memory each."
    assert number_reasons("The GPUs offered 320GB of memory in total.", gpus) == []
    assert number_reasons("The GPUs offered 320GB of memory.", gpus) != []
    lengths = "Contexts ranged from 4,000 to 25,000 tokens."
    assert (
        number_reasons("The longest context was more than six times the shortest.", lengths) == []
    )
    share = "At least 18.5% of the retrieved nodes came from the upper layers."
    assert number_reasons("The remaining 81.5% or fewer were leaf nodes.", share) == []
    assert number_reasons("The remaining 80.5% or fewer were leaf nodes.", share) != []


def test_a_bound_a_unit_or_another_number_of_the_header_is_no_computation() -> None:
    """What the claim's words must say: a bound ("fewer than 15"), a unit ("85 points"), a
    complement without "remaining" or "not", a product without the quote's unit, a year of the
    document's header after "in" are all changed numbers."""
    admitted = "Of the 60 applicants, 45 were admitted."
    assert number_reasons("Fewer than 15 applicants were admitted.", admitted) != []
    games = "The team scored 100 points in the first game and 15 points in the second."
    assert number_reasons("The team scored 85 points in the second game.", games) != []
    probe = "The probe detected 18.5% of the attacks."
    assert number_reasons("The probe detected 81.5% of the attacks.", probe) != []
    reviewers = "Two of the three reviewers approved the paper."
    assert number_reasons("In total, six reviewers approved the paper.", reviewers) != []
    header = "Benchmark Report\nAcme Labs, published in 2023"
    year = "In 2021 the model reached 91% accuracy."
    assert number_reasons("In 2023 the model reached 91% accuracy.", year, document=header) != []
    remark = "Wenn es für ein x gilt, dann wegen Bemerkung 46 sogar für alle Punkte x."
    assert number_reasons("Wegen Bemerkung 45 gilt es für alle Punkte.", remark) != []


def test_the_version_in_the_documents_name_is_no_added_number() -> None:
    quote = "This document describes outcomes an organization can aspire to achieve."
    name = "The Harbor Safety Framework (HSF) 2.0\nHarbor Institute"
    claim = "HSF 2.0 describes outcomes an organization may aim for."
    assert number_reasons(claim, quote, document=name) == []
    assert number_reasons(claim, quote) != []
    assert number_reasons("HSF 3.0 describes outcomes.", quote, document=name) != []


# -- the passage's topic words, German stems and names -----------------------------------------

SETS = (
    "Eine Menge heißt offen, wenn sie zur Topologie gehört. Eine Menge heißt abgeschlossen, wenn "
    "ihr Komplement offen ist. Es gibt Mengen, die weder offen noch abgeschlossen sind. Es gibt "
    "auch Mengen, die offen und abgeschlossen sind."
)


@needs_wordnet
def test_a_word_every_sentence_says_still_weighs() -> None:
    """The idf is over the passage's own sentences: "offen" and "abgeschlossen" are in all of
    them, and a claim that restates them was "4% covered" before the floor."""
    claim = "Manche Mengen sind weder offen noch abgeschlossen."
    found = align(claim, SETS, "", load_lexicon(), language="de")
    assert found.coverage > 0.5, found


@needs_wordnet
def test_german_words_are_aligned_by_their_stems() -> None:
    quote = "Die offenen Mengen bilden die Topologie."
    claim = "Laut Skript bildet jede offene Menge einen Teil der Topologie."
    german = align(claim, quote, "", load_lexicon(), language="de")
    english = align(claim, quote, "", load_lexicon())
    assert "menge" not in german.unaligned and "menge" in english.unaligned


def test_german_names_are_terms() -> None:
    text = "Die Definition geht laut Skript auf Hermann Weyl zurück."
    assert named_terms(text, german=True) == ["Weyl"]
    nouns = "Laut Skript gilt der Satz für jeden Raum mit einer abzählbaren Basis."
    assert named_terms(nouns, german=True) == []
    objects = "Das Framework empfiehlt, dass Organisationen Gefahren regelmäßig bewerten."
    assert named_terms(objects, german=True) == []


def test_a_name_joined_to_a_noun_is_named_by_the_name() -> None:
    page = normal("X heißt Mannigfaltigkeit, wenn X hausdorffsch ist.")
    assert term_present("Hausdorff-Eigenschaft", page)
    assert not term_present("Peano-Kurve", page)
    assert not term_present("Transformer-Encoder", normal("the transformation of the text"))


# -- a conditional the other way round (relation) -----------------------------------------------

LIMIT = "Ist X kompakt, so hat jede Folge in X einen Häufungspunkt."


@needs_wordnet
def test_a_conditional_stated_the_other_way_round_is_caught() -> None:
    claim = "Hat jede Folge in X einen Häufungspunkt, so ist X kompakt."
    found = reason_of(claim, LIMIT, "condition_swapped")
    assert found is not None and found["page_says"] == "if ist x kompakt"
    english = reason_of(
        "If every sequence in X has a cluster point, X is compact.",
        "If X is compact, every sequence in X has a cluster point.",
        "condition_swapped",
    )
    assert english is not None


@needs_wordnet
def test_a_supposition_and_its_conclusion_stated_the_other_way_round_is_caught() -> None:
    quote = "Es sei X ein zusammenhängender Raum mit einer Basis. Dann gibt es eine Überlagerung."
    claim = "Laut Skript gilt: Gibt es eine Überlagerung, so ist X ein zusammenhängender Raum."
    assert reason_of(claim, quote, "condition_swapped") is not None


def test_a_definition_goes_both_ways() -> None:
    definition = "Ein Raum X heißt hausdorffsch, wenn je zwei Punkte disjunkte Umgebungen haben."
    claim = "Ist X hausdorffsch, so haben je zwei Punkte disjunkte Umgebungen."
    assert "condition_swapped" not in codes(claim, definition)
    english = "A space is called compact if every open cover has a finite subcover."
    claim = "If a space is compact, every open cover of it has a finite subcover."
    assert "condition_swapped" not in codes(claim, english)


@needs_wordnet
def test_a_conditional_in_its_own_direction_or_contraposed_is_kept() -> None:
    same = "Wenn X kompakt ist, besitzt jede Folge in X einen Häufungspunkt."
    assert "condition_swapped" not in codes(same, LIMIT)
    contraposed = "Hat eine Folge in X keinen Häufungspunkt, so ist X nicht kompakt."
    assert "condition_swapped" not in codes(contraposed, LIMIT)


# -- names moved between the quote's lists (relation) -------------------------------------------

DUTIES = (
    "Tasks of ALPHA, BRAVO, and CHARLIE should happen daily, and tasks of DELTA and ECHO should "
    "be ready at all times."
)


def test_a_name_moved_to_the_other_list_is_caught() -> None:
    claim = (
        "Tasks of CHARLIE and DELTA should be ready at all times, while ALPHA and BRAVO run daily."
    )
    found = reason_of(claim, DUTIES, "roles_swapped")
    assert found is not None and "charlie" in found["claim_says"]


def test_lists_end_with_their_sentence() -> None:
    quote = "Daily tasks are ALPHA and BRAVO. CHARLIE and DELTA are weekly."
    claim = "ALPHA and CHARLIE are daily tasks. BRAVO and DELTA are weekly."
    assert "roles_swapped" in codes(claim, quote)


def test_the_quotes_lists_restated_are_kept() -> None:
    claim = "ALPHA, BRAVO and CHARLIE work daily, whereas DELTA and ECHO must always be ready."
    assert "roles_swapped" not in codes(claim, DUTIES)


@needs_wordnet
def test_a_list_item_swapped_for_a_word_the_lexicon_relates_is_caught() -> None:
    """WordNet relates "control" to the claim's "guide", which hid the swapped item."""
    quote = "Values such as anonymity, confidentiality, and control should guide system design."
    claim = (
        "Values such as anonymity, confidentiality, and explainability should guide system design."
    )
    assert reason_of(claim, quote, "term_substituted") is not None


# -- a claim surer than its quote (scope) ---------------------------------------------------------


def test_impossible_for_difficult_and_proven_for_believed_are_caught() -> None:
    hard = "It is difficult to determine whether an opaque system is fair."
    assert "modality" in codes(
        "It is impossible to determine whether an opaque system is fair.", hard
    )
    belief = "We believe the flat search is better because it is more flexible."
    claim = "The authors demonstrate that the flat search is better because it is more flexible."
    assert "hedge_dropped" in codes(claim, belief)


def test_what_the_quote_itself_says_is_not_stronger() -> None:
    required = "Operators are required to record every incident, which auditors can then review."
    assert "modality" not in codes("Operators are required to record each incident.", required)
    belief = "We believe that the results would hold on other datasets."
    claim = "The authors believe their results would also be confirmed on other datasets."
    assert "hedge_dropped" not in codes(claim, belief)
    hard = "It is difficult to determine the exact cause of the outage."
    assert "modality" not in codes("The exact cause of the outage cannot easily be found.", hard)
    yearly = "Review the asset inventory at least annually."
    assert "scope_widened" not in codes(
        "Keep it up to date and review it at least annually.", yearly
    )
    assert "scope_widened" not in codes(
        "Fine-tuning gave only a 2% gain.", "Fine-tuning gave a 2% gain."
    )


def test_another_bound_of_a_count_is_caught() -> None:
    quote = "Ist X hausdorffsch, so hat jede Folge in X höchstens einen Grenzwert."
    assert "scope_widened" in codes(
        "Ist X hausdorffsch, so hat jede Folge in X genau einen Grenzwert.", quote
    )
    assert "scope_widened" not in codes(
        "Ist X hausdorffsch, so hat jede Folge in X höchstens einen Grenzwert.", quote
    )


def test_solely_of_is_exclusive_and_only_a_third_is_an_amount() -> None:
    quote = "Risk treatment comprises plans to respond to and recover from incidents."
    assert "scope_widened" in codes("Risk treatment consists solely of plans to recover.", quote)
    assert "scope_widened" in codes("Risk treatment covers only an incident's recovery.", quote)
    amount = "Only a third of the plans were tested."
    assert "scope_widened" not in codes(amount, "A third of the plans were tested.")


def test_required_to_is_an_obligation_where_the_quote_encourages() -> None:
    quote = "Users are encouraged to evaluate whether the framework improved their practices."
    claim = "Users are required to evaluate whether the framework improved their practices."
    assert "modality" in codes(claim, quote)


# -- "rather than" ---------------------------------------------------------------------------------


def test_rather_than_denies_what_the_quote_states() -> None:
    quote = "Systems should be tested before their deployment and regularly in operation."
    claim = "Systems should be tested once in operation rather than before deployment."
    assert "negation_missing" in codes(claim, quote)
    kept = "Systems should be tested regularly in operation, rather than once a year."
    assert "negation_missing" not in codes(kept, quote)
    replaced = "The new system replaces manual review with automated checks."
    claim = "The new system uses automated checks instead of manual review."
    assert "negation_missing" not in codes(claim, replaced)
