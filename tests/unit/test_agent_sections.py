"""cite_sections: which sentence a section reference claims, and which passage it becomes."""

from __future__ import annotations

from truthbase.answer.agent_sections import cite_sections
from truthbase.records import Source

TEXT = (
    "Lydia elopes with Wickham from Brighton. "
    "Mr. Collins marries Charlotte Lucas. "
    "Pemberley is the estate of Mr. Darcy in Derbyshire."
)


def _source(n: int, sentence: str) -> Source:
    start = TEXT.index(sentence)
    return Source(
        n=n,
        doc_id="d",
        title="t",
        unit=3,
        start=start,
        end=start + len(sentence),
        text=sentence,
        rects=(),
    )


LYDIA = _source(1, "Lydia elopes with Wickham from Brighton.")
COLLINS = _source(2, "Mr. Collins marries Charlotte Lucas.")
DARCY = _source(3, "Pemberley is the estate of Mr. Darcy in Derbyshire.")
SOURCES = [LYDIA, COLLINS, DARCY]


def _tag(s: Source) -> str:
    return f"[f{s.unit}-{s.start}-{s.end}]"


SECTIONS = [{"S38": [_tag(LYDIA), _tag(COLLINS)], "S40": [_tag(DARCY)]}]


def test_a_leading_id_claims_the_sentence_it_opens() -> None:
    text, cited = cite_sections(
        "S38: Lydia elopes with Wickham. S40: Darcy's estate is Pemberley.", SECTIONS, SOURCES, None
    )
    assert (
        text
        == f"{_tag(LYDIA)} Lydia elopes with Wickham. {_tag(DARCY)} Darcy's estate is Pemberley."
    )
    assert [(c.section, c.supported) for c in cited] == [("S38", True), ("S40", True)]


def test_a_trailing_id_claims_the_sentence_before_it_and_picks_the_supporting_passage() -> None:
    text, cited = cite_sections(
        "Mr. Collins marries Charlotte Lucas [S38]. Lydia elopes (S38).", SECTIONS, SOURCES, None
    )
    assert (
        text == f"Mr. Collins marries Charlotte Lucas {_tag(COLLINS)}. Lydia elopes {_tag(LYDIA)}."
    )
    assert [c.claim for c in cited] == ["Mr. Collins marries Charlotte Lucas", "Lydia elopes"]


def test_ids_not_shown_and_ids_in_running_text_are_left_alone() -> None:
    original = "Table S38 lists the S40 results. S99: nothing here."
    text, cited = cite_sections(original, SECTIONS, SOURCES, None)
    assert text == original
    assert cited == []


def test_a_section_whose_passage_was_cut_from_the_window_has_no_candidate() -> None:
    text, cited = cite_sections("S40: Darcy owns Pemberley.", SECTIONS, [LYDIA, COLLINS], None)
    assert cited[0].tag == "" and not cited[0].supported
    assert "none of its passages was shown" in cited[0].note()
    assert "S40" not in text
