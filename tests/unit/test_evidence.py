"""The evidence rules of golden/README.md "Capabilities": OCR quotes matched fuzzily (word LCS
over a bounded window, edit distance per word), table cells that must stand together in one
chunk and one citation, short CJK quotes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.eval import evidence
from truthbase.eval.evidence import (
    citation_holds,
    edit_distance_within,
    evidence_in,
    locate_evidence,
    ocr_find,
    text_words,
    word_matches,
)
from truthbase.eval.golden import GoldenEvidence
from truthbase.eval.metrics import RetrievedChunk, chunk_contains, first_hit_rank
from truthbase.text.matching import normalize

QUOTE = "Each of the 100 sequences contains 32 simultaneous, polyphonic tracks."
PAGE = (
    "The LinnSequencer is a professional MIDI recorder. Each of the 100 sequences contains 32 "
    "simultaneous, polyphonic tracks. Its disk drive stores complex songs in seconds."
)
OCR = GoldenEvidence(doc="linn", page=1, quote=QUOTE, ocr=True)


def levenshtein(a: str, b: str) -> int:
    """The textbook dynamic programme, as the reference."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[len(b)]


def found(quote: str, text: str) -> bool:
    return ocr_find(quote, normalize(text)) is not None


# -- words and the edit distance ---------------------------------------------------------------


@given(st.text("abc", max_size=9), st.text("abc", max_size=9), st.integers(0, 3))
def test_the_banded_distance_agrees_with_the_reference(a: str, b: str, limit: int) -> None:
    assert edit_distance_within(a, b, limit) == (levenshtein(a, b) <= limit)


def test_words_lose_the_punctuation_at_their_ends() -> None:
    text = normalize('"Polyphonic," tracks | - Net[note 2] 16.55%')
    assert [w.text for w in text_words(text)] == [
        "polyphonic",
        "tracks",
        "net[note",
        "2",
        "16.55",
    ]
    for word in text_words(text):
        assert text[word.start : word.end] == word.text


@pytest.mark.parametrize(
    ("quote_word", "text_word", "counts"),
    [
        ("tracks", "tracks", True),
        ("the", "tne", True),  # up to 5 letters: one edit
        ("the", "th", True),
        ("the", "tnc", False),  # two edits on a short word
        ("notes", "nctcs", False),
        ("polyphonic", "po1yphonic", True),  # longer: two edits
        ("polyphonic", "po1yphon1c", True),
        ("polyphonic", "p01yph0nic", False),  # three
        ("sequences", "sequenccs", True),
    ],
)
def test_a_word_counts_within_its_edit_allowance(
    quote_word: str, text_word: str, counts: bool
) -> None:
    assert word_matches(quote_word, text_word) == counts


# -- OCR quotes ---------------------------------------------------------------------------------


def test_an_ocr_quote_with_misspellings_matches() -> None:
    assert found(QUOTE, PAGE)
    one = PAGE.replace("sequences", "sequenccs")
    two = one.replace("polyphonic", "po1yphonic").replace("the 100", "tne 100")
    assert found(QUOTE, one) and found(QUOTE, two)
    # engines split lines and drop punctuation: still the same words
    assert found(QUOTE, two.replace(", polyphonic", "\npolyphonic"))


def test_an_ocr_quote_with_up_to_a_fifth_of_its_words_lost_matches() -> None:
    words = normalize(QUOTE).split()  # 10 words: two may be lost
    lost_two = " ".join(w for i, w in enumerate(words) if i not in (2, 6))
    assert found(QUOTE, f"Intro. {lost_two} More.")
    garbled_two = " ".join("xqzv" if i in (2, 6) else w for i, w in enumerate(words))
    assert found(QUOTE, f"Intro. {garbled_two} More.")


def test_an_ocr_quote_with_thirty_percent_wrong_words_does_not_match() -> None:
    words = normalize(QUOTE).split()
    wrong = " ".join("xqzvw" if i in (1, 4, 7) else w for i, w in enumerate(words))
    assert not found(QUOTE, f"Intro. {wrong} More.")
    lost = " ".join(w for i, w in enumerate(words) if i not in (1, 4, 7))
    assert not found(QUOTE, lost)


def test_order_matters() -> None:
    words = normalize(QUOTE).split()
    assert not found(QUOTE, " ".join(reversed(words)))
    shuffled = words[:]
    random.Random(3).shuffle(shuffled)
    assert not found(QUOTE, " ".join(shuffled))
    # swapping one pair of neighbours loses one word of the ten: still 90%
    swapped = [words[0], words[2], words[1], *words[3:]]
    assert found(QUOTE, " ".join(swapped))


def test_the_window_is_bounded() -> None:
    """The quote's words spread over a page with others between them are not the quote."""
    words = normalize(QUOTE).split()
    filler = "and then some other words came here"
    spread = f" {filler} ".join(words)
    assert not found(QUOTE, spread)
    # a few stray marks or split words inside the passage are fine
    assert found(QUOTE, PAGE.replace("contains 32", "con tains ~ 32"))


def test_an_ocr_quote_with_an_elision_matches_its_pieces_in_order() -> None:
    quote = "Each of the 100 sequences ... its disk drive stores complex songs"
    assert found(quote, PAGE.replace("sequences", "sequencos"))
    assert not found("its disk drive stores complex songs ... Each of the 100 sequences", PAGE)


