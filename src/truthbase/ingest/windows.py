"""Sentence windows: the small spans inside a chunk that the dense arm embeds one by one.

A small sentence embedder (all-MiniLM-L6-v2) averages every token of its input into one vector,
so a chunk of 800 characters that holds one relevant sentence among six is a blurred vector, and a
question that paraphrases that sentence finds it poorly. The dense arm therefore embeds, besides
the whole chunk, windows of a few whole sentences (about ``window_chars`` characters, packed the
same way chunks are) and scores a chunk by its best vector (max-sim, as multi-vector retrievers
do). Windows live inside their chunk, so a window hit is a chunk hit, and the chunk stays the unit
that is ranked, cited and highlighted.

Pure: spans in, spans out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chunking import chunk_spans

__all__ = ["ChunkWindow", "chunk_windows", "context_text", "embedded_text", "with_context"]


@dataclass(frozen=True, slots=True)
class ChunkWindow:
    """A span of one chunk's unit text: ``chunk`` indexes the document's chunk list."""

    chunk: int
    start: int
    end: int


def chunk_windows(
    spans: Sequence[tuple[int, int]],
    unit_texts: Sequence[str],
    *,
    window_chars: int,
    overlap: float = 0.0,
) -> list[ChunkWindow]:
    """The sentence windows of each chunk ``spans[i]`` of text ``unit_texts[i]``.

    Offsets are unit offsets, like the chunk's. A chunk no longer than ``window_chars`` gets no
    window: its own vector already is one. ``window_chars`` 0 turns windows off.
    """
    if len(spans) != len(unit_texts):
        raise ValueError(f"{len(spans)} spans but {len(unit_texts)} texts")
    if window_chars < 0:
        raise ValueError(f"window_chars must be >= 0, not {window_chars}")
    windows: list[ChunkWindow] = []
    if window_chars == 0:
        return windows
    for index, ((start, end), text) in enumerate(zip(spans, unit_texts, strict=True)):
        if end - start <= window_chars:
            continue
        body = text[start:end]
        for w_start, w_end in chunk_spans(body, max_chars=window_chars, overlap=overlap):
            if body[w_start:w_end].strip():
                windows.append(ChunkWindow(chunk=index, start=start + w_start, end=start + w_end))
    return windows


def context_text(title: str, text: str) -> str:
    """The text to embed for a span of a document titled ``title``: the title as context.

    A chunk rarely names the document it comes from ("the framework", "our method"), while
    questions often do ("in the AI RMF", "Self-RAG's critic"); prefixing the title lets the
    embedding carry that context. An empty title leaves the text as it is.
    """
    title = " ".join(title.split())
    return f"{title}\n{text}" if title else text


def with_context(context: str, text: str) -> str:
    """A chunk's text with its context (``Chunk.context``, not in its span: a table's column
    names, a results table's caption) first: what ingest embeds for it, so that a row is found
    by the words that name its columns."""
    return f"{context}\n{text}" if context else text


def embedded_text(title: str, section: str, context: str, text: str) -> str:
    """What ingest embeds for a chunk (or one of its windows): the document title, the chunk's
    section path and its context (each only when there is one), then its text."""
    return context_text(title, with_context(section, with_context(context, text)))
