"""The kind of value a question asks for (a price, a version, a date) and the extractive
answerer's rule: such a question is answered by a close sentence that holds one, or refused."""

from __future__ import annotations

import pytest

from truthbase.answer import NO_ANSWER, ExtractiveAnswerer, Source
from truthbase.answer.policy import extractive_outcome
from truthbase.answer.refusal_model import RefusalFeatures
from truthbase.answer.slots import asked_slot, fills_slot
from truthbase.config import ExtractiveSettings
from truthbase.embed._fake import HashingEmbedder


@pytest.mark.parametrize(
    ("question", "slot"),
    [
        ("How much does it cost to get an organization certified against CSF 2.0?", "price"),
        ("How much federal funding did NIST receive to develop the framework?", "price"),
        ("What was the list price of the LinnSequencer?", "price"),
        ("According to the catalogue, what is the price of the printed script?", "price"),
        ("Was kostet es, wenn ich das Skript gedruckt haben möchte?", "price"),
        ("这台机器的价格是多少？", "price"),
        ("Which version of the Unicode standard does the symbol table follow?", "version"),
        ("What is the minimum Perl version required to run the script?", "version"),
        ("By what year does NIST expect a formal review of the framework?", "date"),
        ("In which year was the notice received?", "date"),
        ("When does the final exam of the lecture take place?", "date"),
        ("According to the syllabus, when does the final exam take place?", "date"),
        ("Wann findet die Klausur zur Vorlesung statt?", "date"),
        # two things asked: a sentence giving either answers it
        ("Wann und wo findet die Klausur zur Vorlesung statt?", None),
        ("When and where does the exam take place?", None),
        ("Welche Prüfungsform hat die Vorlesung, und wann findet die Klausur statt?", None),
        # asks for none of them: a count, a name, a definition, a kind only mentioned
        ("How many GPU hours did it take to train the model?", None),
        ("What is the name of Alice's older sister?", None),
        ("Wann heißt ein topologischer Raum zusammenhängend?", None),
        ("Does the framework tell an organization how much risk it should accept?", None),
        ("How does RAPTOR decide which version of a summary to keep?", None),
        ("What machine were the tree-building cost and time experiments run on?", None),
        ("I'd like a newer version of a package in a stable release: what do I do?", None),
        ("When is a subset of a topological space called closed?", None),
        # a review's misfires: the kind's word in another role
        ("What is the cost function used to train the model?", None),
        ("How much time does the tree building cost?", None),
        ("What is the cost-benefit ratio of the method?", None),
        ("What were the costs and benefits of the approach?", None),
        ("How much weight does the price feature carry?", None),
        ("Wie viel Zeit kostet der Beweis?", None),
        ("Was ist der Schattenpreis im linearen Programm?", None),
        ("这个算法的计算费用是多少？", None),
        ("Which version of the story does Alice remember?", None),
        ("What version control system does the project use?", None),
        ("Which of the two versions is faster?", None),
        ("Welche Version des Beweises ist kürzer?", None),
        ("What year of study is the course intended for?", None),
        ("What date format does the parser accept?", None),
        ("When do the training steps take place relative to inference?", None),
        ("Wann gilt die Aussage statt der Umkehrung?", None),
        ("什么时候使用这个定理？", None),
        ("哪一年级的学生可以选这门课？", None),
        # and real ones with a number, a hyphen or a time
        ("How much does CSF 2.0 certification cost?", "price"),
        ("What does the e-book cost?", "price"),
        ("What time does the exam start?", "date"),
        ("What is the date of the exam?", "date"),
    ],
)
def test_the_kind_of_value_a_question_asks_for(question: str, slot: str | None) -> None:
    assert asked_slot(question) == slot


@pytest.mark.parametrize(
    ("slot", "text", "filled"),
    [
        ("price", "The LinnSequencer sold for $4,995 at launch.", True),
        ("price", "He received three thousand pounds in exchange for the living.", True),
        ("price", "Das gedruckte Skript kostet 15 Euro.", True),
        ("price", "The Quick-Start Guides are free of charge.", True),
        ("price", "The CSF is designed to help organizations of all sizes.", False),
        ("price", "Das Skript kostet 15,- DM oder 15EUR.", True),
        ("price", "Die Teilnahme ist gebührenfrei.", True),
        ("price", "He has ten thousand a year.", True),
        ("price", "售价三十元。", True),
        (
            "price",
            "Development of the framework is directed by the National AI Act of 2020.",
            False,
        ),
        ("version", "The table follows Unicode 15.0.", True),
        ("version", "It needs Perl version 5 or later.", True),
        ("version", "Unicode contains full-width versions of ASCII.", False),
        ("version", "TeX Live 2023 ships the package.", True),
        ("version", "The script needs pdfTeX 1.40 or later.", True),
        ("version", "See the section on packages for the details.", False),
        ("version", "It needs Perl 5 or a newer Perl release.", True),
        ("version", "The second edition adds two chapters.", True),
        ("version", "Written for LaTeX2e.", True),
        ("date", "A review with formal input is planned no later than 2028.", True),
        ("date", "Die Klausur findet am 12.02. um 10 Uhr statt.", True),
        ("date", "It was developed in the 1990s.", True),
        ("date", "The exam is on Mar. 12 at noon.", True),
        ("date", "Die Klausur findet im Wintersemester statt.", True),
        ("date", "公司成立于二〇一八年。", True),
        ("date", "Die Klausur findet zwei Wochen nach Vorlesungsende statt.", True),
        ("date", "Das Skript ist kostenlos verfügbar.", False),
        ("date", "Students may register for the exam online.", False),
    ],
)
def test_a_text_holds_a_value_of_the_kind_or_not(slot: str, text: str, filled: bool) -> None:
    assert fills_slot(slot, text) is filled  # type: ignore[arg-type]


