"""The extractive answerer's answerability rules: named terms must be in the sources, and the
support threshold; with a hashing embedder, no model and no index."""

from __future__ import annotations

import dataclasses

import pytest

from truthbase.answer import NO_ANSWER, ExtractiveAnswerer, Source
from truthbase.answer.follow_up import (
    Focus,
    focus_coverage,
    follow_up_focus,
    names_other_item,
    new_words_held,
)
from truthbase.answer.names import (
    code_terms,
    holds_codes,
    holds_phrases,
    missing_named_terms,
    named_terms,
    one_of_a_family,
    quoted_phrases,
)
from truthbase.answer.quotable import (
    code_line,
    running_lines,
    without_running_lines,
    without_stray_lines,
)
from truthbase.answer.scoring import usable
from truthbase.cite import parse_answer
from truthbase.cite.lexicon import DEFAULT_WORDNET
from truthbase.config import ExtractiveSettings
from truthbase.embed._fake import HashingEmbedder
from truthbase.text.vocabulary import terms
from truthbase.turns import CitedSpan, Resolution


def _source(n: int, text: str, title: str = "Doc") -> Source:
    return Source(
        n=n, doc_id="d" * 64, title=title, unit=0, start=0, end=len(text), text=text, rects=()
    )


def _drafted(question: str, sources: list[Source]) -> str:
    """The text of the extractive answer (hashing embedder, no refusal threshold)."""
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    return parse_answer("".join(answerer.draft(question, sources).tokens)).text


SOURCES = [
    _source(
        1,
        "RAPTOR achieves an accuracy of 62.4% on the QuALITY dataset with GPT-4. "
        "The tree is built by recursive clustering and summarization of the chunks.",
        title="raptor",
    )
]


def test_named_terms_are_acronyms_digits_and_capitalized_words_inside_sentences() -> None:
    assert named_terms("What accuracy does RAPTOR achieve on the HotpotQA benchmark?") == [
        "raptor",
        "hotpotqa",
    ]
    assert named_terms("Which clauses of ISO/IEC 42001 apply?") == ["iso", "iec", "42001"]
    assert named_terms("What is Mrs. Bennet's first name?") == ["mrs", "bennet"]
    # the first word of the question or of a sentence is capitalized anyway
    assert named_terms("How is the tree built? Explain briefly.") == []
    assert named_terms("why is the tree built?") == []


def test_german_nouns_are_no_names_and_cjk_names_only_its_latin_and_digit_runs() -> None:
    # German capitalizes every noun: only acronyms and numbers name something there.
    assert named_terms("In welchem Semester wurde das Skript zur Geometrie geschrieben?") == []
    assert named_terms("Unter welchem anderen Namen ist die SNCF-Metrik bekannt?") == ["sncf"]
    # The language is detected, or given.
    assert named_terms("Wer ist Martin?", language="en") == ["martin"]
    # A Chinese question is one "word" of CJK characters: before, each of its character
    # bigrams was a named term (and any one missing from the sources refused the question).
    assert named_terms("东北电气2018年第一季度的营业收入是多少？") == ["2018"]
    assert named_terms("公司NetApp的2018年报告") == ["netapp", "2018"]


def test_missing_named_terms_look_in_the_text_and_the_titles() -> None:
    assert missing_named_terms("What does RAPTOR reach on QuALITY?", SOURCES) == ()
    assert missing_named_terms("What does RAPTOR reach on HotpotQA?", SOURCES) == ("hotpotqa",)
    titled = [_source(1, "She was the second of five daughters.", "Pride and Prejudice")]
    assert missing_named_terms("Who is the second daughter in Pride and Prejudice?", titled) == ()


def test_a_question_naming_what_no_source_mentions_is_refused_however_close() -> None:
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    refused = answerer.select("What accuracy does RAPTOR achieve on the HotpotQA dataset?", SOURCES)
    assert refused.refused and refused.support == 0.0
    assert refused.best_score > 0.0 and refused.missing_terms == ("hotpotqa",)
    assert answerer.compose(refused) == NO_ANSWER

    answered = answerer.select("What accuracy does RAPTOR achieve on the QuALITY dataset?", SOURCES)
    assert not answered.refused and answered.support == answered.best_score > 0.0
    assert answered.chosen[0].text.startswith("RAPTOR achieves an accuracy of 62.4%")
    assert answerer.compose(answered).endswith("[1]")


def test_the_named_term_rule_can_be_turned_off() -> None:
    settings = ExtractiveSettings(threshold=0.0, require_named_terms=False)
    answerer = ExtractiveAnswerer(HashingEmbedder(), settings)
    selection = answerer.select("What accuracy does RAPTOR achieve on HotpotQA?", SOURCES)
    assert not selection.refused and selection.missing_terms == ()


