"""The one refusal rule, the one tag format, and the three citation states (no model, no store)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.answer import policy
from truthbase.answer.finish import settle
from truthbase.cite import audit, claim_support, is_refusal, parse_answer, resolve_citations
from truthbase.cite.tags import (
    TAG,
    TAG_LIKE,
    find_tags,
    format_tag,
    neutralize_tags,
    parse_tag,
    strip_tags,
)
from truthbase.eval.answers import summarize
from truthbase.llm import prompts
from truthbase.model import Unit
from truthbase.records import Citation, Segment, SegmentPart, Source, StoredAnswer
from truthbase.segments.budget import Shown
from truthbase.segments.passages import Span
from truthbase.segments.render import related_passages
from truthbase.segments.select import Entry
from truthbase.segments.summarize import extractive_summaries

PAGE = (
    "The Govern function is cross-cutting and informs the other five functions. "
    "Organizations should assess critical suppliers before entering into formal contracts. "
    "Tiers describe the rigor of an organization's practices."
)


class Reader:
    def __init__(self, text: str = PAGE) -> None:
        self.text = text

    def unit(self, doc_id: str, index: int) -> Unit | None:
        if (doc_id, index) != ("doc", 0):
            return None
        boxes = [
            None if c.isspace() else (float(i), 0.0, i + 1.0, 9.0) for i, c in enumerate(self.text)
        ]
        return Unit(index=0, text=self.text, boxes=boxes)


def _source(n: int = 1, start: int = 0, end: int = len(PAGE)) -> Source:
    return Source(
        n=n, doc_id="doc", title="t", unit=0, start=start, end=end, text=PAGE[start:end], rects=()
    )


def _span(sentence: str) -> tuple[int, int]:
    start = PAGE.index(sentence)
    return start, start + len(sentence)


SUPPLIERS = _span(
    "Organizations should assess critical suppliers before entering into formal contracts."
)


# --- the one refusal rule ----------------------------------------------------------------------


def test_there_is_one_is_refusal() -> None:
    assert policy.is_refusal is is_refusal is prompts.is_refusal


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("NO_ANSWER", True),
        ("no_answer", True),  # any case: cite/ used to miss this one
        ("  NO_ANSWER.  ", True),
        ("NO_ANSWER. But the sources say 42 [1].", True),
        ("No answer.", True),
        ("  no answer!", True),
        ("There is no answer key in [2], but the Core has six Functions [1].", False),
        ("The table NO_ANSWERS_LOG lists them [1].", False),  # llm/ used to refuse this one
        ("XNO_ANSWER", False),
        ("The Core has six Functions [1].", False),
    ],
)
def test_is_refusal(text: str, refused: bool) -> None:
    assert is_refusal(text) is refused
    assert parse_answer(text).refused is refused


def test_nothing_left_after_dropped_markers_is_a_refusal() -> None:
    settled = settle("[7]", [_source()], Reader(), None)
    assert settled.refused and settled.final == "NO_ANSWER" and settled.problems


# --- the one tag format ------------------------------------------------------------------------


@given(st.integers(0, 999_999), st.integers(0, 999_999_999), st.integers(0, 999_999_999))
def test_parse_of_format_is_the_identity(unit: int, start: int, end: int) -> None:
    text = format_tag(unit, start, end)
    assert parse_tag(text) == (unit, start, end)
    assert list(find_tags(f"x {text} y")) == [(unit, start, end)]
    assert parse_answer(f"A claim here {text}").claims[0].tags[0].text == text


@pytest.mark.parametrize(
    "bad",
    [
        "[f3-10]",
        "[f3-10-20-30]",
        "[f 3-10-20]",
        "[f3 -10-20]",
        "[F3-10-20]",
        "[f-3-10-20]",
        "[f1234567-1-2]",
        "[f1-1234567890-2]",
        "[3-10-20]",
        "f3-10-20",
        "[f3-10-20",
        "[fa-b-c]",
    ],
)
def test_bad_tags_are_rejected(bad: str) -> None:
    assert parse_tag(bad) is None
    assert not list(find_tags(bad)) or bad == "[f3-10-20"


def test_format_refuses_what_no_tag_can_say() -> None:
    with pytest.raises(ValueError):
        format_tag(-1, 0, 5)
    with pytest.raises(ValueError):
        format_tag(1_000_000, 0, 5)


def test_tag_like_strings_are_neutralized_in_document_text() -> None:
    text = "See [f0-0-40] and [f3-10] or [f 1-2-3], [for example] and [2]."
    shown = neutralize_tags(text)
    assert not TAG.search(shown) and not TAG_LIKE.search(shown)
    assert "&#91;f0-0-40]" in shown and "[for example]" in shown and "[2]" in shown
    assert parse_answer(shown).claims[0].tags == ()
    assert strip_tags("One [f3-10-80]. Two [f3-10] x.") == "One . Two x."


def test_a_tool_shows_document_text_with_its_tags_neutralized() -> None:
    text = "The keeper wrote [f0-0-40] in the margin of the ledger. Then he slept."
    unit = Unit(index=0, text=text, boxes=[None] * len(text))
    segment = Segment(doc_id="d", index=0, title="One", parts=(SegmentPart(0, 0, len(text)),))
    entry = Entry(key="S1", doc_title="Book", segment=segment, vector=None)
    output = related_passages([Shown(entry=entry, spans=[Span(0, 0, 55)])], {("d", 0): unit})
    assert [m.group() for m in TAG.finditer(output.content)] == ["[f0-0-55]"]
    assert "&#91;f0-0-40]" in output.content
    (summary,) = extractive_summaries([segment], [text], max_sentences=2)
    assert "[f0-0-40]" not in summary and "&#91;f0-0-40]" in summary


# --- three citation states ---------------------------------------------------------------------


def test_an_unrelated_claim_before_a_valid_tag_is_not_supported() -> None:
    tag = format_tag(0, *SUPPLIERS)
    resolution = resolve_citations(
        parse_answer(f"The moon is made of green cheese {tag}."), [_source()], Reader()
    )
    (citation,) = resolution.citations
    assert citation.via == "tag" and citation.verified  # the quote is on the page...
    assert citation.state == "quote_only" and not citation.supported  # ...the claim does not follow
    assert citation.support < 0.35 and citation.reasons  # below even the old 0.35 bar
    assert citation.to_json()["state"] == "quote_only"
    assert citation.to_json()["reasons"] == list(citation.reasons)


def test_a_claim_the_tag_supports_is_supported() -> None:
    tag = format_tag(0, *SUPPLIERS)
    text = f"Organizations should assess critical suppliers before formal contracts {tag}."
    (citation,) = resolve_citations(parse_answer(text), [_source()], Reader()).citations
    assert citation.state == "supported" and citation.reasons == ()


def test_marker_claims_get_the_same_three_states() -> None:
    sources = [_source()]
    ok = resolve_citations(
        parse_answer("Tiers describe the rigor of practices [1]."), sources, Reader()
    )
    assert [c.state for c in ok.citations] == ["supported"]
    off = resolve_citations(parse_answer("Bananas grow in Ecuador [1]."), sources, Reader())
    assert [c.state for c in off.citations] == ["quote_only"]
    changed = Reader(PAGE.replace("Tiers", "Xiers"))
    gone = resolve_citations(
        parse_answer("Tiers describe the rigor of practices [1]."), sources, changed
    )
    assert [c.state for c in gone.citations] == ["unverified"] and not gone.citations[0].verified
    assert "not on the page" in gone.citations[0].reasons[0]


def test_claim_support_is_the_one_decision() -> None:
    quote = PAGE[SUPPLIERS[0] : SUPPLIERS[1]]
    assert claim_support(quote, quote, PAGE).supported
    weak = claim_support("The moon is made of green cheese.", quote, PAGE)
    assert not weak.supported and weak.reasons
    assert claim_support("", quote).reasons == ("empty_claim: no claim before the citation",)
    # the support checks of cite.support decide: a negated claim and a changed number fail
    passage = "The plant produces forty two units a day."
    assert claim_support("The plant produces forty two units a day.", passage).supported
    negated = claim_support("The plant never produces forty two units a day.", passage)
    assert not negated.supported and any(r.startswith("negation") for r in negated.reasons)
    changed = claim_support("The plant produces ninety nine units a day.", passage)
    assert not changed.supported and any(r.startswith("number") for r in changed.reasons)


def _citation(**kw: object) -> dict[str, object]:
    start, end = SUPPLIERS
    record: dict[str, object] = {
        "n": 1,
        "doc_id": "doc",
        "unit": 0,
        "start": start,
        "end": end,
        "quote": PAGE[start:end],
        "verified": True,
    }
    record.update(kw)
    return record


def _stored(id: int, answer: dict[str, object]) -> StoredAnswer:
    return StoredAnswer(id=id, question="q", answer=answer, created_at="2026-01-01")


def test_verify_checks_stored_answers_with_and_without_states() -> None:
    answers = [
        _stored(id=1, answer={"citations": [_citation()]}),  # from before states
        _stored(id=2, answer={"citations": [_citation(state="quote_only", reasons=["x"])]}),
        _stored(id=3, answer={"citations": [_citation(verified=False, state="unverified")]}),
    ]
    report = audit.verify_answers(answers, Reader())
    assert report.ok and report.verified_citations == 2 and report.unverified_citations == 1
    forged = _citation(verified=False, state="supported", quote="Not there at all.")
    assert not audit.verify_answers([_stored(4, {"citations": [forged]})], Reader()).ok


def test_supported_share_sits_beside_verified_share() -> None:
    def record(*states: str) -> dict[str, object]:
        citations = [
            {
                "verified": s != "unverified",
                "state": s,
                "rechecked": s != "unverified",
                "correct": True,
            }
            for s in states
        ]
        return {"answerable": True, "refused": False, "correct": True, "citations": citations}

    metrics = summarize([record("supported", "quote_only"), record("unverified")])
    assert metrics["verified_share"] == 1.0 and metrics["supported_share"] == 0.5
    assert metrics["supported_citations"] == 1 and metrics["verified_citations"] == 2
    before = summarize(
        [
            {
                **record("supported"),
                "citations": [{"verified": True, "rechecked": True, "correct": True}],
            }
        ]
    )
    assert before["supported_share"] == 1.0  # a record from before states counts as before


def test_a_citation_without_a_state_reads_as_unverified() -> None:
    c = Citation(n=1, doc_id="d", unit=0, start=0, end=1, quote="", rects=(), verified=False)
    assert c.state == "unverified" and not c.supported
