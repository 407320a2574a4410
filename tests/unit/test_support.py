"""The support checks (truthbase.cite.support): each check, the hostile cases, German negation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from truthbase.cite.support import (
    ALIGNED,
    COVERAGE_FLOOR,
    MIN_COSINE,
    MIN_SCORE,
    check_support,
    context_around,
    named_terms,
    negations,
    numbers,
)

QUOTE = "The plant produces forty two units every day."


def codes(claim: str, quote: str = QUOTE, **kwargs: object) -> list[str]:
    return [r.code for r in check_support(claim, quote, **kwargs).reasons]  # type: ignore[arg-type]


def test_the_quote_itself_and_a_verbatim_part_are_supported() -> None:
    for claim in (QUOTE, "the plant produces forty two units", "PRODUCES  forty two units."):
        check = check_support(claim, QUOTE)
        assert check.supported and check.verbatim and check.score == 1.0 and not check.reasons


def test_hostile_negation_is_not_supported() -> None:
    check = check_support("The plant never produces forty two units every day.", QUOTE)
    assert not check.supported
    assert "negation_missing" in [r.code for r in check.reasons]
    assert '"never"' in str(check.reasons[0])


def test_hostile_number_is_not_supported() -> None:
    check = check_support("The plant produces ninety nine units every day.", QUOTE)
    assert not check.supported
    assert [r.code for r in check.reasons] == ["number_missing"]
    assert str(check.reasons[0]) == (
        'number_missing: "ninety nine" is not in the quote'
        " (the answer says ninety nine · the page says forty two)"
    )


def test_number_words_equal_digits() -> None:
    assert check_support("The plant produces 42 units every day.", QUOTE).supported
    assert check_support("Every day the plant produces forty-two units.", QUOTE).supported


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2,048 tokens", "2048"),
        ("2048 tokens", "2048"),
        ("42 % of them", "42%"),
        ("42% of them", "42%"),
        ("42 percent of them", "42%"),
        ("4.5 m", "4.5"),
        ("4,5 m", "4.5"),
        ("two thousand a year", "2000"),
        ("ten thousand a year", "10000"),
        ("4 million", "4000000"),
        ("the 3rd tier", "3"),
        ("the third tier", "3"),
        ("GV.OC-03", "3"),
        ("in 2028", "2028"),
        ("1.000.000 Euro", "1000000"),
    ],
)
def test_numbers_are_normalized(text: str, value: str) -> None:
    assert value in [v for v, _ in numbers(text)]


def test_a_percentage_needs_a_percentage() -> None:
    quote = "The critic achieves 90% agreement on 90 questions."
    assert check_support("The critic achieves 90% agreement.", quote).supported
    assert codes("The critic achieves 91% agreement on 90 questions.", quote) == ["number_missing"]
    assert "number_missing" in codes(
        "The critic achieves 90% agreement.", "The critic achieves agreement on 90 questions."
    )


def test_first_and_second_are_not_numbers() -> None:
    assert numbers("At first, the second model") == []


def test_a_dropped_negation_is_not_supported() -> None:
    quote = "While the AI RMF can be used to prioritize risk, it does not prescribe risk tolerance."
    assert codes("The AI RMF prescribes risk tolerance.", quote) == ["negation_dropped"]
    assert check_support("The AI RMF does not prescribe risk tolerance.", quote).supported
    assert check_support("The AI RMF doesn't prescribe risk tolerance.", quote).supported
    # the negation is in a clause the claim leaves out
    assert check_support("The AI RMF can be used to prioritize risk.", quote).supported


def test_a_verbatim_part_right_after_a_negation_is_not_supported() -> None:
    check = check_support("produces forty two units", "It never produces forty two units.")
    assert not check.supported and [r.code for r in check.reasons] == ["negation_dropped"]
    assert codes("Critic trains an LM", "No Critic trains an LM with input-output pairs") == [
        "negation_dropped"
    ]


def test_a_negation_without_content_words_takes_the_words_before_it() -> None:
    quote = "Is the following statement correct or not? Say true if it is correct."
    assert "negation_dropped" in codes("Is the following statement correct or?", quote)


def test_german_negation() -> None:
    quote = "Die Anlage produziert 42 Einheiten am Tag."
    assert "negation_missing" in codes("Die Anlage produziert nicht 42 Einheiten am Tag.", quote)
    assert "negation_missing" in codes("Die Anlage produziert keine 42 Einheiten am Tag.", quote)
    assert "negation_missing" in codes("Die Anlage produziert nie 42 Einheiten am Tag.", quote)
    negated = "Die Anlage produziert ohne Pause keine Einheiten am Tag."
    assert "negation_dropped" in codes("Die Anlage produziert Einheiten am Tag.", negated)
    assert [n.cue for n in negations(negated)] == ["ohne", "keine"]


def test_not_only_is_no_negation() -> None:
    assert negations("It is not only fast but also cheap.") == []


def test_named_terms() -> None:
    terms = named_terms(
        "RAPTOR with GPT-4 sets a benchmark on QASPER. Mr. Bennet's estate; the Cat."
    )
    assert terms == ["RAPTOR", "GPT-4", "QASPER", "Bennet", "Cat"]


def test_a_named_term_must_be_in_quote_or_context() -> None:
    quote = "RAPTOR with GPT-4 sets a new benchmark on QASPER."
    assert "term_missing" in codes("RAPTOR with GPT-4 sets a new benchmark on NarrativeQA.", quote)
    context = "We also evaluate on NarrativeQA and QuALITY. " + quote
    assert check_support("GPT-4 sets a benchmark on QASPER.", quote, context=context).supported
    # only in the context, and in place of a term the quote has: a substitution
    assert codes("RAPTOR with GPT-4 sets a new benchmark on QuALITY.", quote, context=context) == [
        "term_substituted"
    ]


def test_coverage_rejects_an_unrelated_sentence() -> None:
    check = check_support("Alice followed the white rabbit down the hole.", QUOTE)
    assert [r.code for r in check.reasons] == ["low_coverage"]
    assert check.coverage < 0.2


class FakeEmbedder:
    """Vectors by a fixed table: the cosine is what the test sets."""

    model_id = "fake"
    dim = 2

    def __init__(self, cosine: float) -> None:
        self.cosine = cosine

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        first = np.array([1.0, 0.0], dtype=np.float32)
        other = np.array([self.cosine, np.sqrt(1 - self.cosine**2)], dtype=np.float32)
        return np.stack([first, *([other] * (len(texts) - 1))])


def test_the_embedder_cosine_counts_with_the_alignment() -> None:
    claim = "Every day, the plant produces forty two units."
    high = check_support(claim, QUOTE, embedder=FakeEmbedder(0.9))
    assert high.supported and high.cosine == pytest.approx(0.9)
    assert high.score == pytest.approx(0.5 * high.coverage + 0.5 * 0.9)
    # every word aligned: a low cosine alone no longer rejects a rewording
    reworded = check_support(claim, QUOTE, embedder=FakeEmbedder(0.2))
    assert reworded.coverage == 1.0 and reworded.supported
    # two words in five not aligned and a low cosine: the score is below its threshold
    half = "The plant produces shiny golden units."
    low = check_support(half, QUOTE, embedder=FakeEmbedder(0.2))
    assert low.coverage >= ALIGNED and low.score < MIN_SCORE
    assert [r.code for r in low.reasons] == ["low_score"] and not low.vetoed
    assert check_support(half, QUOTE, embedder=FakeEmbedder(0.5)).supported
    # most words elsewhere: a cosine under MIN_COSINE is the backstop, whatever the score
    other = "The plant produces forty two shiny violet brass trumpets every day."
    backstop = check_support(other, QUOTE, embedder=FakeEmbedder(MIN_COSINE - 0.05))
    assert COVERAGE_FLOOR <= backstop.coverage < ALIGNED
    assert [r.code for r in backstop.reasons] == ["low_similarity"]
    assert check_support(other, QUOTE, embedder=FakeEmbedder(0.9)).supported


def test_empty_inputs_have_reasons() -> None:
    assert codes("", QUOTE) == ["empty_claim"]
    assert codes("A claim.", " ") == ["empty_quote"]


def test_to_json() -> None:
    payload = check_support("The plant produces 99 units every day.", QUOTE).to_json()
    assert payload["supported"] is False
    assert payload["reasons"] == [
        {
            "code": "number_missing",
            "message": '"99" is not in the quote',
            "claim_says": "99",
            "page_says": "forty two",
        }
    ]


def test_context_around_takes_a_sentence_each_side() -> None:
    text = "One. Two is here. Three is the quote. Four follows. Five."
    start = text.index("Three")
    assert (
        context_around(text, start, start + 5) == "Two is here. Three is the quote. Four follows."
    )
