"""Page-bound chunks of whole sentences, with character spans and per-line rects.

Sentences (see :mod:`truthbase.text.sentences`) are packed greedily up to ``max_chars`` per chunk.
The next chunk starts with the last sentences of the previous one whose span is at most
``overlap * max_chars`` characters, so a passage that straddles a chunk boundary is still whole in
one of them. A sentence longer than ``max_chars`` is cut at whitespace into pieces of at most the
overlap length (or ``max_chars`` without overlap), which the same packing then joins back into
overlapping chunks. A chunk never crosses a unit: one unit is one page.

Tables (``Unit.tables``, one line per row): each row is one atom beside the sentences, so a row
is never split across chunks, and a chunk of rows without its table's header row carries the
column names in ``ChunkDraft.context`` (not in its span, which citations use).

Results tables the extractor did not find (rows of values drawn without rules, read as plain
lines): a chunk that holds two such rows or more carries, in ``ChunkDraft.context``, the
table's caption and column names that it lacks (:class:`truthbase.text.results.ResultsPage`,
which reads each page once for all its chunks), so that a row is found by the words that name
its columns.

Figures (``Unit.figures``: the labels drawn inside a figure, see :mod:`truthbase.text.figures`):
a figure's text is packed into chunks of its own, never with the prose around it (still
searchable and highlightable; a prose chunk reads as prose). On a page with tables the figure
blocks are left to the sentence splitter, which cuts them off from every sentence.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from .geometry import span_line_rects
from .model import ChunkDraft, ChunkKind, Unit
from .text.results import ResultsPage
from .text.sentences import split_sentences

__all__ = ["chunk_spans", "chunk_unit", "chunk_units"]

# Long sentences are cut into pieces no shorter than this, whatever the overlap asks for.
_MIN_PIECE = 40


def _split_long(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut [start, end) at whitespace into pieces of at most ``limit`` characters.

    A single token longer than ``limit`` stays one piece.
    """
    pieces: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        if end - pos <= limit:
            pieces.append((pos, end))
            break
        cut = pos + limit  # the piece would be text[pos:cut]; look for whitespace at or before cut
        while cut > pos and not text[cut].isspace():
            cut -= 1
        if cut == pos:  # no whitespace: take the whole token
            cut = pos + limit
            while cut < end and not text[cut].isspace():
                cut += 1
        piece_end = cut
        while piece_end > pos and text[piece_end - 1].isspace():
            piece_end -= 1
        pieces.append((pos, piece_end))
        pos = cut
        while pos < end and text[pos].isspace():
            pos += 1
    return pieces


def _atoms(text: str, max_chars: int, overlap_chars: int) -> list[tuple[int, int]]:
    """Sentence spans, with sentences longer than ``max_chars`` cut into pieces."""
    piece = overlap_chars if overlap_chars >= _MIN_PIECE else max_chars
    piece = min(piece, max_chars)
    atoms: list[tuple[int, int]] = []
    for start, end in split_sentences(text):
        if end - start <= max_chars:
            atoms.append((start, end))
        else:
            atoms.extend(_split_long(text, start, end, piece))
    return atoms


def _check(max_chars: int, overlap: float) -> int:
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, not {max_chars}")
    if not 0.0 <= overlap < 1.0:
        raise ValueError(f"overlap must be in [0, 1), not {overlap}")
    return int(overlap * max_chars)


def _pack(atoms: list[tuple[int, int]], max_chars: int, overlap_chars: int) -> list[list[int]]:
    """Atoms packed greedily up to ``max_chars`` with overlap: each chunk as its atom indices.

    An atom longer than ``max_chars`` is a chunk alone (atoms are never split here).
    """
    chunks: list[list[int]] = []
    n = len(atoms)
    i = 0
    while i < n:
        first = atoms[i][0]
        j = i + 1
        while j < n and atoms[j][1] - first <= max_chars:
            j += 1
        chunks.append(list(range(i, j)))
        if j >= n:
            break
        # Carry the last atoms (at most overlap_chars in all) into the next chunk, as long as
        # that chunk still has room for the first atom that did not fit.
        k = j
        last_end = atoms[j - 1][1]
        while (
            k - 1 > i
            and last_end - atoms[k - 1][0] <= overlap_chars
            and atoms[j][1] - atoms[k - 1][0] <= max_chars
        ):
            k -= 1
        i = k
    return chunks