def test_an_answer_probability_below_the_threshold_is_refused_and_reported() -> None:
    # The default weights give support alone a weight of 20: a probability short of 1 - 1e-6
    # for any support below 1.
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.999999))
    draft = answerer.draft("What accuracy does RAPTOR achieve on the QuALITY dataset?", SOURCES)
    assert "".join(draft.tokens) == NO_ANSWER
    assert draft.info["threshold"] == 0.999999
    assert 0.0 < draft.info["answer_probability"] < 0.999999
    assert abs(draft.info["refusal_features"]["support"] - draft.info["support"]) < 1e-4
    assert 0.0 < draft.info["support"] == draft.info["best_score"] < 0.99
    assert draft.info["missing_terms"] == []


def test_a_reference_marker_inside_a_source_sentence_cites_nothing() -> None:
    """A paper's "[2]" quoted in the answer is the paper's reference, not source 2."""
    sources = [
        _source(1, "Late interaction scores every query token against the passage tokens [2]."),
        _source(2, "An unrelated passage about something else entirely."),
    ]
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    draft = answerer.draft("How does late interaction score passages?", sources)
    text = "".join(draft.tokens)
    assert text.endswith("[1]") and "[2]" not in text
    assert [c.numbers for c in parse_answer(text).claims] == [(1,)]


def test_each_table_row_is_a_candidate_of_its_own() -> None:
    """A table's rows have no sentence end: each row line is one claim, with its own cells."""
    rows = (
        "Company | City | Employees\n"
        "Toyota Motor North America | Torrance | 3000\n"
        "Cisco Systems | San Jose | 127"
    )
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    texts = [c.text for c in answerer.candidates("How many Toyota employees?", [_source(1, rows)])]
    assert "Toyota Motor North America | Torrance | 3000" in texts
    assert all("\n" not in t for t in texts)


def test_a_period_inside_a_cell_does_not_cut_its_row() -> None:
    """ "Plexus Corp." ends no sentence inside a row: the row's cells stand in one candidate."""
    rows = (
        "Notice | Company | City | Employees\n"
        "11/19/2015 | Plexus Corp. | Fremont | 204\n"
        "11/13/2015 | AT&T | Oakland | 92"
    )
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    texts = [c.text for c in answerer.candidates("Plexus workers in Fremont?", [_source(1, rows)])]
    assert "11/19/2015 | Plexus Corp. | Fremont | 204" in texts
    assert not any(t.startswith("| Fremont") or t.endswith("Corp.") for t in texts)


def test_a_row_of_dates_and_counts_is_usable_where_a_line_of_numbers_is_not() -> None:
    """A row's digits are its data; outside a table, a line mostly of digits is debris (an axis,
    a list of page numbers) and is no answer."""
    row = "10/12/2015 | 12/13/2015 | 10/14/2015 | Twitter, Inc. | SF | 240 | Layoff"
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    texts = [c.text for c in answerer.candidates("Twitter layoffs?", [_source(1, "A | B\n" + row)])]
    assert row in texts
    axis = "10/12/2015 12/13/2015 10/14/2015 Twitter 240 2016 2017"
    assert not answerer.candidates("Twitter layoffs?", [_source(1, axis)])


def test_a_running_header_on_two_pages_of_a_document_is_no_answer() -> None:
    """The same line atop two pages of one document is its running header: it matches every
    question about the document and answers none."""
    header = "Northeast Electric Development Company: first quarter report for 2018."

    def page(n: int, unit: int, body: str) -> Source:
        text = f"{header}\n{body}"
        return Source(
            n=n,
            doc_id="e" * 64,
            title="q1",
            unit=unit,
            start=0,
            end=len(text),
            text=text,
            rects=(),
        )

    sources = [
        page(1, 2, "Operating revenue in the first quarter of 2018 fell by 16.55 percent."),
        page(2, 5, "Financial expenses fell because no new loans were taken in the quarter."),
    ]
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    texts = [c.text for c in answerer.candidates("first quarter report 2018 revenue?", sources)]
    assert header not in texts
    assert any("16.55" in t for t in texts)
    # on one page only, the same line is a sentence like any other
    assert header in [c.text for c in answerer.candidates("report 2018?", sources[:1])]


CATALOG = [
    _source(
        1,
        "The Privacy Risk Assessment Methodology has a catalog of example problems. "
        "The catalog is used in privacy risk assessments by many organizations.",
        title="csf",
    ),
    _source(
        2,
        "Tree traversal starts at the root layer and descends one layer at a time. "
        "The collapsed tree compares every node of every layer at once.",
        title="raptor",
    ),
]


