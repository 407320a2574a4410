"""The matching rule of golden/README.md, case by case and as properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from truthbase.text.matching import find_quote, normalize, normalize_with_offsets, quote_in


def test_nfkc_splits_ligatures_and_casefolds() -> None:
    assert normalize("The \ufb01rst \ufb02ow") == "the first flow"
    assert quote_in("first flow", "The \ufb01rst \ufb02ow")


def test_joiners_and_following_whitespace_are_removed() -> None:
    assert normalize("paramet\ufffe\nric") == "parametric"
    assert normalize("soft\u00ad hyphen") == "softhyphen"
    assert normalize("zero\u200bwidth\ufeff") == "zerowidth"


def test_typographic_quotes_and_dashes() -> None:
    assert normalize("\u201cquoted\u201d \u2018single\u2019 a\u2013b \u2212 1") == (
        "\"quoted\" 'single' a-b - 1"
    )


def test_hyphen_followed_by_whitespace_between_letters_joins() -> None:
    assert normalize("well-\nknown") == "well-known"
    assert normalize("well- known") == "well-known"
    # not between two letters: the space stays
    assert normalize("2- 3") == "2- 3"
    assert normalize("a -  b") == "a - b"


def test_whitespace_collapses_and_strips() -> None:
    assert normalize("  a \n\t b  ") == "a b"


def test_elisions_must_match_in_order() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta."
    assert quote_in("alpha beta ... epsilon zeta", text)
    assert quote_in("alpha beta \u2026 epsilon zeta", text)
    assert not quote_in("epsilon zeta ... alpha beta", text)
    assert not quote_in("alpha beta ... omega", text)


def test_find_quote_maps_back_to_original_offsets() -> None:
    text = "Intro. The re\ufb02ection token is gener\ufffe\nated here."
    spans = find_quote("reflection token is generated", text)
    assert spans is not None
    ((start, end),) = spans
    assert text[start:end] == "re\ufb02ection token is gener\ufffe\nated"


def test_find_quote_elided_pieces() -> None:
    text = "one two three four five"
    spans = find_quote("one two ... four", text)
    assert spans is not None
    assert [text[s:e] for s, e in spans] == ["one two", "four"]


@given(st.text())
def test_offsets_are_consistent(text: str) -> None:
    normalized = normalize_with_offsets(text)
    assert len(normalized.starts) == len(normalized.text) == len(normalized.ends)
    assert list(normalized.starts) == sorted(normalized.starts)
    for s, e in zip(normalized.starts, normalized.ends, strict=True):
        assert 0 <= s < e <= len(text)


_PLAIN = st.characters(
    blacklist_categories=("Mn", "Mc", "Me", "Cs"),
    blacklist_characters="\u00ad\ufffe\u200b\u200c\u200d\ufeff-\u2010\u2011\u2012\u2013"
    "\u2014\u2015\u2212.\u2026",
)


@given(st.text(), st.text(_PLAIN, min_size=1), st.text())
def test_a_space_delimited_piece_is_always_in_its_text(
    prefix: str, middle: str, suffix: str
) -> None:
    assert quote_in(middle, f"{prefix} {middle} {suffix}") or not normalize(middle)


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
