"""What "the second one" or "the two" points at: an item of the list the previous answer gave
(truthbase.conversation.referents), and how the resolution uses it."""

from __future__ import annotations

import pytest

from truthbase.conversation.referents import answer_lists, referred_items
from truthbase.conversation.resolve import resolve_follow_up
from truthbase.turns import CitedSpan, Turn

CORE = (
    "The AI RMF Core provides outcomes and actions. [1] As illustrated in Figure 5, the Core is "
    "composed of four functions: GOVERN, MAP, MEASURE, and MANAGE. [1]"
)
STRATEGIES = (
    "An important aspect of RAPTOR is its efficiency: it scales. [1] For querying within this "
    "tree, we introduce two distinct strategies: tree traversal and collapsed tree. [1]"
)


def test_the_lists_an_answer_gives_are_the_items_after_a_colon() -> None:
    assert answer_lists(CORE) == [["GOVERN", "MAP", "MEASURE", "MANAGE"]]
    # "it scales" is one item, not a list; "A and B" without commas is one.
    assert answer_lists(STRATEGIES) == [["tree traversal", "collapsed tree"]]
    bias = "three categories: systemic, computational and statistical, and human-cognitive."
    assert answer_lists(bias) == [["systemic", "computational and statistical", "human-cognitive"]]
    assert answer_lists("No list here, only commas, and words.") == []


@pytest.mark.parametrize(
    ("question", "named", "asked"),
    [
        ("What does the second one do?", ["MAP"], "What does MAP do?"),
        ("And the last one?", ["MANAGE"], "And MANAGE?"),
        ("What does the first of them cover?", ["GOVERN"], "What does GOVERN cover?"),
        (
            "Which of the four is about context?",
            ["GOVERN", "MAP", "MEASURE", "MANAGE"],
            "Which of GOVERN, MAP, MEASURE and MANAGE is about context?",
        ),
        # An ordinal with a noun of its own names that noun, not a list item.
        ("What does the first number stand for?", [], "What does the first number stand for?"),
        ("What does the fifth one do?", [], "What does the fifth one do?"),  # there are four
        ("What does it do?", [], "What does it do?"),
    ],
)
def test_an_ordinal_names_an_item_of_the_previous_list(
    question: str, named: list[str], asked: str
) -> None:
    previous = "Which four functions make up the AI RMF Core?"
    referred = referred_items(question, previous, CORE)
    assert list(referred.named) == named
    assert referred.question == asked
    if named == ["MAP"]:
        assert referred.others == ("GOVERN", "MEASURE", "MANAGE")


def test_the_list_the_previous_question_counted_is_chosen() -> None:
    answer = "Its parts: a leaf, a stem and a root. The functions: GOVERN, MAP, MEASURE, MANAGE."
    assert referred_items("The second one?", "Which four functions?", answer).named == ("MAP",)
    assert referred_items("The second one?", "Which parts?", answer).named == ("a stem",)
    both = referred_items("Which of the two is faster?", "Which strategies?", STRATEGIES)
    assert both.question == "Which of tree traversal and collapsed tree is faster?"


def test_a_resolved_ordinal_searches_its_item_and_not_the_others() -> None:
    core = Turn(
        question="Which four functions make up the AI RMF Core?",
        answer=CORE,
        citations=(CitedSpan(doc_id="rmf", unit=4, start=10, end=120, quote="four functions"),),
    )
    resolution = resolve_follow_up("What does the second one do?", [core])
    assert resolution.referents == ("MAP",)
    assert resolution.answer_question == "What does MAP do?"
    assert resolution.context_words[0] == "map"
    assert not {"govern", "measure", "manage"} & set(resolution.context_words)
    assert resolution.to_json()["referents"] == ["MAP"]
    # Without an ordinal nothing is named.
    plain = resolve_follow_up("What do they do?", [core])
    assert plain.referents == ()
    assert plain.answer_question == "What do they do?"


def test_items_keep_their_parentheses_and_both_needs_no_noun_of_its_own() -> None:
    tiers = (
        "The Tiers reflect practices as: Partial (Tier 1), Risk Informed (Tier 2), "
        "Repeatable (Tier 3), and Adaptive (Tier 4). [1]"
    )
    first = referred_items("How long from the first of those Tiers to the last?", "x", tiers)
    assert first.named == ("Partial (Tier 1)",)
    assert first.question == "How long from Partial (Tier 1) to the last?"
    assert referred_items("Which is faster, both of them?", "x", STRATEGIES).named == (
        "tree traversal",
        "collapsed tree",
    )
    # "both" before a noun of its own names that noun; a version number counts nothing.
    assert referred_items("Do both documents say so?", "x", STRATEGIES).named == ()
    core = referred_items("The second one?", "Which CSF 2.0 functions?", "A: x, y and z.")
    assert core.named == ("y",)


def test_the_list_is_the_latest_one_an_earlier_answer_gave() -> None:
    strategies = Turn(question="Which two querying strategies does RAPTOR have?", answer=STRATEGIES)
    second = Turn(
        question="How does the second one choose nodes?",
        answer="The collapsed tree method evaluates nodes across all layers at once. [1]",
    )
    # The turn before gives no list; the one before it does.
    both = resolve_follow_up("Which of the two did better?", [strategies, second])
    assert both.referents == ("tree traversal", "collapsed tree")
    assert both.answer_question == "Which of tree traversal and collapsed tree did better?"
    assert both.referent_others == ()  # every item is named: no other item to keep out
    one = resolve_follow_up("And the first one?", [strategies, second])
    assert one.referents == ("tree traversal",)
    assert one.referent_others == ("collapsed tree",)
    assert one.to_json()["referent_others"] == ["collapsed tree"]
    # No earlier answer gives a list: nothing is named.
    assert resolve_follow_up("And the first one?", [second]).referents == ()
