"""Sentence splitting of canonical page text."""

from __future__ import annotations

import time

import pypdfium2 as pdfium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.corpus import SEED
from truthbase.text.sentences import split_sentences


def sents(text: str, *, quoting: bool = False) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text, quoting=quoting)]


def _page_text(name: str, index: int) -> str:
    doc = pdfium.PdfDocument(str(SEED / name))
    try:
        page = doc[index]
        textpage = page.get_textpage()
        text: str = textpage.get_text_range()
        textpage.close()
        page.close()
    finally:
        doc.close()
    return text.replace("\r\n", "\n").replace("\ufffe", "")


def test_basic_and_offsets() -> None:
    text = "  First one. Second one!  Third?\n"
    assert split_sentences(text) == [(2, 12), (13, 24), (26, 32)]
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


@pytest.mark.parametrize(
    "text",
    [
        "Many tools exist, e.g. Foo and Bar, for this.",
        "Some tools, i.e. Foo, are fast.",
        "As shown by Smith et al. (2023) and Wu et al. 2021, it works.",
        "See Fig. 3 for the steps.",
        "It is shown in Eq. 2 and Sec. 4 of the paper.",
        "We compare A vs. B here.",
        "This differs, cf. Table 2, from that.",
        "Apples, pears, etc. are fruits.",
        "Dr. Watson met Prof. Moriarty.",
        "The U.S. Government published it.",
        "The book by J. Smith and A. B. Jones is old.",
        "The outcome GV.OC-01 and ID.AM-08 are in AI RMF 1.0 today.",
        "Read Section 2.3 of the CSF 2.0 document.",
        "The score was 0.85 and 1.5 on average.",
        "Visit https://www.nist.gov/cyberframework or mail csf@nist.gov now.",
        "The set {d1, . . . , dN } is large.",
        "Figure 1 provides examples of potential harms that can be related\nto AI systems.",
    ],
)
def test_no_split_inside(text: str) -> None:
    assert sents(text) == [text]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It ends with etc. The next one.", ["It ends with etc.", "The next one."]),
        ("See Section 2.3. The next one.", ["See Section 2.3.", "The next one."]),
        ("Outcome ID.AM-08. Next.", ["Outcome ID.AM-08.", "Next."]),
        ("Go to https://nist.gov/csf. Then stop.", ["Go to https://nist.gov/csf.", "Then stop."]),
        ("The rate is 0.85. It rose.", ["The rate is 0.85.", "It rose."]),
        ("He said “Stop.” Then left.", ["He said “Stop.”", "Then left."]),
        ("A claim (see below.) Next one.", ["A claim (see below.)", "Next one."]),
        ("A “quoted” end.) Next", ["A “quoted” end.)", "Next"]),
        ("Refer to Appendix A. The rest.", ["Refer to Appendix A.", "The rest."]),
        ("Why? Because. 42 is it.", ["Why?", "Because.", "42 is it."]),
        ("One.\n\nlower case after a blank line", ["One.", "lower case after a blank line"]),
    ],
)
def test_split(text: str, expected: list[str]) -> None:
    assert sents(text) == expected


def test_line_breaks_inside_a_paragraph_do_not_split() -> None:
    text = (
        "The organization uses real-time information to understand and \n"
        "consistently act upon the cybersecurity risks associated with its \n"
        "suppliers. A Community Profile is \n"
        "typically developed for a particular sector.\n"
    )
    assert sents(text) == [
        "The organization uses real-time information to understand and \n"
        "consistently act upon the cybersecurity risks associated with its \n"
        "suppliers.",
        "A Community Profile is \ntypically developed for a particular sector.",
    ]


def test_numbered_lists() -> None:
    assert sents("1. Foo\n2. Bar") == ["1. Foo", "2. Bar"]
    assert sents("Steps:\n1) Plan the work\n2) Do it\n3) Check it") == [
        "Steps:",
        "1) Plan the work",
        "2) Do it",
        "3) Check it",
    ]
    text = (
        "The following:\n1. A Current Profile specifies the outcomes \nbeing achieved.\n2. A Target"
    )
    assert sents(text) == [
        "The following:",
        "1. A Current Profile specifies the outcomes \nbeing achieved.",
        "2. A Target",
    ]
    assert sents("(a) first item\n(b) second item") == ["(a) first item", "(b) second item"]


def test_inline_numbering_and_line_start_numbers_mid_sentence() -> None:
    text = "risk is a function of 1) the impact and 2) the likelihood of\n1) nothing else."
    assert sents(text) == [text]
    text = "The accuracy rose to\n82.6% on the test set."
    assert sents(text) == [text]