def _source(n: int, text: str) -> Source:
    return Source(
        n=n, doc_id="d" * 64, title="Doc", unit=0, start=0, end=len(text), text=text, rects=()
    )


TOPIC = (
    "Certification against the framework is offered by accredited bodies to organizations of "
    "every size. Organizations seek certification against the framework to show their partners "
    "a managed program."
)


def test_a_question_asking_for_a_price_no_close_sentence_holds_is_refused_as_weak() -> None:
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    question = "How much does certification against the framework cost?"
    selection = answerer.select(question, [_source(1, TOPIC)])
    assert selection.refused and selection.unfilled_slot == "price"
    assert selection.best_score > 0.0 and selection.missing_terms == ()
    assert answerer.compose(selection) == NO_ANSWER
    draft = answerer.draft(question, [_source(1, TOPIC)])
    assert "".join(draft.tokens) == NO_ANSWER and draft.info["unfilled_slot"] == "price"
    # the rule can be turned off: then the passage on the topic answers
    off = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, require_asked_slot=False)
    )
    assert not off.select(question, [_source(1, TOPIC)]).refused


def test_a_close_sentence_that_holds_the_price_is_the_one_cited_not_the_best() -> None:
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, keep_ratio=0.4)
    )
    question = "How much does certification against the framework cost?"
    priced = TOPIC + " The certification fee is $2,000 a year."
    selection = answerer.select(question, [_source(1, priced)])
    assert not selection.refused and selection.unfilled_slot is None
    # not the best sentence, but the one close to it that gives a price, alone
    assert selection.candidates[0].text.startswith("Organizations seek")
    assert [c.text for c in selection.chosen] == ["The certification fee is $2,000 a year."]
    # a question that asks for no price cites the best sentence, as before
    plain = answerer.select("Who offers certification against the framework?", [_source(1, priced)])
    assert plain.chosen[0].text.startswith("Certification against the framework is offered")


def test_an_unfilled_slot_refuses_weak_from_the_weak_threshold_and_refused_below() -> None:
    settings = ExtractiveSettings(threshold=0.0, weak_threshold=0.4)
    others = {"lexical": 0.5, "context": 0.5, "retrieval": 1.0, "margin": 0.1, "agreeing": 1.0}
    close = RefusalFeatures(support=0.45, **others)
    far = RefusalFeatures(support=0.3, **others)
    assert extractive_outcome(True, (), close, settings) == "answered"
    assert extractive_outcome(True, (), close, settings, "price") == "weak"
    assert extractive_outcome(True, (), far, settings, "price") == "refused"


def test_a_question_asking_two_things_is_not_refused_for_the_slot_of_one() -> None:
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    source = _source(
        1,
        "Die Prüfungsform der Vorlesung ist eine schriftliche Klausur. "
        "Zur Klausur sind alle Hilfsmittel erlaubt.",
    )
    question = "Welche Prüfungsform hat die Vorlesung, und wann findet die Klausur statt?"
    assert asked_slot(question) is None
    selection = answerer.select(question, [source])
    assert not selection.refused and selection.unfilled_slot is None
    assert selection.chosen[0].text.startswith("Die Prüfungsform der Vorlesung")


def test_a_quoted_name_cites_among_the_sentences_that_hold_the_price() -> None:
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, keep_ratio=0.3)
    )
    source = _source(
        1,
        'Every student gets the "printed script" at the first lecture of the term. '
        'The "printed script" costs 10 euros at the department office.',
    )
    question = 'What is the price of the "printed script"?'
    draft = answerer.draft(question, [source])
    assert draft.info["unfilled_slot"] is None
    text = "".join(draft.tokens)
    assert "costs 10 euros" in text and "Every student" not in text
