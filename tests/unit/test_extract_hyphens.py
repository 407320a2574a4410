"""Line-end hyphens: word break or compound hyphen, decided from the document's own usage."""

from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter

import pytest

from truthbase.extract.hyphens import (
    HYPHEN_MARK,
    HyphenEvidence,
    break_around,
    decide_line_end_hyphens,
    keep_hyphen,
)

M = HYPHEN_MARK


def _evidence(*texts: str) -> HyphenEvidence:
    return HyphenEvidence.of(texts)


def test_attested_compound_keeps_its_hyphen() -> None:
    evidence = _evidence("A high-level view. Another High-Level summary.")
    assert keep_hyphen("high", "level", evidence)


def test_attested_joined_word_joins() -> None:
    evidence = _evidence("parametric memory and parametric knowledge")
    assert not keep_hyphen("paramet", "ric", evidence)


def test_more_frequent_joined_form_wins_and_a_tie_keeps() -> None:
    assert not keep_hyphen("on", "line", _evidence("online online on-line"))
    assert keep_hyphen("on", "line", _evidence("online on-line"))


def test_case_insensitive_counts() -> None:
    assert keep_hyphen("SELF", "RAG", _evidence("Self-RAG outperforms"))
    assert keep_hyphen("self", "rag", _evidence("SELF-RAG outperforms"))


def test_unattested_defaults_to_join_except_uppercase_or_digits_on_both_sides() -> None:
    empty = _evidence("")
    assert not keep_hyphen("recommenda", "tion", empty)
    assert not keep_hyphen("mission", "essential", empty)  # no evidence: the default
    assert keep_hyphen("GPT", "4", empty)
    assert keep_hyphen("SELF", "RAG", empty)
    assert keep_hyphen("COVID", "19", empty)
    assert not keep_hyphen("Chat", "GPT", empty)  # lowercase before the hyphen
    # Evidence beats the fallback: an all-caps word split at a line end.
    assert not keep_hyphen("RAP", "TOR", _evidence("RAPTOR retrieves"))


def test_no_word_on_one_side_joins() -> None:
    assert not keep_hyphen("", "level", _evidence("high-level"))
    assert not keep_hyphen("high", "", _evidence("high-level"))


def test_line_end_positions_are_not_evidence() -> None:
    # "high-level" only ever occurs across a line end: no evidence for either form.
    evidence = _evidence(f"a high{M}level view", f"another high{M}level view")
    assert evidence.pairs[("high", "level")] == 0
    assert evidence.words["highlevel"] == 0
    # The fragments touching a mark are not words either, but the rest of a compound is.
    evidence = _evidence(f"one-size-fits{M}all approach")
    assert evidence.pairs[("one", "size")] == 1 and evidence.pairs[("size", "fits")] == 0
    assert evidence.words["fits"] == 0 and evidence.words["all"] == 0
    assert evidence.words["size"] == 1


def test_compound_parts_count_as_words_and_pairs() -> None:
    evidence = _evidence("state-of-the-art retrieval\u2010augmented models")
    assert evidence.pairs[("of", "the")] == 1 and evidence.pairs[("the", "art")] == 1
    assert evidence.pairs[("retrieval", "augmented")] == 1  # U+2010 is a hyphen too
    assert evidence.words["art"] == 1 and evidence.words["state"] == 1


def test_break_around_finds_the_word_pieces() -> None:
    text = f"(SELF{M}RAG) and 4{M}bit, x{M} y"
    marks = [i for i, ch in enumerate(text) if ch == M]
    assert [break_around(text, at) for at in marks] == [("SELF", "RAG"), ("4", "bit"), ("x", "")]


def test_decisions_are_per_page_in_mark_order_with_document_wide_evidence() -> None:
    pages = [
        f"We propose SELF{M}RAG and a paramet{M}ric memory.",
        f"Self-RAG uses parametric knowledge; a high{M}level view.",
        "No marks here.",
    ]
    assert decide_line_end_hyphens(pages) == [[True, False], [False], []]


# -- the evidence counted per distinct compound is the evidence counted per occurrence ---------

_PART = r"[^\W_]+"
_REFERENCE_COMPOUND = re.compile(rf"{_PART}(?:[-\u2010\u2011]{_PART})*")
_REFERENCE_SPLIT = re.compile("[-\u2010\u2011]")
_REFERENCE_LEFT = re.compile(rf"{_PART}\Z")


def _fold(word: str) -> str:
    return unicodedata.normalize("NFC", word).casefold()


def _reference_evidence(texts: list[str]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """HyphenEvidence.of as it walked every occurrence (extractor 4, before session 7)."""
    words: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for text in texts:
        for match in _REFERENCE_COMPOUND.finditer(text):
            parts = [_fold(p) for p in _REFERENCE_SPLIT.split(match.group())]
            usable = [True] * len(parts)
            if match.start() > 0 and text[match.start() - 1] == M:
                usable[0] = False
            if match.end() < len(text) and text[match.end()] == M:
                usable[-1] = False
            for i, part in enumerate(parts):
                if usable[i]:
                    words[part] += 1
                if i and usable[i - 1] and usable[i]:
                    pairs[(parts[i - 1], part)] += 1
    return words, pairs


@pytest.mark.parametrize("seed", range(200))
def test_evidence_and_break_pieces_match_the_walk_over_every_occurrence(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = ["a", "b", "Ab", "x1", "é", "\u00b2", "_", "-", "--", "\u2010", " ", ".", M, M, "\n"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3)]
    evidence = HyphenEvidence.of(texts)
    words, pairs = _reference_evidence(texts)
    assert +evidence.words == words and +evidence.pairs == pairs
    for text in texts:
        for at, ch in enumerate(text):
            if ch == M:
                before = _REFERENCE_LEFT.search(text, 0, at)
                assert break_around(text, at)[0] == (before.group() if before else "")