def test_the_located_span_covers_the_matched_words() -> None:
    text = PAGE.replace("sequences", "sequenccs")
    span = locate_evidence(OCR, text)
    assert span is not None
    assert text[span[0] : span[1]] == (
        "Each of the 100 sequenccs contains 32 simultaneous, polyphonic tracks"
    )


def test_a_plain_record_is_matched_exactly() -> None:
    plain = GoldenEvidence(doc="linn", page=1, quote=QUOTE)
    assert evidence_in(plain, normalize(PAGE))
    assert not evidence_in(plain, normalize(PAGE.replace("sequences", "sequenccs")))
    assert evidence_in(OCR, normalize(PAGE.replace("sequences", "sequenccs")))


def test_chunk_contains_applies_the_ocr_rule() -> None:
    chunk = RetrievedChunk(doc="linn", unit=0, text=PAGE.replace("tracks", "trackz"))
    assert chunk_contains(OCR, chunk)
    assert not chunk_contains(OCR, RetrievedChunk(doc="linn", unit=1, text=PAGE))  # page 2


def test_a_long_unrelated_text_is_rejected_before_any_alignment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The prefilter rejects unrelated text before the alignment (the quadratic part) starts: a
    few thousand words of English prose that share the quote's common words but not its own.
    Checked by what runs, not by a wall-clock limit (this machine is shared): the alignment's
    first step must not be reached."""
    prose = " ".join(
        random.Random(7).choice(
            ["the", "of", "a", "contains", "each", "which", "is", "with", "songs", "time"]
        )
        for _ in range(4000)
    )

    def aligned(quote_len: int) -> int:
        raise AssertionError("the alignment ran on a text the prefilter should reject")

    monkeypatch.setattr(evidence, "_max_window", aligned)
    assert not found(QUOTE, prose)


# -- tables: cells of one row together ----------------------------------------------------------

ROW = GoldenEvidence(
    doc="warn",
    page=2,
    quote="3000",
    cells=("Toyota Motor North America", "Torrance", "3000"),
)
ROW_TEXT = "Toyota Motor North America | Torrance | 3000 | Closure Permanent"


def test_a_chunk_contains_a_table_record_when_it_holds_every_cell() -> None:
    whole = RetrievedChunk(doc="warn", unit=1, text=f"Company | City | Employees\n{ROW_TEXT}")
    assert chunk_contains(ROW, whole)
    first = RetrievedChunk(doc="warn", unit=1, text="Company | City\nToyota Motor North America")
    second = RetrievedChunk(doc="warn", unit=1, text="Torrance | 3000 | Closure Permanent")
    assert not chunk_contains(ROW, first) and not chunk_contains(ROW, second)
    # found only when one chunk holds the row: two chunks that split it are not enough
    assert first_hit_rank([ROW], [first, second]) is None
    assert first_hit_rank([ROW], [first, second, whole]) == 3


def test_a_table_record_needs_its_quote_too() -> None:
    record = GoldenEvidence(doc="warn", page=2, quote="2551", cells=("Torrance", "3000"))
    assert not evidence_in(record, normalize(ROW_TEXT))
    assert evidence_in(record.model_copy(update={"quote": "3000"}), normalize(ROW_TEXT))


def test_a_citation_holds_a_table_record_when_its_span_holds_every_cell() -> None:
    page = f"Header line\n{ROW_TEXT}\nGardena | 100"
    start = page.index("Toyota")
    end = page.index(" | Closure")
    assert citation_holds(ROW, None, page, start, end)
    # a span that holds the answer cell but not the company is not a correct citation
    assert not citation_holds(ROW, None, page, page.index("Torrance"), end)
    assert not citation_holds(ROW, None, page, start, page.index("3000"))
    assert not citation_holds(ROW, None, page, 0, len(page) + 5)  # not a span of the page


def test_a_citation_of_a_quote_overlaps_it() -> None:
    plain = GoldenEvidence(doc="linn", page=1, quote=QUOTE)
    span = locate_evidence(plain, PAGE)
    assert span is not None
    assert citation_holds(plain, span, PAGE, span[0] + 5, span[1] + 10)
    assert not citation_holds(plain, span, PAGE, 0, span[0])
    assert not citation_holds(plain, None, PAGE, 0, len(PAGE))


# -- short CJK quotes ---------------------------------------------------------------------------


def test_a_short_cjk_quote_is_matched_like_any_quote() -> None:
    text = "一、重要提示\n公司负责人刘道骐、主管会计工作负责人肖寻及会计机构负责人(会计主管人员)"
    record = GoldenEvidence(doc="cn", page=2, quote="公司负责人刘道骐")
    chunk = RetrievedChunk(doc="cn", unit=1, text=text)
    assert chunk_contains(record, chunk)
    assert not chunk_contains(record.model_copy(update={"quote": "公司负责人王某"}), chunk)


def test_a_cjk_table_record() -> None:
    record = GoldenEvidence(
        doc="cn",
        page=3,
        quote="4,755,785.11",
        cells=("营业收入（元）", "4,755,785.11", "-16.55%"),
    )
    row = "营业收入（元） 4,755,785.11 5,699,227.63 -16.55%"
    assert evidence_in(record, normalize(row))  # NFKC maps the full-width brackets alike
    assert not evidence_in(record, normalize("营业收入（元） 4,755,785.11"))