def _follow_up(question: str, context: tuple[str, ...], new: tuple[str, ...] = ()) -> Resolution:
    return Resolution(
        question=question,
        searched_for=f"{question} ({' '.join(context)})",
        kind="resolved",
        reason="test",
        context_words=context,
        new_words=new,
    )


def test_a_follow_up_whose_passages_lack_the_words_it_adds_is_refused() -> None:
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, follow_up_new_support=0.5)
    )
    question = "How many does that catalog contain?"
    context = ("privacy", "risk", "assessment", "methodology", "catalog", "example", "problems")
    lacking = answerer.draft(question, CATALOG, _follow_up(question, context, ("contain",)))
    assert "".join(lacking.tokens) == NO_ANSWER
    assert lacking.info["new_words_held"] == 0.0
    held = answerer.draft(question, CATALOG, _follow_up(question, context, ("organizations",)))
    assert "".join(held.tokens) != NO_ANSWER
    assert held.info["new_words_held"] == 1.0
    # Not a follow-up, or one that adds nothing: the rule has nothing to check.
    alone = answerer.draft(question, CATALOG)
    assert "".join(alone.tokens) != NO_ANSWER
    assert "new_words_held" not in alone.info


@pytest.mark.skipif(
    not (DEFAULT_WORDNET / "index.noun").is_file(),
    reason="WordNet (Debian wordnet-base) is not installed: scripts/install.sh installs it",
)
def test_a_phrasal_verb_a_follow_up_adds_is_held_by_its_synonym() -> None:
    numbers = [_source(1, "The first number will represent the generation of the framework.")]

    def held(question: str, new: str, sources: list[Source] = numbers) -> float | None:
        return new_words_held(_follow_up(question, (), (new,)), {1}, sources)

    # "stand for" shares a sense with "represent": the passage says what the question adds.
    assert held("What does the first number stand for?", "stand") == 1.0
    # "stand" alone, or a phrase WordNet does not know, must be there as a word.
    assert held("Where does the first number stand?", "stand") == 0.0
    assert held("What does the first number stand on?", "stand") == 0.0
    # A single word's synonym does not count ("left": "forget", a sense of "leave").
    forgot = [_source(1, "She found she had forgotten the little golden key.")]
    assert held("What was left on the table?", "left", forgot) == 0.0


def test_a_follow_up_is_answered_by_its_own_words_and_weaker_by_the_borrowed_ones() -> None:
    question = "And which one looks at all of them at once?"
    context = ("collapsed", "tree", "node", "layer")
    resolution = _follow_up(question, context)
    focus = follow_up_focus(question, resolution, 0.5)
    assert focus is not None
    assert focus.weight == 0.5
    assert "layer" in focus.lent
    assert focus.cosine_text == f"{question} (collapsed tree node layer)"
    assert follow_up_focus(question, resolution, 0.0) is None
    assert follow_up_focus(question, None, 0.5) is None
    query, sentence = ["once"], ["once", "tree"]
    idf = {"once": 1.0, "tree": 1.0, "layer": 1.0}
    plain = focus_coverage(query, sentence, idf, 1.0, None)
    lent = Focus(lent=("tree", "layer"), weight=0.5, cosine_text="")
    # own 1 of 1, lent 1 of 2 at half weight: (1 + 0.5) / (1 + 1)
    assert plain == 1.0
    assert focus_coverage(query, sentence, idf, 1.0, lent) == 0.75


def test_the_item_an_ordinal_names_counts_as_the_question_s_own_words() -> None:
    question = "What does the second one do?"
    resolution = Resolution(
        question=question,
        searched_for=f"{question} (collapsed tree traversal)",
        kind="resolved",
        reason="test",
        context_words=("collapsed", "tree", "traversal"),
        referents=("collapsed tree",),
    )
    focus = follow_up_focus(question, resolution, 0.25)
    assert focus is not None
    assert set(focus.named) == set(terms("collapsed tree"))
    assert set(focus.lent) == set(terms("traversal"))  # the named ones are not lent again
    # own: collapsed, tree (both found); lent: traversal at a quarter, not found: 2 / 2.25
    found = focus_coverage([], terms("collapsed tree"), {}, 1.0, focus)
    assert abs(found - 2 / 2.25) < 1e-9
    # Without lent words the embedding is compared with the question and the item.
    named_only = follow_up_focus(question, resolution, 0.0)
    assert named_only is not None
    assert named_only.cosine_text == f"{question} (collapsed tree)"