def chunk_spans(text: str, *, max_chars: int = 800, overlap: float = 0.15) -> list[tuple[int, int]]:
    """Chunk spans [start, end) of ``text``: packed sentences with overlap, in order."""
    overlap_chars = _check(max_chars, overlap)
    atoms = _atoms(text, max_chars, overlap_chars)
    return [(atoms[c[0]][0], atoms[c[-1]][1]) for c in _pack(atoms, max_chars, overlap_chars)]


def _draft(
    unit: Unit, start: int, end: int, kind: ChunkKind = "text", context: str = ""
) -> ChunkDraft:
    return ChunkDraft(
        unit=unit.index,
        start=start,
        end=end,
        text=unit.text[start:end],
        rects=tuple(span_line_rects(unit.text, unit.boxes, start, end)),
        kind=kind,
        context=context,
    )


def chunk_unit(unit: Unit, *, max_chars: int = 800, overlap: float = 0.15) -> list[ChunkDraft]:
    """Chunks of one unit (page): text is ``unit.text[start:end]``, rects one per rendered line.

    A unit with tables (``unit.tables``) packs the text's sentences and each table's rows as the
    same kind of atoms, so a small table stays with its caption, and a row is never split. A
    chunk that holds rows is of kind "table"; when it holds rows of a table but not that table's
    header row, it carries the column names as ``context`` (embedded and full-text indexed with
    it, outside its span, never cited).
    """
    if not unit.text.strip():
        return []
    page = ResultsPage(unit.text)
    if not unit.tables:
        return [
            _draft(unit, start, end, context=page.context(start, end))
            for start, end in _apart(unit.text, unit.figures, max_chars, overlap)
        ]
    overlap_chars = _check(max_chars, overlap)
    atoms: list[tuple[int, int]] = []
    # Per atom: (table index, row index) for a row, None for a sentence.
    rows_of: list[tuple[int, int] | None] = []
    pos = 0
    tables = sorted((t for t in unit.tables if t.rows), key=lambda t: t.rows[0][0])
    for t, table in enumerate(tables):
        for start, end in _region_atoms(unit.text, pos, table.rows[0][0], max_chars, overlap_chars):
            atoms.append((start, end))
            rows_of.append(None)
        for r, row in enumerate(table.rows):
            atoms.append(row)
            rows_of.append((t, r))
        pos = table.rows[-1][1]
    for start, end in _region_atoms(unit.text, pos, len(unit.text), max_chars, overlap_chars):
        atoms.append((start, end))
        rows_of.append(None)
    chunks: list[ChunkDraft] = []
    for members in _pack(atoms, max_chars, overlap_chars):
        rows = [rows_of[k] for k in members if rows_of[k] is not None]
        start, end = atoms[members[0]][0], atoms[members[-1]][1]
        if not rows:
            chunks.append(_draft(unit, start, end, context=page.context(start, end)))
            continue
        context = ""
        for t in dict.fromkeys(row[0] for row in rows if row is not None):
            table = tables[t]
            has_header = any(
                row is not None and row[0] == t and row[1] < table.header_rows for row in rows
            )
            if table.header and not has_header:
                context = table.header
                break
        chunks.append(_draft(unit, start, end, kind="table", context=context))
    return chunks


def _apart(
    text: str, figures: list[tuple[int, int]], max_chars: int, overlap: float
) -> list[tuple[int, int]]:
    """Chunk spans of ``text`` in which no chunk mixes a figure's text (``figures``: the
    spans of ``Unit.figures``) with prose: each figure block and each stretch of prose
    between them is packed on its own."""
    if not figures:
        return chunk_spans(text, max_chars=max_chars, overlap=overlap)
    overlap_chars = _check(max_chars, overlap)
    edges = [0, *(edge for block in sorted(figures) for edge in block), len(text)]
    out: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(edges):
        atoms = _region_atoms(text, start, end, max_chars, overlap_chars)
        out.extend(
            (atoms[c[0]][0], atoms[c[-1]][1]) for c in _pack(atoms, max_chars, overlap_chars)
        )
    return out


def _region_atoms(
    text: str, start: int, end: int, max_chars: int, overlap_chars: int
) -> list[tuple[int, int]]:
    """Sentence atoms of ``text[start:end]`` (the text between tables), as unit offsets."""
    region = text[start:end]
    if not region.strip():
        return []
    return [(start + s, start + e) for s, e in _atoms(region, max_chars, overlap_chars)]


def chunk_units(
    units: Iterable[Unit], max_chars: int = 800, overlap: float = 0.15
) -> list[ChunkDraft]:
    """Chunks of every unit, in unit order; units with only whitespace give none."""
    chunks: list[ChunkDraft] = []
    for unit in units:
        chunks.extend(chunk_unit(unit, max_chars=max_chars, overlap=overlap))
    return chunks
