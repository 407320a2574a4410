"""Where a claim departs from its page (issue 24 item 5): the page's side of a failed support
check located as offsets of the unit's canonical text, on a real page of a seed PDF."""

from __future__ import annotations

import re
from functools import cache

import pytest

from tests.helpers.corpus import SEED
from truthbase.cite import parse_answer, resolve_citations
from truthbase.cite.conflict import conflict_of, locate_page_side
from truthbase.cite.model import Reason
from truthbase.extract import extract_path
from truthbase.model import Unit
from truthbase.records import Source

pytestmark = pytest.mark.corpus

#: Page 8 of RAPTOR (unit 7) and page 5 (unit 4): a number and a direction the claims get wrong.
RESULT = "RAPTOR paired with GPT-4 sets a new state-of-the-art with an accuracy of 82.6%"
DESCENT = "progressively focuses on finer details as it descends through the lower layers"


@cache
def _unit(index: int) -> Unit:
    return extract_path(SEED / "raptor.pdf").units[index]


def _sentence(unit: Unit, words: str) -> tuple[int, int]:
    """The sentence of ``unit`` that holds ``words`` (its line breaks read as spaces)."""
    flat = unit.text.replace("\n", " ")
    at = flat.index(words)
    start = max(flat.rfind(". ", 0, at) + 2, 0)
    stop = re.compile(r"\.(?:\s|$)").search(flat, at + len(words))
    assert stop is not None
    return start, stop.start() + 1


def test_a_number_is_located_nearest_candidate_first() -> None:
    unit = _unit(7)
    start, end = _sentence(unit, RESULT)
    where = locate_page_side(unit.text, start, end, "82.6%, 62.3%")
    assert where is not None
    assert unit.text[where[0] : where[1]] == "82.6%"
    # The second candidate when the first is not in the quote.
    where = locate_page_side(unit.text, start, end, "99.9%, 62.3%")
    assert where is not None and unit.text[where[0] : where[1]] == "62.3%"


def test_a_word_is_located_as_a_whole_word_inside_the_quote_only() -> None:
    unit = _unit(4)
    start, end = _sentence(unit, DESCENT)
    where = locate_page_side(unit.text, start, end, "Lower")
    assert where is not None and unit.text[where[0] : where[1]] == "lower"
    assert start <= where[0] < where[1] <= end
    # "the" is in the page before the quote too: the one found is the quote's.
    the = locate_page_side(unit.text, start, end, "the")
    assert the is not None and the[0] >= start
    assert locate_page_side(unit.text, start, end, "owe") is None  # not inside "lower"
    assert locate_page_side(unit.text, start, end, "82.6%") is None  # on the page, not here


def test_stemmed_words_of_a_check_are_located_word_by_word() -> None:
    # A negation's scope is stems without their stop words: "never produc unit".
    text = "Intro here. The model never produces forty two units. Outro."
    start = text.index("The")
    where = locate_page_side(text, start, text.index("Outro"), "never produc unit")
    assert where is not None
    assert text[where[0] : where[1]] == "never produces forty two units"


def test_the_offsets_map_back_through_normalization() -> None:
    # A soft hyphen and a line-end hyphenation mark (U+FFFE) vanish in the matcher's text; the
    # offsets are the canonical text's.
    text = "Accuracy rose to 82.6\u00ad% in the ex\ufffe\nperiment."
    where = locate_page_side(text, 0, len(text), "experiment")
    assert where is not None and text[where[0] : where[1]] == "ex\ufffe\nperiment"
    where = locate_page_side(text, 0, len(text), "82.6%")
    assert where is not None and text[where[0] : where[1]] == "82.6\u00ad%"


def test_conflict_of_picks_the_reason_with_both_sides_and_draws_its_glyphs() -> None:
    unit = _unit(7)
    start, end = _sentence(unit, RESULT)
    reasons = [
        Reason("low_coverage", "low", claim_says="state art"),
        Reason("number_missing", '"85.6%" is not in the quote', claim_says="85.6%",
               page_says="82.6%, 62.3%"),
    ]  # fmt: skip
    conflict = conflict_of(reasons, unit.text, unit.boxes, start, end)
    assert conflict is not None and conflict.code == "number_missing"
    assert conflict.text == "the answer says 85.6% · the page says 82.6%, 62.3%"
    assert conflict.page_start is not None and conflict.page_end is not None
    assert unit.text[conflict.page_start : conflict.page_end] == "82.6%"
    assert len(conflict.rects) == 1  # one line of glyphs
    assert conflict_of([Reason("low_similarity", "x")], unit.text, unit.boxes, start, end) is None


class _Reader:
    def unit(self, doc_id: str, index: int) -> Unit | None:
        return _unit(index) if doc_id == "raptor" else None


def _source(unit: Unit, start: int, end: int) -> Source:
    return Source(
        n=1, doc_id="raptor", title="RAPTOR", unit=unit.index, start=start, end=end,
        text=unit.text[start:end], rects=(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("index", "words", "claim", "code", "page_side"),
    [
        (7, RESULT, "RAPTOR with GPT-4 sets a new state-of-the-art on QuALITY with an accuracy "
         "of 85.6%.", "number_missing", "82.6%"),
        (4, DESCENT, "The algorithm progressively focuses on finer details as it descends "
         "through the higher layers of the tree.", "antonym", "lower"),
    ],
)  # fmt: skip
def test_a_quote_only_citation_carries_its_conflict(
    index: int, words: str, claim: str, code: str, page_side: str
) -> None:
    unit = _unit(index)
    start, end = _sentence(unit, words)
    source = _source(unit, max(0, start - 300), min(len(unit.text), end + 300))
    result = resolve_citations(parse_answer(f"{claim} [1]"), [source], _Reader())
    (citation,) = result.citations
    assert citation.state == "quote_only"
    conflict = citation.conflict
    assert conflict is not None and conflict.code == code
    assert conflict.page_start is not None and conflict.page_end is not None
    assert unit.text[conflict.page_start : conflict.page_end] == page_side
    assert citation.start <= conflict.page_start < conflict.page_end <= citation.end
    assert conflict.rects
    out = citation.to_json()["conflict"]
    assert out["page_says"].startswith(page_side) and out["claim_says"] in claim
    assert out["text"].startswith("the answer says ")
    assert (out["page_start"], out["page_end"]) == (conflict.page_start, conflict.page_end)


def test_a_supported_citation_has_no_conflict() -> None:
    unit = _unit(7)
    start, end = _sentence(unit, RESULT)
    claim = unit.text[start:end].replace("\n", " ")
    result = resolve_citations(parse_answer(f"{claim} [1]"), [_source(unit, start, end)], _Reader())
    (citation,) = result.citations
    assert citation.state == "supported"
    assert citation.conflict is None and citation.to_json()["conflict"] is None
