"""Which passages of the chosen segments one tool call shows, within the character cap (pure).

All of them when they fit in ``segments.tool_max_chars``; else the passages that match the
question best (a hybrid search hit on a passage outranks any term overlap, the segment's rank
breaks ties), kept in reading order per segment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model import Unit
from ..text.vocabulary import idf_table, terms, weighted_coverage
from .passages import Span, passages, segment_sentences
from .select import Entry, UnitHits

__all__ = [
    "SegmentPassages",
    "Shown",
    "Units",
    "best_passages",
    "every_passage",
    "fits",
    "segment_passages",
    "unit_text",
]

#: The stored units at hand, by (doc_id, unit index); None: not in the store.
Units = Mapping[tuple[str, int], Unit | None]
#: A chosen segment with its passages, in reading order.
SegmentPassages = tuple[Entry, list[Span]]


@dataclass(slots=True)
class Shown:
    """A segment and the passages of it that the tool output shows."""

    entry: Entry
    spans: list[Span]


def unit_text(units: Units, doc_id: str, index: int) -> str:
    unit = units.get((doc_id, index))
    return unit.text if unit is not None else ""


def segment_passages(chosen: Sequence[Entry], units: Units, size: int) -> list[SegmentPassages]:
    """Each chosen segment's sentences joined into passages of up to ``size`` characters."""
    out: list[SegmentPassages] = []
    for entry in chosen:
        doc_id = entry.segment.doc_id
        texts = {p.unit: unit_text(units, doc_id, p.unit) for p in entry.segment.parts}
        out.append((entry, passages(segment_sentences(entry.segment, texts), size)))
    return out


def fits(per_segment: Sequence[SegmentPassages], budget: int) -> bool:
    return sum(s.end - s.start for _, spans in per_segment for s in spans) <= budget


def every_passage(per_segment: Sequence[SegmentPassages]) -> list[Shown]:
    return [Shown(entry, spans) for entry, spans in per_segment if spans]


def best_passages(
    question: str,
    per_segment: Sequence[SegmentPassages],
    units: Units,
    hits: UnitHits,
    budget: int,
) -> list[Shown]:
    """The best matching passages up to ``budget`` characters, in reading order per segment."""
    flat = [(i, span) for i, (_, spans) in enumerate(per_segment) for span in spans]
    texts_of = [
        unit_text(units, per_segment[i][0].segment.doc_id, span.unit)[span.start : span.end]
        for i, span in flat
    ]
    passage_terms = [terms(t) for t in texts_of]
    idf, unseen = idf_table(passage_terms)
    wanted = terms(question)
    scores: list[float] = []
    for (i, span), words in zip(flat, passage_terms, strict=True):
        lexical = weighted_coverage(wanted, words, idf, unseen)
        doc_id = per_segment[i][0].segment.doc_id
        hit = max(
            (
                score
                for start, end, score in hits.get((doc_id, span.unit), [])
                if start < span.end and span.start < end
            ),
            default=0.0,
        )
        # A hybrid hit outranks any term overlap; the segment's rank breaks ties.
        scores.append(lexical + (10.0 * hit if hit > 0 else 0.0) - 1e-3 * i)
    order = sorted(range(len(flat)), key=lambda j: -scores[j])
    keep: set[int] = set()
    used = 0
    for j in order:
        length = flat[j][1].end - flat[j][1].start
        if used + length > budget:
            continue
        keep.add(j)
        used += length
    shown: list[Shown] = []
    for i, (entry, _) in enumerate(per_segment):
        spans = [span for j, (owner, span) in enumerate(flat) if owner == i and j in keep]
        if spans:
            shown.append(Shown(entry, spans))
    return shown
