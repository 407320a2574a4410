"""Table rows as the extractive answerer quotes them.

A table row is a line of cells joined by :data:`~truthbase.extract.tables.CELL_SEPARATOR`. It has
no sentence end, so the sentence splitter runs a table's rows together, and a period inside a
cell ("Plexus Corp. | Fremont | 204") would cut one: :func:`rows_apart` makes each row one span
of its own, whole, so its cells stand together in one citation.

A row longer than an answer sentence may be (``extractive.max_chars``) cannot be quoted whole:
the CSF's Tiers table has rows of about 1,100 characters, three cells of several sentences each
("Tier 3: Repeatable | The organization's risk management practices are formally approved and
expressed as policy. Risk-informed policies, ... | There is an organization-wide approach
..."). Quoted as a row it was never quoted at all, and "And at Tier 3?" could not cite the
sentence that answers it. Such a row is quoted by the sentences of its cells instead, each
*labelled* by the row's first cell ("Tier 3: Repeatable"): the words that say which row a
sentence belongs to, which the answerer scores with the sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..extract.tables import CELL_SEPARATOR
from ..text.sentences import split_sentences

__all__ = ["row_spans", "rows_apart"]

Span = tuple[int, int]


def row_spans(text: str) -> list[Span]:
    """The spans of ``text``'s table rows, in text order: lines of cells joined by
    :data:`~truthbase.extract.tables.CELL_SEPARATOR`, without their outer whitespace."""
    out: list[Span] = []
    start = 0
    for line in text.split("\n"):
        if CELL_SEPARATOR in line and line.strip():
            lead = len(line) - len(line.lstrip())
            out.append((start + lead, start + len(line.rstrip())))
        start += len(line) + 1
    return out


def _stripped(text: str, start: int, end: int) -> Span:
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), end - (len(piece) - len(piece.rstrip()))


def _cells(text: str, start: int, end: int) -> list[Span]:
    """The row's cells, stripped, empty ones left out."""
    out: list[Span] = []
    cursor = start
    while cursor <= end:
        at = text.find(CELL_SEPARATOR, cursor, end)
        stop = end if at < 0 else at
        cell = _stripped(text, cursor, stop)
        if cell[0] < cell[1]:
            out.append(cell)
        if at < 0:
            break
        cursor = at + len(CELL_SEPARATOR)
    return out


def _cell_sentences(text: str, start: int, end: int) -> tuple[list[Span], dict[Span, str]]:
    """A long row's spans: its first cell, then the sentences of each other cell, each of these
    labelled by the first cell's text."""
    cells = _cells(text, start, end)
    if not cells:
        return [], {}
    head = cells[0]
    label = text[head[0] : head[1]]
    spans: list[Span] = [head]
    labels: dict[Span, str] = {}
    for c0, c1 in cells[1:]:
        for s, e in split_sentences(text[c0:c1]) or [(0, c1 - c0)]:
            span = _stripped(text, c0 + s, c0 + e)
            if span[0] < span[1]:
                spans.append(span)
                labels[span] = label
    return spans, labels


def rows_apart(
    text: str, spans: Sequence[Span], rows: Sequence[Span], max_chars: int
) -> tuple[list[Span], dict[Span, str]]:
    """``spans`` (the sentence splitter's, in text order) with each table row of ``rows`` one
    span of its own, whole, or, for a row longer than ``max_chars``, the spans of its cells'
    sentences; and the label of each such cell sentence (the row's first cell). What a sentence
    holds outside rows stays."""
    if not rows:
        return list(spans), {}
    out: list[Span] = []
    labels: dict[Span, str] = {}
    taken: set[Span] = set()
    for s, e in spans:
        cursor = s
        for r0, r1 in rows:
            if r1 <= s or r0 >= e:
                continue
            if text[cursor:r0].strip():
                out.append(_stripped(text, cursor, r0))
            if (r0, r1) not in taken:
                taken.add((r0, r1))
                if r1 - r0 <= max_chars:
                    out.append((r0, r1))
                else:
                    cell_spans, cell_labels = _cell_sentences(text, r0, r1)
                    out.extend(cell_spans)
                    labels.update(cell_labels)
            cursor = max(cursor, r1)
        if text[cursor:e].strip():
            out.append(_stripped(text, cursor, e))
    return out, labels
