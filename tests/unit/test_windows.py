"""Sentence windows inside chunks, the title context, and max-sim grouping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from truthbase.chunking import chunk_spans
from truthbase.ingest.windows import ChunkWindow, chunk_windows, context_text
from truthbase.store.sqlite.search import group_starts

TEXT = (
    "The first sentence is here. A second one follows it closely. "
    "Then a third sentence ends the paragraph. A fourth closes the page."
)


def test_windows_lie_inside_their_chunk_and_cover_it() -> None:
    spans = chunk_spans(TEXT, max_chars=80, overlap=0.0)
    windows = chunk_windows(spans, [TEXT] * len(spans), window_chars=40)
    assert windows
    for window in windows:
        start, end = spans[window.chunk]
        assert start <= window.start < window.end <= end
        assert TEXT[window.start : window.end].strip()
    for index, (start, end) in enumerate(spans):
        own = [w for w in windows if w.chunk == index]
        if end - start > 40:
            assert own[0].start == start and own[-1].end == end


def test_a_chunk_no_longer_than_a_window_gets_none() -> None:
    assert chunk_windows([(0, 27)], [TEXT], window_chars=27) == []


def test_window_chars_zero_turns_windows_off() -> None:
    assert chunk_windows([(0, len(TEXT))], [TEXT], window_chars=0) == []


def test_offsets_are_unit_offsets() -> None:
    start = TEXT.index("A second")
    windows = chunk_windows([(start, len(TEXT))], [TEXT], window_chars=45)
    assert windows[0] == ChunkWindow(chunk=0, start=start, end=TEXT.index(" Then"))


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError):
        chunk_windows([(0, 1)], [], window_chars=10)
    with pytest.raises(ValueError):
        chunk_windows([(0, 1)], ["x"], window_chars=-1)


@given(st.text(alphabet="ab .\n", max_size=300), st.integers(min_value=5, max_value=120))
def test_windows_never_leave_their_chunk(text: str, size: int) -> None:
    spans = chunk_spans(text, max_chars=150, overlap=0.15) if text.strip() else []
    for window in chunk_windows(spans, [text] * len(spans), window_chars=size):
        start, end = spans[window.chunk]
        assert start <= window.start < window.end <= end


def test_context_text_prefixes_the_title() -> None:
    assert context_text("Self-RAG", "The critic.") == "Self-RAG\nThe critic."
    assert context_text("  A   long\ntitle ", "x") == "A long title\nx"
    assert context_text("", "x") == "x"


def test_group_starts() -> None:
    ids = np.array([3, 3, 5, 7, 7, 7], dtype=np.int64)
    assert group_starts(ids).tolist() == [0, 2, 3]
    assert group_starts(np.zeros(0, dtype=np.int64)).tolist() == []
    scores = np.array([0.1, 0.9, 0.2, 0.3, 0.8, 0.5], dtype=np.float32)
    assert np.maximum.reduceat(scores, group_starts(ids)).tolist() == pytest.approx([0.9, 0.2, 0.8])
