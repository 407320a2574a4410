"""Sentences and tagged passages of a segment's text (pure).

A *span* is (unit, start, end) of canonical text; its position tag is ``[f{unit}-{start}-{end}]``
(the format is :mod:`truthbase.cite.tags`; :mod:`truthbase.cite.parse` reads it back).
Passages group whole consecutive sentences of one unit up to a size, so that a tool output
carries one tag per passage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..cite.tags import find_tags, format_tag, strip_tags
from ..records import Segment
from ..text.sentences import split_sentences

__all__ = [
    "Span",
    "inside_segment",
    "passages",
    "segment_sentences",
    "segment_size",
    "strip_tags",
    "tag",
    "tags_in",
]


class Span(NamedTuple):
    unit: int
    start: int
    end: int


def tag(span: Span) -> str:
    return format_tag(span.unit, span.start, span.end)


def tags_in(text: str) -> list[Span]:
    """The well-formed position tags of ``text``, in order (repeats kept)."""
    return [Span(*parts) for parts in find_tags(text)]


def segment_size(segment: Segment) -> int:
    return sum(p.end - p.start for p in segment.parts)


def inside_segment(span: Span, segment: Segment) -> bool:
    """Whether ``span`` is a non-empty range inside one of the segment's parts."""
    return any(
        p.unit == span.unit and p.start <= span.start < span.end <= p.end for p in segment.parts
    )


def segment_sentences(segment: Segment, texts: Mapping[int, str] | Sequence[str]) -> list[Span]:
    """The sentence spans of the segment's parts, in reading order."""
    spans: list[Span] = []
    for part in segment.parts:
        text = texts[part.unit]
        for start, end in split_sentences(text[part.start : part.end]):
            spans.append(Span(part.unit, part.start + start, part.start + end))
    return spans


def passages(sentences: Sequence[Span], max_chars: int) -> list[Span]:
    """Consecutive sentences of one unit joined while the passage stays within ``max_chars``
    (a longer sentence is a passage alone)."""
    out: list[Span] = []
    for sentence in sentences:
        if out:
            last = out[-1]
            if last.unit == sentence.unit and sentence.end - last.start <= max_chars:
                out[-1] = Span(last.unit, last.start, sentence.end)
                continue
        out.append(sentence)
    return out