def test_a_follow_up_about_one_item_of_a_list_cites_no_sentence_naming_the_others() -> None:
    core = [
        _source(
            1,
            "The Core is composed of four functions: GOVERN, MAP, MEASURE, and MANAGE. "
            "The MAP function establishes the context to frame risks.",
            title="rmf",
        )
    ]
    question, asked = "What does the second one do?", "What does MAP do?"
    resolution = Resolution(
        question=question,
        searched_for=f"{question} (map)",
        kind="resolved",
        reason="test",
        referents=("MAP",),
        referent_others=("GOVERN", "MEASURE", "MANAGE"),
        resolved_question=asked,
    )
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    cited = "".join(answerer.draft(asked, core, resolution).tokens)
    assert "establishes the context" in cited
    assert "four functions" not in cited
    # Without the list's other items the list sentence is cited too (the rule is what differs).
    plain = "".join(
        answerer.draft(asked, core, dataclasses.replace(resolution, referent_others=())).tokens
    )
    assert "four functions" in plain
    # A sentence naming another item is still cited when it is all there is.
    only_list = [_source(1, "The Core has four functions: GOVERN, MAP, MEASURE, and MANAGE.")]
    assert "four functions" in "".join(answerer.draft(asked, only_list, resolution).tokens)
    assert names_other_item("Outcomes in MAP feed MEASURE.", resolution)
    assert not names_other_item("The MAP function frames risks.", resolution)
    assert not names_other_item("Outcomes in MAP feed MEASURE.", None)


def test_a_short_heading_line_does_not_join_the_answer_beside_the_best_sentence() -> None:
    from truthbase.answer.scoring import Candidate

    def cand(rank: int, start: int, text: str, score: float) -> Candidate:
        return Candidate(
            n=1, doc_id="d" * 64, unit=0, start=start, end=start + len(text), text=text,
            score=score, cosine=score, lexical=score, context=score, rank=rank,
        )  # fmt: skip

    best = cand(0, 0, "The tiers describe how rigorous an organization's practices are.", 0.9)
    heading = cand(1, 100, "CSF Implementation Example", 0.88)
    sentence = cand(2, 200, "Tiers range from Partial to Adaptive in four steps.", 0.85)
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.8)
    )
    chosen = answerer.choose([best, heading, sentence]).chosen
    assert [c.text for c in chosen] == [best.text, sentence.text]
    # Alone, a short line may still be the answer (a value, a cell).
    assert [c.text for c in answerer.choose([heading]).chosen] == [heading.text]


def test_a_comparison_shows_the_earlier_side_beside_the_new_one() -> None:
    earlier = "The RAPTOR tree is built by recursive clustering of chunks of 100 tokens."
    new = "Self-RAG retrieves passages on demand when the model emits a retrieval token."
    text = f"{earlier} {new}"
    sources = [_source(1, text, title="papers")]
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    question = "How does Self-RAG compare when it retrieves passages?"
    plain = _follow_up(question, ())
    compared = dataclasses.replace(
        plain,
        compared=(CitedSpan(doc_id="d" * 64, unit=0, start=0, end=len(earlier), quote=earlier),),
    )
    alone = parse_answer("".join(answerer.draft(question, sources, plain).tokens))
    both = parse_answer("".join(answerer.draft(question, sources, compared).tokens))
    assert earlier not in alone.text  # the question's own words choose the new side only
    assert earlier in both.text and new in both.text  # and the comparison adds the earlier one
    assert both.text.index(earlier) < both.text.index(new)  # in source order
    # A span the sources do not hold adds nothing; a refusal stays a refusal.
    elsewhere = dataclasses.replace(
        plain, compared=(CitedSpan(doc_id="e" * 64, unit=0, start=0, end=10, quote="x"),)
    )
    assert "".join(answerer.draft(question, sources, elsewhere).tokens) == "".join(
        answerer.draft(question, sources, plain).tokens
    )
    strict = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=1.0))
    assert "".join(strict.draft(question, sources, compared).tokens) == NO_ANSWER


def test_codes_are_named_whole() -> None:
    assert code_terms("Does CSF 2.0 subcategory ID.RA-08 need GPT-4 or Self-RAG?") == [
        "id.ra-08",
        "gpt-4",
    ]  # "2.0" has no letter, "Self-RAG" no digit: their words say them
    assert code_terms("a well-known end of ID.RA-08.") == ["id.ra-08"]
    assert holds_codes("agreement with GPT-4-based predictions", ["gpt-4"])
    assert not holds_codes("o ID.RA-081: another", ["id.ra-08"])
    assert not holds_codes("GPT-4o", ["gpt-4"])


