"""Chunking: packing, overlap, long sentences, geometry, and golden quotes inside chunks."""

from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.corpus import GOLDEN_DEV, SHARED
from truthbase.chunking import chunk_spans, chunk_unit, chunk_units
from truthbase.geometry import span_line_rects
from truthbase.model import Rect, Unit
from truthbase.text.matching import quote_in

# --- a quick pdfium adapter (the project's extractor is the real one) -------------------------


@cache
def _pdf_units(path: str) -> tuple[Unit, ...]:
    """Units straight from pdfium: CRLF to LF, U+FFFE removed, loose boxes, None if generated."""
    doc = pdfium.PdfDocument(path)
    units: list[Unit] = []
    try:
        for index in range(len(doc)):
            page = doc[index]
            textpage = page.get_textpage()
            raw = textpage.get_text_range()
            chars: list[str] = []
            boxes: list[Rect | None] = []
            for i, ch in enumerate(raw):
                if ch == "\ufffe" or (ch == "\r" and raw[i + 1 : i + 2] == "\n"):
                    continue
                chars.append(ch)
                if ch.isspace() or pdfium_c.FPDFText_IsGenerated(textpage.raw, i):
                    boxes.append(None)
                else:
                    boxes.append(textpage.get_charbox(i, loose=True))
            units.append(Unit(index=index, text="".join(chars), boxes=boxes))
            textpage.close()
            page.close()
    finally:
        doc.close()
    return tuple(units)


def _golden_pdf_evidence() -> list[tuple[str, int, str]]:
    """(pdf path, 0-based page, quote) for every PDF evidence record of the dev set."""
    golden = json.loads(GOLDEN_DEV.read_text(encoding="utf-8"))
    paths = {name: SHARED / doc["path"] for name, doc in golden["documents"].items()}
    out: list[tuple[str, int, str]] = []
    for question in golden["questions"]:
        for evidence in question["evidence"]:
            path = paths[evidence["doc"]]
            if "page" in evidence and path.suffix.lower() == ".pdf":
                out.append((str(path), evidence["page"] - 1, evidence["quote"]))
    return out


def quote_coverage(max_chars: int, overlap: float) -> tuple[float, list[str]]:
    """Share of golden PDF quotes inside at least one chunk of their page, and the misses."""
    evidence = _golden_pdf_evidence()
    misses: list[str] = []
    for path, page, quote in evidence:
        unit = _pdf_units(path)[page]
        spans = chunk_spans(unit.text, max_chars=max_chars, overlap=overlap)
        if not any(quote_in(quote, unit.text[s:e]) for s, e in spans):
            misses.append(f"{Path(path).stem} p{page + 1}: {quote[:60]}")
    return 1.0 - len(misses) / len(evidence), misses


# --- packing -----------------------------------------------------------------------------------


def _unit(text: str) -> Unit:
    boxes: list[Rect | None] = []
    x = 0.0
    y = 700.0
    for ch in text:
        if ch == "\n":
            boxes.append(None)
            x, y = 0.0, y - 12.0
        elif ch == " ":
            boxes.append(None)
            x += 5.0
        else:
            boxes.append((x, y, x + 5.0, y + 10.0))
            x += 5.0
    return Unit(index=3, text=text, boxes=boxes)


def _sentences(n: int, words: int = 12) -> str:
    return " ".join(
        f"Sentence {i} " + " ".join(f"w{i}x{j}" for j in range(words)) + "." for i in range(n)
    )


def test_short_unit_is_one_chunk() -> None:
    unit = _unit("  One sentence here. Another one.\n")
    (chunk,) = chunk_unit(unit)
    assert (chunk.start, chunk.end) == (2, 33)
    assert chunk.text == "One sentence here. Another one."
    assert chunk.unit == 3


def test_whitespace_unit_has_no_chunks() -> None:
    assert chunk_unit(_unit(" \n \n")) == []
    assert chunk_unit(_unit("")) == []


def test_chunks_pack_whole_sentences_within_limit() -> None:
    text = _sentences(40)
    chunks = chunk_unit(_unit(text), max_chars=400, overlap=0.15)
    assert len(chunks) > 5
    for chunk in chunks:
        assert len(chunk.text) <= 400
        assert chunk.text.startswith("Sentence ")
        assert chunk.text.endswith(".")


def test_consecutive_chunks_overlap_by_whole_sentences() -> None:
    text = _sentences(40, words=3)  # ~35 characters a sentence
    spans = chunk_spans(text, max_chars=400, overlap=0.25)
    for (s1, e1), (s2, e2) in itertools.pairwise(spans):
        assert s1 < s2 < e1 < e2
        assert e1 - s2 <= 100  # at most overlap * max_chars is repeated
        assert e1 - s2 >= 60  # and about that much
        assert text[s2 - 1] == " " and text[s2 - 2] == "."  # starts at a sentence