def test_bullets() -> None:
    assert sents("Items:\n• first\n• second\n▪ third") == [
        "Items:",
        "• first",
        "• second",
        "▪ third",
    ]
    text = "• Context (GV.OC): The circumstances are\nunderstood\no GV.OC-01: The mission is\nknown"
    assert sents(text) == [
        "• Context (GV.OC): The circumstances are\nunderstood",
        "o GV.OC-01: The mission is\nknown",
    ]
    assert sents("List:\n- Alpha\n- Beta\n* Gamma\n– Delta") == [
        "List:",
        "- Alpha",
        "- Beta",
        "* Gamma",
        "– Delta",
    ]


def test_dash_at_line_start_inside_a_sentence_is_no_bullet() -> None:
    text = "humans may assume that AI systems work\n– and work well – in all settings."
    assert sents(text) == [text]


def test_headings() -> None:
    text = (
        "3.1. CSF Profiles\n"
        "A CSF Organizational Profile describes an organization’s current and target \n"
        "posture in terms of the Core’s outcomes.\n"
        "3 METHODS\n"
        "Overview of RAPTOR Building on the idea that long texts often present subtopics \n"
        "and structures.\n"
        "Comparison to State-of-the-art Systems\n"
        "Building upon our controlled comparisons, we examine the performance.\n"
    )
    assert sents(text) == [
        "3.1. CSF Profiles",
        "A CSF Organizational Profile describes an organization’s current and target \n"
        "posture in terms of the Core’s outcomes.",
        "3 METHODS",
        "Overview of RAPTOR Building on the idea that long texts often present subtopics \n"
        "and structures.",
        "Comparison to State-of-the-art Systems",
        "Building upon our controlled comparisons, we examine the performance.",
    ]


def test_quoting_a_numbered_heading_in_sentence_case_stands_alone() -> None:
    # The last word is lower case: only the section number says it is a heading.
    text = (
        "2.2 Encoding and escaping\n"
        "XMP-metadata are stored as UTF-8 in the PDF. Some characters must be escaped in the\n"
        "metadata, and the package does it for you when the option is given to it.\n"
    )
    assert sents(text, quoting=True)[0] == "2.2 Encoding and escaping"
    keys = "3.6 Disabling keys\nIt is also possible to disable keys after use."
    assert sents(keys, quoting=True) == [
        "3.6 Disabling keys",
        "It is also possible to disable keys after use.",
    ]


def test_quoting_a_numbered_heading_stands_alone_before_a_manuals_command_entry() -> None:
    # The line after the heading opens with a TeX command, not a capital (ctable's manual).
    text = (
        "have them make contact with horizontal rules.\n3 Usage\n"
        "\\setupctable \\ctable defaults can be set, either in the preamble or in the body.\n"
    )
    assert sents(text, quoting=True)[1:] == [
        "3 Usage",
        "\\setupctable \\ctable defaults can be set, either in the preamble or in the body.",
    ]
    # Ingest's split is as before, and a command after a line of prose goes on.
    assert len(sents(text)) == 2
    prose = "The defaults are set with\n\\setupctable in the preamble.\n"
    assert len(sents(prose, quoting=True)) == 1


def test_quoting_a_short_line_of_prose_is_no_heading_though_its_last_word_is_a_capitals() -> None:
    # A two-column paper's line beside a long one is "short"; its last word, a name's, made it
    # a heading, and the sentence was quoted in two ("In this paper we proposed Preemptive
    # Information" / "Extraction as a new direction of IE research.": a NAACL paper).
    text = (
        "5 Conclusion\n"
        "In this paper we proposed Preemptive Information\n"
        "Extraction as a new direction of IE research. As its key technique, we presented a way\n"
        "to find parallel correspondences between entities in a document and cluster them.\n"
    )
    assert sents(text, quoting=True)[1] == (
        "In this paper we proposed Preemptive Information\n"
        "Extraction as a new direction of IE research."
    )
    # A heading without a pronoun or a verb, or one that reads as a title, stands alone still.
    for heading in ("Effects of the number of passages on PopQA", "What We Learned From RAPTOR"):
        text = f"{heading}\nWe find that the accuracy of the long-form answers rises with k.\n"
        assert sents(text, quoting=True)[0] == heading