def test_a_code_of_capitals_is_named_whole_and_its_subcategories_do_not_name_it() -> None:
    assert code_terms("What does the PR.AA category of the CSF Core cover?") == ["pr.aa"]
    assert code_terms("Is U.S. law or C-SCRM or pr.aa named?") == []  # one-letter parts, case
    assert code_terms("The EU-US DATA PRIVACY FRAMEWORK, END-TO-END") == []  # words in capitals
    category = "Identity Management, Authentication, and Access Control (PR.AA): Access is limited."
    assert holds_codes(category, ["pr.aa"])
    assert not holds_codes("o PR.AA-02: Identities are proofed", ["pr.aa"])
    assert not holds_codes("o PR.AA – 02: Identities are proofed", ["pr.aa"])


def test_a_question_naming_a_category_cites_the_category_not_its_subcategories() -> None:
    # The subcategories repeat the question's words ("identities", "credentials"), the
    # category's own sentence is the one that names it whole.
    listing = _source(
        1,
        "Identity Management, Authentication, and Access Control (PR.AA): Access to assets is "
        "limited to authorized users. PR.AA-01: Identities and credentials for authorized users "
        "are managed. Awareness and Training (PR.AT): Personnel are provided with training.",
    )
    text = _drafted("What does the PR.AA category cover for identities and credentials?", [listing])
    assert text.startswith("Identity Management"), text
    assert "PR.AA-01" not in text


def test_a_quoted_name_is_a_phrase_and_a_quoted_question_is_none() -> None:
    assert quoted_phrases("What does the 'No Critic' ablation of Self-RAG train on?") == [
        "no critic"
    ]  # the apostrophe of "Self-RAG's" would open none
    assert quoted_phrases("Is it “No Critic”, or 'Fig. 1'?") == ["no critic", "fig. 1"]
    # scare quotes around one common word name nothing; nor does a letter
    assert quoted_phrases("What is a 'good' score, and is the 'a' prefix used?") == []
    assert quoted_phrases('Does "What is the capital of France?" need retrieval?') == []
    assert quoted_phrases("Alice's cat and the Cheshire-Cat's grin") == []
    assert holds_phrases("No Critic trains an LM", ["no critic"])
    assert not holds_phrases("No Retriever or Critic baselines", ["no critic"])


def test_a_question_quoting_a_name_cites_the_sentence_that_holds_it_whole() -> None:
    source = _source(
        1,
        "We see a large gap between our model and the No Retriever or Critic baselines in "
        "training. No Critic trains an LM on pairs augmented with one retrieved document.",
    )
    text = _drafted("What does the 'No Critic' baseline train on in training?", [source])
    assert text.startswith("No Critic trains"), text


def test_a_question_naming_one_code_of_a_family_cites_the_sentence_that_holds_it() -> None:
    listing = _source(
        1,
        "Suppliers are watched closely by the organization as a whole. "
        "ID.RA-07: Changes and exceptions are managed and assessed for risk impact. "
        "ID.RA-08: Processes for receiving and responding to disclosures are established. "
        "ID.RA-10: Critical suppliers are assessed prior to acquisition.",
    )
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    question = "What must organizations establish for suppliers under ID.RA-08?"
    answer = parse_answer("".join(answerer.draft(question, [listing]).tokens))
    assert answer.text and all("ID.RA-08" in s for s in answer.text.split(" [1]") if s.strip())
    # A code with no sibling in the sources is context, not the item asked about: no rule.
    lone = _source(1, "The demonstrations given to GPT-4 show retrieval. Paris is a capital.")
    candidates = answerer.candidates("Which demonstrations does GPT-4 get?", [lone])
    assert one_of_a_family(["gpt-4"], candidates) == []
    family = answerer.candidates(question, [listing])
    assert one_of_a_family(["id.ra-08"], family) == ["id.ra-08"]


def test_beside_a_model_s_rewrite_the_extractive_answerer_reads_the_question_s_words() -> None:
    embedded = "Each chunk is embedded with SBERT, a BERT-based encoder."
    timing = "Building the tree of embeddings takes time linear in the corpus."
    sources = [_source(1, f"{embedded} {timing}")]
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    rewrite = "How long does building the tree of embeddings take?"  # a small model's slip
    rewritten = Resolution(
        question="What is each chunk embedded with?",
        searched_for=rewrite,
        kind="rewritten",
        reason="test",
    )
    read = parse_answer("".join(answerer.draft(rewrite, sources, rewritten).tokens))
    assert embedded in read.text and timing not in read.text
    # Without a follow-up the same question is answered by its own words.
    alone = parse_answer("".join(answerer.draft(rewrite, sources).tokens))
    assert timing in alone.text