def test_no_overlap_chunks_touch() -> None:
    text = _sentences(30)
    spans = chunk_spans(text, max_chars=300, overlap=0.0)
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        assert e1 <= s2 and not text[e1:s2].strip()


def test_long_sentence_split_at_whitespace_with_overlap() -> None:
    text = "Intro sentence. " + " ".join(f"word{i}" for i in range(400)) + ". Outro."
    spans = chunk_spans(text, max_chars=300, overlap=0.2)
    assert all(e - s <= 300 for s, e in spans)
    for s, e in spans:
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert s == 0 or text[s - 1] == " "  # starts at a word
        assert e == len(text) or text[e] == " "  # ends at a word
    for (_, e1), (s2, _) in itertools.pairwise(spans):
        assert s2 < e1  # pieces of a long sentence overlap too


def test_unsplittable_token_is_its_own_chunk() -> None:
    token = "x" * 1000
    text = f"Before it. {token} After it."
    spans = chunk_spans(text, max_chars=200, overlap=0.15)
    assert (text.index(token), text.index(token) + 1000) in spans


def test_rects_and_text_come_from_the_span() -> None:
    unit = _unit(_sentences(3, words=4) + "\n" + _sentences(3, words=4))
    for chunk in chunk_unit(unit, max_chars=120, overlap=0.15):
        assert chunk.text == unit.text[chunk.start : chunk.end]
        expected = span_line_rects(unit.text, unit.boxes, chunk.start, chunk.end)
        assert chunk.rects == tuple(expected)
        assert chunk.rects


def test_chunk_units_keeps_pages_apart() -> None:
    units = [
        Unit(index=0, text="First page ends here", boxes=[None] * 20),
        Unit(index=1, text="   ", boxes=[None] * 3),
        Unit(index=2, text="continues here. Done.", boxes=[None] * 21),
    ]
    chunks = chunk_units(units, 800, 0.15)
    assert [(c.unit, c.text) for c in chunks] == [
        (0, "First page ends here"),
        (2, "continues here. Done."),
    ]


@pytest.mark.parametrize(("max_chars", "overlap"), [(0, 0.1), (100, -0.1), (100, 1.0)])
def test_bad_arguments(max_chars: int, overlap: float) -> None:
    with pytest.raises(ValueError):
        chunk_spans("Text.", max_chars=max_chars, overlap=overlap)


# --- properties --------------------------------------------------------------------------------

_pieces = st.sampled_from(
    ["Word", "word", "e.g.", "Fig. 3", "0.85", ". ", "? ", "\n", "\n\n", " ", "  ", "1. ",
     "• ", "- ", "GV.OC-01", "x" * 30, "“Quoted.” ", "(a) ", "U.S.", "Heading\n", "abc"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_pieces, max_size=120), max_chars=st.integers(20, 300),
       overlap=st.floats(0.0, 0.5))  # fmt: skip
def test_chunk_properties(parts: list[str], max_chars: int, overlap: float) -> None:
    text = "".join(parts)
    unit = _unit(text)
    chunks = chunk_unit(unit, max_chars=max_chars, overlap=overlap)
    covered = [False] * len(text)
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text == chunk.text.strip()
        if len(chunk.text) > max_chars:
            assert not any(ch.isspace() for ch in chunk.text)  # one unsplittable token
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
    for a, b in itertools.pairwise(chunks):
        assert a.start < b.start and a.end < b.end
        assert b.start <= a.end or not text[a.end : b.start].strip()  # overlap or touch


# --- real pages and the golden set -------------------------------------------------------------


@pytest.mark.corpus
def test_real_page_chunks() -> None:
    unit = _pdf_units(str(SHARED / "corpus/seed/nist-csf-2.0.pdf"))[10]
    chunks = chunk_unit(unit)
    assert 2 <= len(chunks) <= 5
    for chunk in chunks:
        assert len(chunk.text) <= 800
        assert 1 <= len(chunk.rects) <= 20
        for x0, y0, x1, y1 in chunk.rects:
            assert x0 < x1 and y0 < y1
    assert any(
        quote_in("A Community Profile is a baseline of CSF outcomes", c.text) for c in chunks
    )


@pytest.mark.corpus
@pytest.mark.parametrize("max_chars", [400, 600, 800, 1000])
def test_golden_quotes_inside_some_chunk(max_chars: int) -> None:
    share, misses = quote_coverage(max_chars, 0.15)
    print(f"max_chars={max_chars} overlap=0.15: {share:.1%} of golden PDF quotes inside a chunk")
    if max_chars >= 800:
        assert misses == [], misses