def test_quoting_a_numbered_heading_wrapped_over_two_lines_is_not_cut_inside() -> None:
    # Before a short line, a numbered line ending in a lower-case word may go on.
    text = "4 Euklidische und nichteuklidische\nGeometrie\nDefinition 57\n"
    assert "4 Euklidische und nichteuklidische\nGeometrie" in sents(text, quoting=True)[0]
    # Not a section number: a sentence's short last line runs on as before.
    text = (
        "In particular, it outperforms CoLISA by 21.5% on the set, with gains on\n"
        "questions that humans took long to answer.\n"
    )
    assert len(sents(text, quoting=True)) == 1


def test_quoting_a_heading_over_one_body_line_is_cut_in_a_text_of_few_lines() -> None:
    # A chunk or a quote of two to nine lines: the full width is its longest line, not the
    # second-longest (with two lines, the heading itself).
    text = (
        "4.1 CONTRIBUTION OF THE TREE STRUCTURE\n"
        "We examine the contribution of each layer of nodes to RAPTOR’s retrieval capabilities.\n"
    )
    assert sents(text, quoting=True) == [
        "4.1 CONTRIBUTION OF THE TREE STRUCTURE",
        "We examine the contribution of each layer of nodes to RAPTOR’s retrieval capabilities.",
    ]


def test_short_line_ending_in_lower_case_word_runs_on() -> None:
    text = (
        "In particular, it outperforms CoLISA by 21.5% on\n"
        "QuALITY-HARD, which represents questions that humans took long to answer.\n"
    )
    assert len(sents(text)) == 1


def test_caption_number() -> None:
    text = "The steps are shown below.\nFig. 3. Steps for creating a Profile"
    assert sents(text) == ["The steps are shown below.", "Fig. 3. Steps for creating a Profile"]


# --- properties ---------------------------------------------------------------------------------

_pieces = st.sampled_from(
    ["Word", "word", "e.g.", "Fig. 3", "0.85", ".", ". ", "? ", "!", "\n", "\n\n", " ", "\t",
     "1. ", "1)", "• ", "- ", "o ", "GV.OC-01", "“", "”", ")", "(", "U.S.", "Heading\n", "abc",
     "…", "。", ":", ";", "\r\n", "A", "\u2028"]
)  # fmt: skip


def _check(text: str) -> None:
    spans = split_sentences(text)
    previous_end = 0
    covered = [False] * len(text)
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        for i in range(start, end):
            covered[i] = True
        previous_end = end
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())


@settings(max_examples=500, deadline=None)
@given(st.lists(_pieces, max_size=80))
def test_span_properties_structured(parts: list[str]) -> None:
    _check("".join(parts))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_span_properties_any_text(text: str) -> None:
    _check(text)


# --- real pages ---------------------------------------------------------------------------------


@pytest.mark.corpus
def test_real_page_csf() -> None:
    text = _page_text("nist-csf-2.0.pdf", 10)
    got = sents(text)
    _check(text)
    assert got[:6] == [
        "NIST CSWP 29 The NIST Cybersecurity Framework (CSF) 2.0",
        "February 26, 2024",
        "6",
        "3. Introduction to CSF Profiles and Tiers",
        "This section defines the concepts of CSF Profiles and Tiers.",
        "3.1. CSF Profiles",
    ]
    assert "Every Organizational Profile includes one or both of the following:" in got
    assert any(s.startswith("1. A Current Profile specifies") for s in got)
    assert any(s.startswith("2. A Target Profile specifies") for s in got)
    assert got[-1] == "Fig. 3. Steps for creating and using a CSF Organizational Profile"
    assert (
        "A Community Profile is a baseline of CSF outcomes that is created and published to "
        "address \nshared interests and goals among a number of organizations." in got
    )


@pytest.mark.corpus
def test_real_page_subcategories() -> None:
    got = sents(_page_text("nist-csf-2.0.pdf", 20))
    items = [s for s in got if s.startswith("o GV.")]
    assert len(items) == 12
    assert items[0] == (
        "o GV.OC-01: The organizational mission is understood and informs cybersecurity risk \n"
        "management"
    )


@pytest.mark.corpus
def test_time_grows_linearly_with_the_text() -> None:
    """Four real pages cost about four times one, measured in the same run (a wall-clock limit
    fails on a loaded machine; a quadratic step fails this at any load)."""
    page = _page_text("raptor.pdf", 2)[:4000]
    assert len(page) == 4000

    def seconds(text: str, rounds: int) -> float:
        split_sentences(text)
        began = time.perf_counter()
        for _ in range(rounds):
            split_sentences(text)
        return (time.perf_counter() - began) / rounds

    one, four = (
        min(seconds(page, 20) for _ in range(3)),
        min(seconds("\n".join([page] * 4), 5) for _ in range(3)),
    )
    print(
        f"split_sentences: {one * 1000:.2f} ms for 4,000 characters, {four * 1000:.2f} for 16,000"
    )
    assert four < 8 * one