def test_a_numbered_heading_is_neither_quoted_nor_glued_to_the_sentence_under_it() -> None:
    # A chunk that opens with its section's heading, in sentence case or in capitals: the
    # answer quotes the sentence under it, not "2.2 Encoding and escaping XMP-metadata are ...".
    sources = [
        _source(
            1,
            "2.2 Encoding and escaping\n"
            "XMP-metadata are stored as UTF-8 in the PDF, and the package escapes them.\n",
        ),
        _source(2, "2 What the euler package provides\n"),
    ]
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "How are XMP-metadata encoded and escaped in the PDF by the euler package?"
    texts = [c.text for c in answerer.select(question, sources).candidates]
    assert texts == ["XMP-metadata are stored as UTF-8 in the PDF, and the package escapes them."]


def test_a_numbered_heading_of_many_words_is_no_list_item_to_quote() -> None:
    # "3. Introduction to CSF Profiles and Tiers" has six words after its number, as many as a
    # list item quoted on its own; read as a title, it is a heading, and the answer quotes the
    # sentences under it (the seed's nist-csf-2.0.pdf, page 6).
    sources = [
        _source(
            1,
            "3. Introduction to CSF Profiles and Tiers\n"
            "This section defines the concepts of CSF Profiles and Tiers.\n"
            "1. The organization selects the Tiers that fit its goals and its profiles.\n",
        )
    ]
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "What does the introduction to CSF Profiles and Tiers define?"
    texts = [c.text for c in answerer.select(question, sources).candidates]
    assert texts == [
        "This section defines the concepts of CSF Profiles and Tiers.",
        "1. The organization selects the Tiers that fit its goals and its profiles.",
    ]


def test_a_caption_line_does_not_open_the_sentence_under_it() -> None:
    # The splitter sees no sentence end after a caption's title; joined, the caption opened
    # the next sentence: "Fig. 4. CSF Tiers for cybersecurity risk governance and management
    # Tiers should complement ..." (nist-csf-2.0.pdf, page 8). A caption wrapped over two lines
    # stays one sentence.
    text = (
        "Fig. 4. CSF Tiers for cybersecurity risk governance and management\n"
        "Tiers should complement an organization's risk management methodology.\n"
        "Figure 3: Analysis of the ablation studies for the key components of the\n"
        "Critic model and its inference.\n"
    )
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "What should Tiers complement in an organization?"
    texts = [c.text for c in answerer.select(question, [_source(1, text)]).candidates]
    assert sorted(texts) == sorted(
        [
            "Tiers should complement an organization's risk management methodology.",
            "Figure 3: Analysis of the ablation studies for the key components of the\n"
            "Critic model and its inference.",
        ]
    )


def test_a_line_of_prose_cut_short_by_the_end_of_its_source_is_not_quoted() -> None:
    # The rest of the sentence went on past a figure's glyphs in another chunk: quoted, it read
    # "For example, we suspected bugs in TraceMonkey's handling of type-unstable [1]".
    text = (
        "We modified the fuzz tester to generate loops and to test some constructs.\n"
        "For example, we suspected bugs in TraceMonkey's handling of type-unstable\n\n"
    )
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "Which bugs did they suspect in the handling of type-unstable loops?"
    texts = [c.text for c in answerer.select(question, [_source(1, text)]).candidates]
    assert texts == ["We modified the fuzz tester to generate loops and to test some constructs."]
    # A line that names, not states, is whole as a line; so is a lead-in that ends with a colon.
    for line in ("9000x9000 pixels at 800 DPI", "The package offers the following options:"):
        texts = [c.text for c in answerer.select(question, [_source(1, line)]).candidates]
        assert texts == [line]


def test_a_quotation_cut_at_a_sentence_end_inside_it_is_quoted_whole() -> None:
    # The splitter cuts after "Rule forty-two."; the answer quoted that alone, the rule itself
    # in the next span (alice-in-wonderland.epub, chapter 12).
    text = (
        '"Nothing whatever," said Alice.\n'
        'The King then read from his book: "Rule forty-two. All persons more than a mile high '
        'to leave the court."\n"I\'m not a mile high," said Alice.\n'
    )
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "Which rule did the King read from his book?"
    texts = [c.text for c in answerer.select(question, [_source(1, text)]).candidates]
    assert (
        'The King then read from his book: "Rule forty-two. All persons more than a mile high '
        'to leave the court."'
    ) in texts
    assert not any(t.startswith("All persons") for t in texts)
    # A quotation never closed on its line stays as the splitter cut it.
    open_end = 'She began: "It was a dark night. The wind rose.\nNobody came.'
    texts = [c.text for c in answerer.select(question, [_source(1, open_end)]).candidates]
    assert 'She began: "It was a dark night.' in texts


