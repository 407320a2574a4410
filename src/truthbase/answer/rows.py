"""Table rows as the extractive answerer quotes them.

A table row is a line of cells joined by :data:`~truthbase.extract.tables.CELL_SEPARATOR`. It has
no sentence end, so the sentence splitter runs a table's rows together, and a period inside a
cell ("Plexus Corp. | Fremont | 204") would cut one: :func:`rows_apart` makes each row one span
of its own, whole, so its cells stand together in one citation.

A row longer than an answer sentence may be (``extractive.max_chars``) cannot be quoted whole:
the CSF's Tiers table has rows of about 1,100 characters, three cells of several sentences each
("Tier 3: Repeatable | The organization's risk management practices are formally approved and
expressed as policy. Risk-informed policies, ... | There is an organization-wide approach
..."). Kept whole, such a row was never quoted at all, and "And at Tier 3?" could not cite
the sentence that answers it. Such a row is quoted by the sentences of its cells instead, each
*labelled* by the row's first cell ("Tier 3: Repeatable"): the words that say which row a
sentence belongs to, which the answerer scores with the sentence.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence

from ..extract.tables import CELL_SEPARATOR
from ..text.results import VALUE
from ..text.sentences import split_sentences
from ..text.vocabulary import terms
from .model import Source

__all__ = [
    "MAX_LABEL_CHARS",
    "PageNames",
    "column_names_by_page",
    "crosses_into",
    "header_rows",
    "holds_value",
    "names_row",
    "row_label",
    "row_spans",
    "rows_apart",
    "table_words",
]

Span = tuple[int, int]

#: A long row's first cell labels its other cells' sentences when it is at most this long ("Tier
#: 3: Repeatable", "Identity Management, Authentication, and Access Control (PR.AA)"); a longer
#: one is text of its own, not a label.
MAX_LABEL_CHARS = 120


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


#: A column's name is short ("Employees Affected", "持股比例"); a longer cell is text of its own.
MAX_COLUMN_NAME_CHARS = 40


def header_rows(text: str, rows: Sequence[Span]) -> set[Span]:
    """The rows of ``rows`` (:func:`row_spans`, in text order) that name a table's columns: the
    first row of a table, every cell short and without a digit, over
    a row that holds one ("Summary by Month | Notices | Employees Affected" over "July 2015 |
    71 | 8,574"). Such a row says what the values under it are; it holds none, so it answers no
    question about one. A table of words alone has no row told apart this way."""
    cells = [_cells(text, *row) for row in rows]
    out: set[Span] = set()
    for k, (row, below) in enumerate(itertools.pairwise(rows)):
        # A table starts where no row stands on the line above, or where the row above has
        # another number of cells (two tables the extractor ran together).
        first = (
            k == 0
            or text.count("\n", rows[k - 1][1], row[0]) != 1
            or len(cells[k - 1]) != len(cells[k])
        )
        if not first or text.count("\n", row[1], below[0]) != 1:
            continue
        names = [text[s:e] for s, e in cells[k]]
        if all(
            len(n) <= MAX_COLUMN_NAME_CHARS and not holds_value(n) for n in names
        ) and holds_value(text[below[0] : below[1]]):
            out.add(row)
    return out


def holds_value(text: str) -> bool:
    """Whether ``text`` holds a value (a digit): column names hold none, the rows under them
    do; and a row that holds one is read with its table (a number means nothing without its
    column's name), where a row of names ("Protect (PR) | Identity Management, ... | PR.AA")
    says what it says as written (read with its column names it outscored the sentence that
    defines it on dev.json: docs/evals/table-rows.md)."""
    return any(ch.isdigit() for ch in text)


def _stripped(text: str, start: int, end: int) -> Span:
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), end - (len(piece) - len(piece.rstrip()))


def _cells(text: str, start: int, end: int) -> list[Span]:
    """The row's cells, stripped, in order; an empty cell is an empty span. The row's span is
    stripped (:func:`row_spans`), so an empty first or last cell leaves a bare "|" at its edge:
    that is a separator too."""
    bounds: list[tuple[int, int]] = []  # (cell start, cell end) before stripping
    cursor = start
    if text.startswith("|", start) and (start + 1 == end or text[start + 1].isspace()):
        bounds.append((start, start))
        cursor = start + 1
    stop = end
    trailing = end - 1 > cursor and text[end - 1] == "|" and text[end - 2].isspace()
    if trailing:
        stop = end - 1
    while True:
        at = text.find(CELL_SEPARATOR, cursor, stop)
        bounds.append((cursor, stop if at < 0 else at))
        if at < 0:
            break
        cursor = at + len(CELL_SEPARATOR)
    if trailing:
        bounds.append((end, end))
    return [_stripped(text, a, b) for a, b in bounds]


def _sentences_of(text: str, start: int, end: int) -> list[Span]:
    spans = [_stripped(text, start + s, start + e) for s, e in split_sentences(text[start:end])]
    return [span for span in spans if span[0] < span[1]] or [(start, end)]


def _cell_sentences(text: str, start: int, end: int) -> tuple[list[Span], dict[Span, str]]:
    """A long row's spans: its first cell, then the sentences of each other cell, each of these
    labelled by the first cell's text (no label when the first cell is empty, or too long to be
    a label: then its sentences are spans like the others')."""
    cells = _cells(text, start, end)
    head = cells[0]
    label = text[head[0] : head[1]] if head[1] - head[0] <= MAX_LABEL_CHARS else ""
    spans: list[Span] = []
    labels: dict[Span, str] = {}
    if label:
        spans.append(head)
    elif head[0] < head[1]:
        spans.extend(_sentences_of(text, *head))
    for cell in cells[1:]:
        if cell[0] == cell[1]:
            continue
        for span in _sentences_of(text, *cell):
            spans.append(span)
            if label:
                labels[span] = label
    return spans, labels


def rows_apart(
    text: str, spans: Sequence[Span], rows: Sequence[Span], long_rows: Collection[Span] = ()
) -> tuple[list[Span], dict[Span, str]]:
    """``spans`` (the sentence splitter's, in text order) with each table row of ``rows`` (in
    text order) one span of its own, whole, or, for one of ``long_rows`` (too long to quote
    whole), the spans of its cells' sentences; and the label of each such cell sentence (the
    row's first cell). What a sentence holds outside rows stays."""
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
                if (r0, r1) in long_rows:
                    cell_spans, cell_labels = _cell_sentences(text, r0, r1)
                    out.extend(cell_spans)
                    labels.update(cell_labels)
                else:
                    out.append((r0, r1))
            cursor = max(cursor, r1)
        if text[cursor:e].strip():
            out.append(_stripped(text, cursor, e))
    return out, labels


def crosses_into(span: Span, rows: Sequence[Span]) -> bool:
    """Whether ``span`` overlaps one of ``rows`` without lying inside it: what
    :func:`~truthbase.answer.quotable.whole_spans` makes when it joins a line that ends nowhere
    with the first cell of a long row (whose spans are not rows, so no stop for the join)."""
    start, end = span
    return any(start < r1 and r0 < end and not (r0 <= start and end <= r1) for r0, r1 in rows)


# -- a row read with its table (docs/evals/table-rows.md) -----------------------------------
#
# A row holds the values and the one name that tells it from the others ("Kentucky | 264,140 |
# ..."); the words a question asks with ("permit checks", "November 2015") are its table's:
# its caption and column names. Read alone, the caption or the column names, which hold no
# value, outscored the row that answers. So a row of values that the question names is read
# (scored, embedded) after its table's words.

#: Column-name rows by (document, unit): unit start, unit end, text, number of cells.
PageNames = dict[tuple[str, int], list[tuple[int, int, str, int]]]


def column_names_by_page(
    sources: Sequence[Source], column_names: Sequence[Collection[Span]]
) -> PageNames:
    """The column-name rows of every source (``column_names``, each source's
    :func:`header_rows`), by document and unit: a table cut over two chunks has its column
    names in the first, its rows in the next."""
    out: PageNames = {}
    for source, spans in zip(sources, column_names, strict=True):
        for s, e in sorted(spans):
            names = out.setdefault((source.doc_id, source.unit), [])
            cells = source.text[s:e].count(CELL_SEPARATOR) + 1
            names.append((source.start + s, source.start + e, source.text[s:e], cells))
    return out


def _only_rows(text: str) -> bool:
    """Whether ``text`` (what lies between column names and a row) is table rows only."""
    return all(CELL_SEPARATOR in line for line in text.split("\n") if line.strip())


def table_words(source: Source, start: int, text: str, page_names: PageNames) -> str:
    """What the row ``text`` of ``source`` at unit offset ``start`` is read with: the chunk's
    context (its table's caption and column names) and the column names of its own table on
    the page: the nearest above it with as many cells, with nothing but rows between them (in
    this source, or in an earlier one when this source begins with rows: the same table cut
    over two chunks). Each line once."""
    cells = text.count(CELL_SEPARATOR) + 1
    lead = source.text[: start - source.start]
    names = ""
    for s, e, line, n in sorted(page_names.get((source.doc_id, source.unit), []), reverse=True):
        if e > start or n != cells:
            continue
        # Names in an earlier chunk: this one must begin with rows.
        between = (
            source.text[e - source.start : start - source.start] if s >= source.start else lead
        )
        names = line if _only_rows(between) else ""
        break
    lines = [*source.context.split("\n"), names] if source.context else [names]
    return "\n".join(dict.fromkeys(line for line in lines if line.strip()))


def row_label(text: str, label: str) -> str:
    """The words that tell a row from the others: a long row's label (its cell sentences'),
    else its first cell, else (a results row the extractor did not find) its words before its
    first value ("BM25 with RAPTOR" in "BM25 with RAPTOR 27.93% 21.17% ...")."""
    if label:
        return label
    if CELL_SEPARATOR in text:
        return text.split(CELL_SEPARATOR, 1)[0]
    words = text.split()
    lead = list(itertools.takewhile(lambda w: VALUE.fullmatch(w) is None, words))
    return " ".join(lead)


def names_row(asked: Collection[str], label: str) -> bool:
    """Whether a question whose terms are ``asked`` names the row labelled ``label``: the label
    holds one of them. A number names a row only as its whole label ("2019"), not as a piece of
    a date every row holds ("03/18/2016" for "in 2016")."""
    held = terms(label)
    if len(held) == 1:
        return held[0] in asked
    return any(t in asked and not t.isdigit() for t in held)
