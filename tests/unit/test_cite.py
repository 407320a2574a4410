"""Citation parsing and resolution with scripted answer texts (no model, no store)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from truthbase.cite import defuse_markers, parse_answer, resolve_citations
from truthbase.model import Unit
from truthbase.records import Source
from truthbase.text.matching import quote_in

PAGE = (
    "Risk management is a continuous process. The Govern function is cross-cutting.\n"
    "Organizations should assess critical suppliers before entering into formal contracts. "
    "Tiers describe the rigor of an organization's practices.\n"
    "NO further text here is relevant to anything at all."
)


def _unit(text: str = PAGE) -> Unit:
    boxes = [
        None if ch.isspace() else (float(i), 0.0, float(i) + 1.0, 10.0) for i, ch in enumerate(text)
    ]
    return Unit(index=2, text=text, boxes=boxes)


class FakeReader:
    def __init__(self, text: str = PAGE) -> None:
        self.text = text

    def unit(self, doc_id: str, index: int) -> Unit | None:
        return _unit(self.text) if (doc_id, index) == ("doc", 2) else None


def _sources(count: int = 4) -> list[Source]:
    cut = PAGE.index("Tiers")
    spans = [(0, cut), (cut, len(PAGE)), (0, len(PAGE)), (41, cut)]
    return [
        Source(n=i + 1, doc_id="doc", title="t", unit=2, start=s, end=e, text=PAGE[s:e], rects=())
        for i, (s, e) in enumerate(spans[:count])
    ]


def test_marker_to_a_missing_source_is_dropped_and_reported() -> None:
    text = "The Govern function is cross-cutting. [1][9]"
    result = resolve_citations(parse_answer(text), _sources(4), FakeReader())
    assert [c.n for c in result.citations] == [1]
    assert result.citations[0].verified
    assert any("[9]" in p for p in result.problems)
    assert "[9]" not in result.text and "[1]" in result.text


def test_comma_markers_and_adjacent_markers_parse_alike() -> None:
    a = parse_answer("Risk management is a continuous process. [1, 3]")
    b = parse_answer("Risk management is a continuous process. [1][3]")
    assert a.claims[0].numbers == b.claims[0].numbers == (1, 3)
    assert a.claims[0].text == "Risk management is a continuous process."


def test_verbatim_claim_resolves_to_its_exact_span() -> None:
    claim = "Organizations should assess critical suppliers before entering into formal contracts."
    result = resolve_citations(parse_answer(f"{claim} [1]"), _sources(), FakeReader())
    (citation,) = result.citations
    assert PAGE[citation.start : citation.end] == claim
    assert citation.verified and citation.support == 1.0
    assert citation.rects  # one rect per rendered line


def test_paraphrased_claim_aligns_to_the_supporting_sentence() -> None:
    text = "Critical suppliers must be assessed before a formal contract is signed [1]."
    result = resolve_citations(parse_answer(text), _sources(), FakeReader())
    (citation,) = result.citations
    assert "critical suppliers" in citation.quote
    assert citation.verified


def test_position_tags_resolve_or_are_dropped() -> None:
    start = PAGE.index("The Govern")
    end = PAGE.index("cross-cutting.") + len("cross-cutting.")
    text = f"Govern is cross-cutting [f2-{start}-{end}]. Nonsense [f7-0-10] and [f2-5-9999]."
    result = resolve_citations(parse_answer(text), _sources(), FakeReader())
    assert len(result.citations) == 1
    tag = result.citations[0]
    assert (tag.start, tag.end, tag.via, tag.verified) == (start, end, "tag", True)
    assert len([p for p in result.problems if "tag" in p]) == 2
    assert "[f7-0-10]" not in result.text and "[1]" in result.text


def test_no_answer_with_extra_text_is_a_refusal() -> None:
    parsed = parse_answer("NO_ANSWER. The sources do not say, but see [1].")
    assert parsed.refused
    result = resolve_citations(parsed, _sources(), FakeReader())
    assert result.citations == []
    assert not parse_answer("NO_ANSWERS are rare [1]").refused


def test_marker_inside_a_word_still_cites_the_text_before_it() -> None:
    parsed = parse_answer("Risk management is a continuous process[1]bar")
    assert parsed.claims[0].numbers == (1,)
    assert parsed.claims[0].text == "Risk management is a continuous process"
    result = resolve_citations(parsed, _sources(), FakeReader())
    assert result.citations[0].verified


def test_a_changed_page_is_never_verified() -> None:
    claim = "The Govern function is cross-cutting."
    result = resolve_citations(
        parse_answer(f"{claim} [1]"), _sources(), FakeReader(PAGE.replace("Govern", "Xovern"))
    )
    assert not result.citations[0].verified


def test_a_missing_unit_is_never_verified() -> None:
    source = Source(
        n=1, doc_id="gone", title="t", unit=2, start=0, end=40, text=PAGE[:40], rects=()
    )
    result = resolve_citations(
        parse_answer("Risk management is continuous [1]"), [source], FakeReader()
    )
    assert not result.citations[0].verified


_fragment = st.one_of(
    st.sampled_from(
        [
            "The Govern function is cross-cutting.",
            "Risk management is a continuous process.",
            "Tiers describe the rigor",
            "Something unrelated entirely.",
            "NO",
            " ",
            "\n",
            "ﬁnancial “quotes” — dashes",
        ]
    ),
    st.integers(0, 12).map(lambda n: f" [{n}]"),
    st.tuples(st.integers(0, 3), st.integers(-5, 300), st.integers(0, 60)).map(
        lambda t: f"[f{t[0]}-{t[1]}-{t[1] + t[2]}]"
    ),
    st.text(max_size=12),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_fragment, max_size=12), st.integers(1, 4))
def test_a_verified_citation_always_has_its_quote_at_its_span(
    fragments: list[str], count: int
) -> None:
    reader = FakeReader()
    result = resolve_citations(parse_answer("".join(fragments)), _sources(count), reader)
    for citation in result.citations:
        if citation.verified:
            unit = reader.unit(citation.doc_id, citation.unit)
            assert unit is not None
            assert quote_in(citation.quote, unit.text[citation.start : citation.end])
            assert quote_in(citation.quote, unit.text)
            assert 1 <= citation.n <= count


def test_defused_document_markers_are_no_citations() -> None:
    """A paper's own reference markers and tag-like strings, once defused, parse as text."""
    sentence = "Late interaction was proposed in [3] and refined in [4, 5] at [f0-0-40]."
    defused = defuse_markers(sentence)
    assert len(defused) == len(sentence) and "3" in defused
    (claim,) = parse_answer(f"{defused} [1]").claims
    assert claim.numbers == (1,) and not claim.tags
    assert len(parse_answer(f"{sentence} [1]").claims) > 1  # what it prevents