def test_a_title_page_is_not_joined_across_a_heading_to_the_sentence_under_it() -> None:
    # The lines of a manual's title page end no sentence; joined up to the first sentence end
    # they made "The eso-pic package Rolf Niepraschk Rolf.Niepraschk@gmx.de 1 Introduction
    # This package makes it easy ..." (the library's eso-pic.pdf, page 1).
    sources = [
        _source(
            1,
            "The eso-pic package\nRolf Niepraschk\nRolf.Niepraschk@gmx.de\n1 Introduction\n"
            "This package makes it easy to add picture commands to every page.\n",
        )
    ]
    answerer = ExtractiveAnswerer(
        HashingEmbedder(), ExtractiveSettings(threshold=0.0, max_sentences=3, keep_ratio=0.1)
    )
    question = "Which package adds picture commands to every page?"
    texts = [c.text for c in answerer.select(question, sources).candidates]
    assert texts == ["This package makes it easy to add picture commands to every page."]


HEADER = "Published as a conference paper at ICLR 2024"


def test_a_running_header_is_found_on_two_pages_of_one_document_only() -> None:
    pages = [
        ("a", 5, f"{HEADER}\nOne drawback of the collapsed tree is its cost.\n7"),
        ("a", 6, f"{HEADER}\nThe tree traversal approach is slower.\n8"),
        ("a", 6, "Only on this page stands this line of text.\nThe end."),
        ("b", 1, f"{HEADER}\nAnother document."),
    ]
    found = running_lines(pages)
    assert found == {"a": frozenset({HEADER.casefold()})}  # "7" and "8" are no header


def test_a_running_line_is_cut_from_the_head_and_tail_of_a_span() -> None:
    headers = frozenset({HEADER.casefold(), "nist ai 100-1 ai rmf 1.0"})
    text = f"{HEADER}\nOne drawback, however, of the collapsed tree\napproach is its cost."
    start, end = without_running_lines(text, 0, len(text), headers)
    assert text[start:end] == "One drawback, however, of the collapsed tree\napproach is its cost."
    text = "Risk is measured.\nNIST AI 100-1 AI RMF 1.0"
    assert text[slice(*without_running_lines(text, 0, len(text), headers))] == "Risk is measured."
    # a numbered heading that the cut header leaves at the head goes too
    text = f"{HEADER}\n6.2. Adding a New Patch\nTo add a new patch, tell Quilt."
    assert text[slice(*without_running_lines(text, 0, len(text), headers))] == (
        "To add a new patch, tell Quilt."
    )
    assert without_running_lines(HEADER, 0, len(HEADER), headers) == (0, 0)  # nothing else
    plain = "6.2. Adding a New Patch\nTo add a new patch, tell Quilt."
    assert without_running_lines(plain, 0, len(plain), headers) == (0, len(plain))


def test_the_answerer_quotes_no_running_header() -> None:
    first = f"{HEADER}\nOne drawback of the collapsed tree approach is that it searches every node."
    second = f"{HEADER}\nThe collapsed tree approach consistently performs better than traversal."
    sources = [
        dataclasses.replace(_source(1, first), unit=5),
        dataclasses.replace(_source(2, second), unit=6),
    ]
    answerer = ExtractiveAnswerer(HashingEmbedder(), ExtractiveSettings(threshold=0.0))
    found = answerer.candidates("What is the drawback of the collapsed tree approach?", sources)
    assert found and all(not c.text.startswith("Published") for c in found), found
    assert any(c.text.startswith("One drawback") for c in found)


def test_a_code_listing_line_is_told_from_prose() -> None:
    # Real lines of the library's manuals (lwarp, euler, booktabs, caption).
    for line in (
        "62 \\DeclareSymbolFont{EulerScript}{U}{eus}{m}{n}",
        "8 }",
        "{\\minipagefullwidth}",
    ):
        assert code_line(line), line
    for line in (
        "3 Use of the new commands \\toprule In the simplest of cases",
        "The full syntax of the command is \\cmidrule[wd](trim){a-b}",
        "\\EverySelectfont{⟨code⟩} declares ⟨code⟩ that is saved internally",
        "2 What the package provides",
    ):
        assert not code_line(line), line


