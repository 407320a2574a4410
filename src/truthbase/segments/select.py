"""Which segments a related-segments call shows (pure): the model's pick, or hybrid search's.

- :func:`scope_entries`: the segments in scope, each with its short id in this call's records
  (``S1``, ``S2``, ... in reading order) and its document's title.
- The model's pick: :func:`batches` of :func:`record` lines (about ``max_tokens`` each; the
  prompt is :func:`truthbase.llm.prompts.build_select_messages`), and :func:`picked`, the
  records a reply names (lenient: ``S3``, or the bare numbers).
- Search's pick: :func:`unit_hits` (the hybrid hits in scope, per unit and summed per segment)
  and :func:`rank_by_search` (those sums, plus the summary cosine as a tie-breaker).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..records import SearchHit, Segment, StoredSegments
from .passages import Span, inside_segment, strip_tags

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_BATCHES",
    "PICKS_PER_BATCH",
    "SEARCH_DEPTH",
    "SEARCH_HITS",
    "SUMMARY_WEIGHT",
    "Entry",
    "UnitHits",
    "batches",
    "picked",
    "rank_by_search",
    "record",
    "scope_entries",
    "unit_hits",
]

#: The issue's limits of the model's pick: ids per batch, batches per call.
PICKS_PER_BATCH = 5
MAX_BATCHES = 5
#: Characters per token when sizing a batch of summaries (English prose, BPE tokenizers).
CHARS_PER_TOKEN = 4
#: Hybrid hits asked for: they are ranked over the whole library, so look deep enough to find
#: some in scope.
SEARCH_DEPTH = 100
#: Hybrid hits in scope looked at to find the related segments without a model.
SEARCH_HITS = 30
#: Weight of the summary cosine against the text hits when picking segments without a model.
SUMMARY_WEIGHT = 0.25

_ID = re.compile(r"\bS(\d{1,6})\b")
#: Lenient: a reply without any "S<n>" may name the records by their numbers alone.
_NUMBER = re.compile(r"(?<![\w.])(\d{1,6})(?!\w|\.\d)")

Vector = np.ndarray[Any, np.dtype[np.float32]]
#: The hybrid hits per (doc_id, unit) as (start, end, score).
UnitHits = dict[tuple[str, int], list[tuple[int, int, float]]]


@dataclass(frozen=True, slots=True)
class Entry:
    """One segment in scope: its short id in this call's records, its document's title."""

    key: str
    doc_title: str
    segment: Segment
    vector: Vector | None


def scope_entries(indexes: Sequence[tuple[str, StoredSegments]]) -> list[Entry]:
    """The segments of the (document title, segment index) pairs, numbered S1, S2, ..."""
    entries: list[Entry] = []
    for title, stored in indexes:
        for i, segment in enumerate(stored.segments):
            vector = stored.vectors[i] if stored.vectors is not None else None
            entries.append(Entry(f"S{len(entries) + 1}", title, segment, vector))
    return entries


def record(entry: Entry) -> str:
    """The entry as the model sees it: JSON {"id", "doc", "title", "summary"}, tags stripped."""
    return json.dumps(
        {
            "id": entry.key,
            "doc": entry.doc_title,
            "title": entry.segment.title,
            "summary": strip_tags(entry.segment.summary),
        },
        ensure_ascii=False,
    )


def batches(entries: Sequence[Entry], max_tokens: int) -> list[list[Entry]]:
    """Consecutive records in batches of at most ``max_tokens`` (estimated)."""
    out: list[list[Entry]] = []
    current: list[Entry] = []
    used = 0
    for entry in entries:
        cost = len(record(entry)) // CHARS_PER_TOKEN + 1
        if current and used + cost > max_tokens:
            out.append(current)
            current, used = [], 0
        current.append(entry)
        used += cost
    if current:
        out.append(current)
    return out


def picked(reply: str, batch: Sequence[Entry]) -> list[Entry]:
    """The entries of ``batch`` that the model's ``reply`` names, first named first, at most
    :data:`PICKS_PER_BATCH`; ids outside the batch are ignored."""
    keys = [f"S{m}" for m in _ID.findall(reply) or _NUMBER.findall(reply)]
    by_key = {e.key: e for e in batch}
    kept = [k for k in dict.fromkeys(keys) if k in by_key][:PICKS_PER_BATCH]
    return [by_key[k] for k in kept]


def unit_hits(
    entries: Sequence[Entry], hits: Sequence[SearchHit]
) -> tuple[UnitHits, dict[str, float]]:
    """The first :data:`SEARCH_HITS` hits in scope per (doc_id, unit), and their scores summed
    per segment (by entry key) of the segment each one starts in."""
    in_scope = {e.segment.doc_id for e in entries}
    per_unit: UnitHits = {}
    text_score: dict[str, float] = {}
    counted = 0
    for hit in hits:
        chunk = hit.chunk
        if chunk.doc_id not in in_scope:
            continue
        per_unit.setdefault((chunk.doc_id, chunk.unit), []).append(
            (chunk.start, chunk.end, hit.score)
        )
        for entry in entries:
            if entry.segment.doc_id == chunk.doc_id and inside_segment(
                Span(chunk.unit, chunk.start, chunk.start + 1), entry.segment
            ):
                text_score[entry.key] = text_score.get(entry.key, 0.0) + hit.score
                break
        counted += 1
        if counted >= SEARCH_HITS:
            break
    return per_unit, text_score


def rank_by_search(
    entries: Sequence[Entry], text_score: dict[str, float], query: Vector | None, limit: int
) -> list[Entry]:
    """Up to ``limit`` segments by the text hits' scores summed per segment, normalized to the
    best segment's, plus :data:`SUMMARY_WEIGHT` times the cosine of ``query`` (the question's
    vector; None when no entry has one) to each summary, min-max normalized over the scope.
    The text decides; summaries break ties and speak alone when no hit falls in scope."""
    scores = {e.key: 0.0 for e in entries}
    best_text = max(text_score.values(), default=0.0)
    if best_text > 0:
        for key, value in text_score.items():
            scores[key] += value / best_text
    with_vectors = [e for e in entries if e.vector is not None]
    if with_vectors and query is not None:
        matrix = np.vstack([e.vector for e in with_vectors if e.vector is not None])
        cosine = matrix @ query
        low, high = float(cosine.min()), float(cosine.max())
        if high > low:
            for entry, value in zip(with_vectors, cosine, strict=True):
                scores[entry.key] += SUMMARY_WEIGHT * (float(value) - low) / (high - low)
    order = sorted(entries, key=lambda e: -scores[e.key])  # stable: reading order on ties
    return [e for e in order if scores[e.key] > 0][:limit]