@pytest.mark.parametrize(
    "text",
    [
        "Das gilt z. B. für offene Mengen.",
        "Das gilt z.B. für offene Mengen.",
        "Es folgt d. h. Folgendes aus Satz 3.",
        "Es gibt u. a. Kreise und Ellipsen.",
        "Kreise bzw. Ellipsen sind Kurven.",
        "Siehe Abb. 3 und vgl. Kap. 2 für Details.",
        "Wie in Bsp. 4 gezeigt ist das Nr. 5 der Liste.",
        "Er kam am 3. Oktober an.",
        "Das war im 19. Jahrhundert üblich.",
    ],
)
def test_german_abbreviations_do_not_split(text: str) -> None:
    assert sents(text) == [text]


def test_german_sentences_still_split() -> None:
    assert sents("Das gilt z. B. hier. Die Menge ist offen. Sie ist u. a. zusammenhängend.") == [
        "Das gilt z. B. hier.",
        "Die Menge ist offen.",
        "Sie ist u. a. zusammenhängend.",
    ]
    assert sents("Kreise, Ellipsen usw. Die Sache ist klar.") == [
        "Kreise, Ellipsen usw.",
        "Die Sache ist klar.",
    ]
    # a number ends a sentence unless a month (or the like) follows it
    assert sents("Die Summe ist 3. Die Menge ist offen.") == [
        "Die Summe ist 3.",
        "Die Menge ist offen.",
    ]


def test_chinese_and_japanese_full_stops_split_without_a_space() -> None:
    assert sents("公司负责人刘道骐。会计主管肖寻！是否关联？不存在。") == [
        "公司负责人刘道骐。",
        "会计主管肖寻！",
        "是否关联？",
        "不存在。",
    ]
    assert sents("これは日本語です。次の文です。") == ["これは日本語です。", "次の文です。"]
    # a quotation's own stop: the sentence goes on after 」と
    assert sents("彼は「はい。」と言った。次の文です。") == [
        "彼は「はい。」と言った。",
        "次の文です。",
    ]
    assert sents("“好。”然后走了。") == ["“好。”", "然后走了。"]
    # a CJK stop at a line end, then the next line
    assert sents("营业收入增加。\n财务费用减少。") == ["营业收入增加。", "财务费用减少。"]
    # Latin sentences around them
    assert sents("Mixed 文。English text. 中文！") == ["Mixed 文。", "English text.", "中文！"]


def test_quoting_a_key_entry_of_a_manual_starts_a_sentence() -> None:
    # The listings manual's page 37: each key's entry is its syntax and default, then what it
    # does. The lower-case key after "i.e. not used." read as the sentence going on, so a
    # question about breaklines was answered with resetmargins' sentence glued to its own.
    text = (
        "Line numbers\nand frames are both moved accordingly.\n"
        "resetmargins=⟨true|false⟩ false\n"
        "If true, indention from list environments like enumerate or itemize is reset,\n"
        "i.e. not used.\n"
        "breaklines=⟨true|false⟩ or breaklines false\n"
        "activates or deactivates automatic line breaking of long lines.\n"
        "xleftmargin=⟨dimension⟩ 0pt\nxrightmargin=⟨dimension⟩ 0pt\n"
    )
    assert sents(text, quoting=True) == [
        "Line numbers\nand frames are both moved accordingly.",
        "resetmargins=⟨true|false⟩ false\nIf true, indention from list environments like "
        "enumerate or itemize is reset,\ni.e. not used.",
        "breaklines=⟨true|false⟩ or breaklines false\nactivates or deactivates automatic line "
        "breaking of long lines.",
        "xleftmargin=⟨dimension⟩ 0pt",
        "xrightmargin=⟨dimension⟩ 0pt",
    ]
    assert len(sents(text)) == 1  # ingest's splits are unchanged
    # A key written in running text, after a line that ends no sentence, does not cut it.
    prose = "You can set the option\nbreaklines=true to break long lines."
    assert len(sents(prose, quoting=True)) == 1
    prose = "Some keys take a value, e.g.\nbreaklines=true to break long lines."
    assert len(sents(prose, quoting=True)) == 1