def test_a_listing_is_cut_from_the_sentence_it_touches() -> None:
    # The splitter sees no sentence end in code: lwarp's page 682 gave one span from its
    # listing's lines to the sentence after them.
    text = (
        "2 \\newcommand*{\\bookmarksetup}[1]{}\n3 \\newcommand*{\\bookmark}[2][]{}\n"
        "4.2 Package booktabs\nbooktabs is emulated during HTML output, and used as-is\n"
        "during print output.\n5 \\LetLtxMacro\\toprule\\relax\n6 }"
    )
    start, end = without_stray_lines(text, 0, len(text))
    # the listing's lines go from the head and the tail, the heading the cut left at the head too
    assert text[start:end] == (
        "booktabs is emulated during HTML output, and used as-is\nduring print output."
    )
    start, end = without_stray_lines(text, 0, text.index("\n4.2"))
    assert start == end  # nothing but code
    # A listing with lead-ins between its numbered lines is no sentence.
    listing = (
        "Disable PDF file embedding:\n25 \\DeclareRobustCommand{\\atfi@embedfile}[1]{}\n"
        "The displayed output for a reference:\n26 \\newcommand*{\\LWR@attachfile@appearance}{}\n"
        "28 \\DeclareRobustCommand{\\atfi@set@appearance}[1]{%\nand a reference at last."
    )
    assert without_stray_lines(listing, 0, len(listing)) == (0, 0)
    # Code displayed inside a sentence stays.
    sentence = (
        "The settings may be checked using the following:\n\\showcaptionsetup{figure}\n"
        "placed just before the \\subfloat will show in the log what overrides apply."
    )
    assert without_stray_lines(sentence, 0, len(sentence)) == (0, len(sentence))


def test_a_line_of_code_that_ends_the_sentence_stays_in_it() -> None:
    # PSfrag's guide: the sentence ends on a line that reads as code; cut, the answer quoted
    # "... pass the option scanall to psfrag.sty in the" and stopped there.
    text = (
        "To turn on scanning for the entire document, pass the option scanall to psfrag.sty "
        "in the\n\\usepackage command."
    )
    assert without_stray_lines(text, 0, len(text)) == (0, len(text))
    # mdwtab's manual: a parenthesis closed on a line of its own.
    row = "Extra space added between rows (added before any following\n\\hline)."
    assert without_stray_lines(row, 0, len(row)) == (0, len(row))
    # etoolbox's manual: the rest ends in a command, the line goes on with "and".
    both = "Use this version to check if a command may be patched with \\apptocmd\nand \\pretocmd."
    assert without_stray_lines(both, 0, len(both)) == (0, len(both))
    # A listing after a lead-in still goes, at the tail as at the head.
    lead = "Load it as follows:\n\\usepackage{psfrag}"
    assert without_stray_lines(lead, 0, len(lead)) == (0, lead.index("\n"))


def test_a_bare_number_on_its_own_line_is_cut_from_a_quote() -> None:
    # The Debian Live manual's EPUB numbers each paragraph ("307" above "lb config: ..."); a
    # PDF page ends with its number: neither is a word of the sentence it touches.
    text = "307\nlb config: Responsible for initializing a Live system configuration.\n37"
    start, end = without_stray_lines(text, 0, len(text))
    assert text[start:end] == "lb config: Responsible for initializing a Live system configuration."
    # A number inside the sentence stays.
    text = "The chunks are\n100\ntokens long."
    assert without_stray_lines(text, 0, len(text)) == (0, len(text))


@pytest.mark.parametrize(
    ("line", "citable"),
    [
        # A results row of a table the extractor did not find: a label, then its values.
        ("BM25 with RAPTOR 27.93% 21.17% 5.70% 17.03%", True),
        ("Retrieve 93.8 ISSUP 93.5 ISREL 80.2 ISUSE 73.5", True),
        ("SELF-RAG 13B 55.8 69.3 74.5 73.1 80.2 31.7 37.0", True),
        # Numbers without a label, one value, or debris stay out as before.
        ("27.93% 21.17% 5.70% 17.03% 12.40% 9.10%", False),
        ("Table 3 2024-01-05 2024-02-07 2024-03-09", False),
        ("x 12 34 56 78 90 12 34 56 78", False),
        ("A1 -> 12 / 34 ## 56 // 78 ** 90", False),
    ],
)
def test_a_results_row_is_a_sentence_an_answer_may_cite(line: str, citable: bool) -> None:
    assert usable(line, 20, 600) is citable


def test_a_listing_ending_in_a_period_is_still_cut_from_a_lead_in() -> None:
    # Two lines of code cut at the tail are a listing, whatever the last one ends with; so is
    # one line after a rest whose last line is code, not prose.
    two = "Put this in the preamble:\n\\usepackage{fontspec}\n\\usepackage{lmodern}."
    assert without_stray_lines(two, 0, len(two)) == (0, two.index("\n"))
    after_code = "Put this in the preamble:\n\\usepackage[utf8]{inputenc}\n\\usepackage{lmodern}."
    start, end = without_stray_lines(after_code, 0, len(after_code))
    assert not after_code[start:end].endswith("{lmodern}.")
